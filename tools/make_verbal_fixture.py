"""Write tests/data/verbal-5phrases.jsonl: 2,000 judged items whose confidence is one of five
phrases (very low ... very high), and one line with an unknown phrase.

The hit rate of each phrase and how often it is used are fixed below (a judge that says
"high" far more than it should, right 84% of the time when it does); the outcome of each
item is drawn with a fixed seed, so the file is the same on every run:

    python tools/make_verbal_fixture.py            # rewrites the fixture
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

PHRASES = ("very low", "low", "medium", "high", "very high")
#: How often the judge uses each phrase, and the true chance it is right when it does.
USE = (0.05, 0.10, 0.20, 0.40, 0.25)
HIT = (0.30, 0.50, 0.70, 0.84, 0.97)
N = 2000
#: Line of the unknown phrase (a bad line the reader must name).
BAD_LINE = 777
SEED = 26
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "verbal-5phrases.jsonl"


def main() -> None:
    rng = np.random.default_rng(SEED)
    which = rng.choice(len(PHRASES), size=N, p=USE)
    right = rng.random(N) < np.asarray(HIT)[which]
    lines = []
    for i, (k, y) in enumerate(zip(which, right, strict=True)):
        # spelled as judges write them: some capitalised, some with a hyphen
        text = PHRASES[k] if i % 3 else PHRASES[k].title().replace(" ", "-" if i % 2 else " ")
        lines.append(json.dumps({"id": f"v{i:04d}", "confidence": text, "correct": bool(y)}))
    lines.insert(BAD_LINE - 1, json.dumps({"id": "bad", "confidence": "kinda sure", "correct": True}))
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({N:,} items and 1 unknown phrase at line {BAD_LINE})")


if __name__ == "__main__":
    main()
