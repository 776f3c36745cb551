"""Traffic without outcomes: the reader and the label join, the plan, the estimates, the certificate.

Every expected figure is computed here independently: by hand, by brute force, or by ``ppi_py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from calib.labels.records import Label
from calib.traffic.plan import allocate, plan, plan_to_csv, strata
from calib.traffic.read import Traffic, join_labels


def _traffic(values: list[float], top: float = 100.0) -> Traffic:
    n = len(values)
    return Traffic("t", np.array([f"i{k}" for k in range(n)], dtype=object), np.asarray(values, float), top)


def _label(item: str, correct: bool, k: int, reviewer: str = "a") -> Label:
    return Label(item, correct, reviewer=reviewer, time=f"2026-12-01T10:{k // 60:02d}:{k % 60:02d}Z", kind="audit")


# ------------------------------------------------------------------ the plan
def test_allocation_is_the_brute_force_neyman_optimum_with_floor() -> None:
    size = np.array([40, 100, 7, 300])
    sd = np.array([0.5, 0.3, 0.45, 0.14])
    have = np.array([1, 0, 0, 3])
    budget = 12
    new = allocate(size, have, sd, budget, floor=2)
    best, arg = math.inf, None
    for cand in itertools.product(*(range(0, int(size[h] - have[h]) + 1) for h in range(2)),
                                  range(0, 8), range(0, 13)):
        c = np.array(cand)
        tot = have + c
        if c.sum() != budget or (tot < np.minimum(2, size)).any():
            continue
        v = float((size**2 * sd**2 / tot).sum())
        if v < best - 1e-12:
            best, arg = v, c
    assert arg is not None
    assert float((size**2 * sd**2 / (have + new)).sum()) == pytest.approx(best)


def test_inclusion_probabilities_match_the_draw() -> None:
    rng = np.random.default_rng(0)
    tr = _traffic(list(rng.choice([60, 80, 95], size=120, p=[0.2, 0.3, 0.5])))
    lab = join_labels(tr, [_label(f"i{k}", True, k) for k in range(0, 120, 10)])
    first = plan(tr, lab, 20, seed=0)
    st = strata(tr)
    labelled = lab.mask()
    for h in range(len(st)):
        pool = int(((st.of == h) & ~labelled).sum())
        planned = sum(1 for s in first.stratum if s == st.name(h, 100))
        probs = {p for p, s in zip(first.inclusion, first.stratum, strict=True) if s == st.name(h, 100)}
        assert probs <= {planned / pool}
    # empirically, over seeds, each unlabelled item is drawn with its stated probability
    counts: dict[str, int] = {}
    reps = 400
    for seed in range(reps):
        for i in plan(tr, lab, 20, seed=seed).ids:
            counts[i] = counts.get(i, 0) + 1
    stated = dict(zip(first.ids, first.inclusion, strict=True))
    for i, p in stated.items():
        assert abs(counts[i] / reps - p) < 4 * math.sqrt(p * (1 - p) / reps) + 1e-9
    assert not set(counts) & {f"i{k}" for k in range(0, 120, 10)}  # labelled items are never planned again


def test_plan_csv_is_spreadsheet_safe() -> None:
    tr = Traffic("t", np.array(["=cmd()", "b", "c"], dtype=object), np.array([90.0, 90.0, 50.0]), 100.0)
    text = plan_to_csv(plan(tr, None, 3, seed=1)).decode()
    assert '"\'=cmd()"' in text and "=cmd()" not in text.replace("'=cmd()", "")




def test_target_plan_gives_strata_below_the_focus_only_the_floor() -> None:
    # 100 items at each of 60, 70, 80, 90, 95; fitted errors among accepted from the stated value:
    # from 95: 5%, from 90: 7.5%, ...: with target 12%, half of it (6%) is first met from 95
    tr = _traffic([v for v in (60, 70, 80, 90, 95) for _ in range(100)])
    p = plan(tr, None, 50, target_error=0.12, seed=0)
    assert p.focus_from == "95"
    assert [r["planned"] for r in p.strata_rows] == [2, 2, 2, 2, 42]
