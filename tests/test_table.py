"""The count table against brute-force per-row sums, its validation messages, and
reading count tables from CSV / Parquet / JSON."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from calib.errors import CalibError
from calib.rows import Judgments
from calib.scale import Scale
from calib.table import from_counts, from_judgments, read_counts

EPS = 1e-15  # the documented log-loss clip


def rows_of(stated: np.ndarray, correct: np.ndarray, scale: Scale, group: np.ndarray | None = None) -> Judgments:
    n = stated.size
    return Judgments(
        stated=stated, prob=scale.to_prob(stated), correct=correct, line=np.arange(1, n + 1),
        item_id=np.array([str(i) for i in range(n)]), scale=scale, group=group,
    )


def brute(rows: Judgments, key) -> dict[tuple[str, object], dict[str, float]]:  # type: ignore[no-untyped-def]
    """Per-cell sums by an explicit loop over rows (the independent reference)."""
    cells: dict[tuple[str, object], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for i in range(len(rows)):
        g = "" if rows.group is None else str(rows.group[i])
        p = float(rows.prob[i])
        y = bool(rows.correct[i])
        c = cells[(g, key(float(rows.stated[i]), p))]
        c["n"] += 1
        c["correct"] += y
        c["p_sum"] += p
        c["py_sum"] += p if y else 0.0
        c["sq_sum"] += p * p
        pc = min(max(p, EPS), 1 - EPS)
        c["nll_sum"] += -math.log(pc) if y else -math.log(1 - pc)
    return cells


def check_against(table, cells, value_of) -> None:  # type: ignore[no-untyped-def]
    assert table.cells == len(cells)
    got = {}
    for j in range(table.cells):
        g = table.groups[table.group[j]]
        got[(g, value_of(float(table.value[j])))] = j
    assert set(got) == set(cells)
    for k, c in cells.items():
        j = got[k]
        assert table.n[j] == c["n"]
        assert table.correct[j] == c["correct"]
        assert table.prob[j] == pytest.approx(c["p_sum"] / c["n"], rel=1e-12, abs=1e-15)
        assert table.py_sum[j] == pytest.approx(c["py_sum"], rel=1e-12, abs=1e-12)
        assert table.sq_sum[j] == pytest.approx(c["sq_sum"], rel=1e-12, abs=1e-12)
        assert table.nll_sum[j] == pytest.approx(c["nll_sum"], rel=1e-10, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_discrete_values_one_cell_per_group_and_value(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3000
    stated = rng.choice([0, 10, 50, 70, 85, 90, 95, 99, 100], size=n).astype(float)
    correct = rng.random(n) < stated / 110
    group = rng.choice(["law", "math", "physics"], size=n) if seed % 2 else None
    rows = rows_of(stated, correct, Scale(0, 100, "0-100"), group)
    table = from_judgments(rows)
    assert not table.pooled
    check_against(table, brute(rows, lambda v, p: v), lambda v: v)
    # sorted by (group, value)
    keys = list(zip(table.group.tolist(), table.value.tolist(), strict=True))
    assert keys == sorted(keys)
    assert table.total == n and table.total_correct == int(correct.sum())


@pytest.mark.parametrize("seed", range(3))
def test_continuous_values_pool_on_the_grid_with_exact_sums(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = 5000
    p = rng.beta(5, 2, size=n)
    correct = rng.random(n) < p
    group = rng.choice(["a", "b"], size=n) if seed else None
    scale = Scale(0, 1, "0-1")
    rows = rows_of(p, correct, scale, group)
    table = from_judgments(rows)
    assert table.pooled

    def grid(v: float, q: float) -> int:  # cell i holds |q - i/1000| <= 0.0005
        return int(math.floor(q * 1000 + 0.5))

    cells = brute(rows, grid)
    check_against(table, cells, lambda v: int(round(v * 1000)))
    # every row lies within half a grid step of its cell's grid point
    assert np.all(np.abs(table.value - np.round(table.value * 1000) / 1000) < 1e-12)
    # exact totals survive pooling: sum p, Brier, log loss
    brier_rows = float(np.mean((p - correct) ** 2))
    brier_cells = float((table.sq_sum - 2 * table.py_sum + table.correct).sum() / table.total)
    assert brier_cells == pytest.approx(brier_rows, rel=1e-12)
    mean_rows = float(p.mean())
    assert float((table.prob * table.n).sum() / table.total) == pytest.approx(mean_rows, rel=1e-12)


def test_pooling_is_decided_per_group() -> None:
    # 101 distinct values per group stay exact; 102 in one group pool the whole table
    v101 = np.linspace(0, 1, 101)
    rows = rows_of(np.r_[v101, v101], np.ones(202, dtype=bool), Scale(0, 1, "0-1"), np.array(["a"] * 101 + ["b"] * 101))
    assert not from_judgments(rows).pooled
    v = np.r_[v101, 0.1234]
    assert from_judgments(rows_of(v, np.ones(102, dtype=bool), Scale(0, 1, "0-1"))).pooled


def test_select_and_pooled_over_groups_match_recomputation() -> None:
    rng = np.random.default_rng(5)
    stated = rng.choice([60, 70, 80, 90], size=400).astype(float)
    correct = rng.random(400) < 0.7
    group = rng.choice(["x", "y", "z"], size=400)
    scale = Scale(0, 100, "0-100")
    table = from_judgments(rows_of(stated, correct, scale, group))
    whole = from_judgments(rows_of(stated, correct, scale))
    merged = table.pooled_over_groups()
    for f in ("value", "n", "correct"):
        assert getattr(merged, f).tolist() == getattr(whole, f).tolist()
    for f in ("prob", "py_sum", "sq_sum", "nll_sum"):
        assert np.allclose(getattr(merged, f), getattr(whole, f), rtol=1e-12)
    y = table.select("y")
    m = group == "y"
    alone = from_judgments(rows_of(stated[m], correct[m], scale))
    assert y.groups == ("y",) and y.value.tolist() == alone.value.tolist() and y.n.tolist() == alone.n.tolist()


# ------------------------------------------------------------- from_counts
def test_from_counts_equals_the_rows_it_summarises() -> None:
    rng = np.random.default_rng(9)
    stated = rng.choice([1, 2, 3, 4, 5], size=500).astype(float)
    correct = rng.random(500) < 0.6
    scale = Scale(1, 5, "1-5")
    rows_table = from_judgments(rows_of(stated, correct, scale))
    values = np.array([1, 2, 3, 4, 5], dtype=float)
    n = np.array([(stated == v).sum() for v in values])
    k = np.array([(correct & (stated == v)).sum() for v in values])
    t = from_counts(values, n, k, scale=scale)
    assert t.value.tolist() == rows_table.value.tolist() and t.n.tolist() == rows_table.n.tolist()
    assert t.correct.tolist() == rows_table.correct.tolist()
    for f in ("prob", "py_sum", "sq_sum", "nll_sum"):
        assert np.allclose(getattr(t, f), getattr(rows_table, f), rtol=1e-12)


def test_from_counts_sums_repeated_cells_and_keeps_groups() -> None:
    t = from_counts(np.array([90, 90, 80, 90]), np.array([3, 2, 5, 4]), np.array([1, 2, 5, 0]),
                    scale=Scale(0, 100, "0-100"), group=np.array(["a", "a", "b", "b"]))
    assert t.groups == ("a", "b")
    assert list(zip(t.group.tolist(), t.value.tolist(), t.n.tolist(), t.correct.tolist(), strict=True)) == [
        (0, 90.0, 5, 3), (1, 80.0, 5, 5), (1, 90.0, 4, 0)]
    frame = t.to_frame()
    assert list(frame.columns) == ["group", "value", "n", "correct"]
    assert frame["group"].tolist() == ["a", "b", "b"]


@pytest.mark.parametrize(
    ("value", "n", "correct", "message"),
    [
        ([50, 60], [3, -1], [1, 0], "row 2: n must be a non-negative integer, got -1"),
        ([50, 60], [3, 2.5], [1, 0], "row 2: n must be a non-negative integer, got 2.5"),
        ([50, 60], [3, 2], [1, float("nan")], "row 2: correct must be a non-negative integer, got nan"),
        ([50, 60], [3, 2], [4, 0], r"row 1: correct \(4\) is larger than n \(3\)"),
        ([50, float("inf")], [3, 2], [1, 0], "row 2: value must be a finite number, got inf"),
        ([50, 101], [3, 2], [1, 0], r"row 2: value 101 is outside the 0-100 scale \[0, 100\]"),
    ],
)
def test_from_counts_validation_messages(value, n, correct, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CalibError, match=f"^{message}$"):
        from_counts(np.array(value, dtype=float), np.array(n), np.array(correct), scale=Scale(0, 100, "0-100"))


# ------------------------------------------------------------- read_counts
FRAME = pd.DataFrame({"group": ["m1", "m1", "m2"], "value": [90, 100, 90], "n": [10, 4, 7], "correct": [8, 3, 2]})


@pytest.mark.parametrize("ext", ["csv", "parquet", "json", "jsonl"])
def test_read_counts_formats(tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"counts.{ext}"
    if ext == "csv":
        FRAME.to_csv(path, index=False)
    elif ext == "parquet":
        FRAME.to_parquet(path)
    elif ext == "json":
        FRAME.to_json(path, orient="records")
    else:
        FRAME.to_json(path, orient="records", lines=True)
    t = read_counts(path, scale=Scale(0, 100, "0-100"))
    assert t.groups == ("m1", "m2")
    assert t.value.tolist() == [90, 100, 90] and t.n.tolist() == [10, 4, 7] and t.correct.tolist() == [8, 3, 2]
    same = read_counts(f"upload.{ext}", scale=Scale(0, 100, "0-100"), data=path.read_bytes())
    assert same.n.tolist() == t.n.tolist()


def test_read_counts_detects_the_scale_and_accepts_upper_case_columns(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text("VALUE,N,Correct\n0.9,10,8\n0.6,5,3\n")
    t = read_counts(path)
    assert t.scale.name == "0-1" and t.value.tolist() == [0.6, 0.9]


def test_read_counts_messages(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("value,count,correct\n90,3,1\n")
    with pytest.raises(CalibError, match=r"bad\.csv: a count table needs columns value, n, correct \(\+ optional group\); missing n; found value, count, correct"):
        read_counts(bad)
    neg = tmp_path / "neg.csv"
    neg.write_text("value,n,correct\n90,3,1\n80,2,5\n")
    with pytest.raises(CalibError, match=r"^neg\.csv: row 2: correct \(5\) is larger than n \(2\)$".replace("neg", ".*neg")):
        read_counts(neg)
    text = tmp_path / "text.csv"
    text.write_text("value,n,correct\n90,three,1\n")
    with pytest.raises(CalibError, match=r"text\.csv: "):
        read_counts(text)
    with pytest.raises(CalibError, match=r"x\.txt: a count table must be \.csv, \.parquet, \.json or \.jsonl"):
        read_counts(tmp_path / "x.txt")
    with pytest.raises(CalibError, match=r"broken\.parquet: cannot read as a count table"):
        read_counts("broken.parquet", data=b"not parquet at all")
