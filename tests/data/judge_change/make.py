"""Write the small runs of tests/data/judge_change/ (issue 28's browser test): run with
``python tests/data/judge_change/make.py`` from the repository root; seeded, so the files
written are the ones committed.

- ``drift_old.jsonl`` / ``drift_new.jsonl``: one judge on 400 shared items (ids ``q000`` ..).
  Planted: the system changed the answer to 120 items (now right with probability 0.45,
  before 0.85), and the judge moved its scale on the other 280 (each stated value one step
  up), so both the judge and the system move accuracy among
  accepted at threshold 80; 60 disappears, 98 appears.
- ``cascade_cheap.jsonl``, ``cascade_mid.jsonl``, ``cascade_strong.jsonl``: three judges on
  the same 1,000 items (ids ``c0000`` ..), the cheap one noisy, the strong one sharp; priced
  0.01, 0.1 and 1 per call with a person at 10, a chain of them is certified at a target
  error of 0.1 where the cheap judge alone is not.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OLD_VALUES = np.array([60, 70, 80, 90, 95])
NEW_VALUES = {60: 70, 70: 80, 80: 90, 90: 95, 95: 98}  # the judge's scale, one step up


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def drift_pair(rng: np.random.Generator, n: int = 400, changed: int = 120) -> None:
    stated = rng.choice(OLD_VALUES, n)
    right = rng.random(n) < stated / 100
    ids = [f"q{i:03d}" for i in range(n)]
    swap = np.zeros(n, bool)
    swap[rng.choice(n, changed, replace=False)] = True
    old = [{"id": ids[i], "confidence": int(stated[i]), "correct": bool(right[i])} for i in range(n)]
    new = []
    for i in range(n):
        if swap[i]:  # a new answer, judged afresh
            s = int(rng.choice(OLD_VALUES[1:]))  # the new system's answers never draw a 60
            new.append({"id": ids[i], "confidence": s, "correct": bool(rng.random() < 0.45)})
        else:  # the same answer, the judge's scale moved
            new.append({"id": ids[i], "confidence": NEW_VALUES[int(stated[i])], "correct": bool(right[i])})
    _write(HERE / "drift_old.jsonl", old)
    _write(HERE / "drift_new.jsonl", new)


def cascade_judges(rng: np.random.Generator, n: int = 1000) -> None:
    right = rng.random(n) < 0.8
    ids = [f"c{i:04d}" for i in range(n)]
    for name, sharpness in (("cheap", 0.8), ("mid", 1.6), ("strong", 3.0)):
        score = sharpness * (2 * right - 1) + rng.normal(0, 1, n)
        stated = np.clip(np.round(50 + 12 * score), 0, 100).astype(int)
        _write(HERE / f"cascade_{name}.jsonl",
               [{"id": ids[i], "confidence": int(stated[i]), "correct": bool(right[i])} for i in range(n)])


if __name__ == "__main__":
    drift_pair(np.random.default_rng(28))
    cascade_judges(np.random.default_rng(2028))
