"""The count table against brute-force per-row sums, its validation messages, and
reading count tables from CSV / Parquet / JSON."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from calib import metrics
from calib.errors import CalibError
from calib.options import softmax
from calib.readers.counts import read_counts
from calib.rows import Judgments
from calib.scale import Scale, snap
from calib.table import MAX_EXACT_CELLS, from_counts, from_judgments

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
        # abs 1e-12: a cell reads its rows at their snapped value (calib.scale.snap, <= 5e-13 away)
        assert table.prob[j] == pytest.approx(c["p_sum"] / c["n"], rel=1e-12, abs=1e-12)
        assert table.py_sum[j] == pytest.approx(c["py_sum"], rel=1e-12, abs=1e-12 * c["n"])
        assert table.sq_sum[j] == pytest.approx(c["sq_sum"], rel=1e-12, abs=1e-12 * c["n"])
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
    exact = from_judgments(rows)
    assert not exact.pooled and exact.cells == np.unique(p).size  # one cell per distinct value
    table = exact.coarse()  # the table the bootstrap resamples
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
    # 101 distinct values per group are their own coarse table; 102 in one group pool the whole table
    v101 = np.linspace(0, 1, 101)
    rows = rows_of(np.r_[v101, v101], np.ones(202, dtype=bool), Scale(0, 1, "0-1"), np.array(["a"] * 101 + ["b"] * 101))
    assert not from_judgments(rows).coarse().pooled
    v = np.r_[v101, 0.1234]
    assert from_judgments(rows_of(v, np.ones(102, dtype=bool), Scale(0, 1, "0-1"))).coarse().pooled


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


# ------------------------------------------------------------- float noise
def noisy_forty_percent_logits() -> np.ndarray:
    """Logit vectors of four options whose top softmax probability is 0.4 exactly in
    real arithmetic: the top option ``ln 2`` above three at 0, or log-probabilities
    ``ln 0.4, ln 0.2 x 3``, at every position and shifted by constants. In floating
    point they give 0.4 and neighbours a few ulps away."""
    out = []
    for pos in range(4):
        for c in (0.0, 1.0, 2.5, -3.0, 100.0, -50.25):
            v = np.zeros(4)
            v[pos] = math.log(2)
            out.append(v + c)
            w = np.full(4, math.log(0.2))
            w[pos] = math.log(0.4)
            out.append(w + c)
    return np.array(out)


def test_softmax_noise_around_one_value_makes_one_cell() -> None:
    top = softmax(np.tile(noisy_forty_percent_logits(), (5, 1))).max(axis=1)
    assert np.unique(top).size > 1  # the noise this test is about is really there
    assert np.abs(top - 0.4).max() < 1e-15
    rng = np.random.default_rng(11)
    correct = rng.random(top.size) < 0.4
    scale = Scale(0, 1, "0-1")
    table = from_judgments(rows_of(top, correct, scale))
    assert not table.pooled
    assert table.value.tolist() == [0.4] and table.prob.tolist() == [0.4]
    assert table.n.tolist() == [top.size] and table.correct.tolist() == [int(correct.sum())]
    k, n = int(correct.sum()), top.size
    assert table.py_sum[0] == pytest.approx(0.4 * k, rel=1e-15)
    assert table.sq_sum[0] == pytest.approx(0.16 * n, rel=1e-15)
    assert table.nll_sum[0] == pytest.approx(-k * math.log(0.4) - (n - k) * math.log(0.6), rel=1e-14)
    # the same in a grouped table and in the sort path (many groups, few rows each)
    group = np.array(["a", "b"])[np.arange(n) % 2]
    grouped = from_judgments(rows_of(top, correct, scale, group))
    assert grouped.value.tolist() == [0.4, 0.4] and grouped.n.tolist() == [(n + 1) // 2, n // 2]
    many = np.array([f"g{i % 50}" for i in range(n)])
    sorted_path = from_judgments(rows_of(np.r_[top, np.linspace(0, 1, 101)], np.r_[correct, np.ones(101, bool)],
                                         scale, np.r_[many, np.array([f"h{i}" for i in range(101)])]))
    assert len(sorted_path.groups) * 102 > 4 * (n + 101) + 4096  # the sort path was taken
    assert sorted_path.cells == 50 + 101
    assert np.unique(sorted_path.value[sorted_path.group < 50]).tolist() == [0.4]
    assert sorted_path.prob[sorted_path.group < 50].tolist() == [0.4] * 50


def test_the_weak_sample_profile_has_one_distinct_value() -> None:
    from calib.loading import load

    ds = load(Path(__file__).parents[1] / "sample_data" / "logprobs_weak_calibrated_synthetic.jsonl")
    assert np.unique(ds.rows.stated).size == 2  # 0.4 and 0.4000000000000001 in the rows
    assert ds.table.value.tolist() == [0.4] and ds.table.n.tolist() == [300]


@pytest.mark.parametrize(
    ("values", "scale"),
    [
        ([0.4, 0.400001], Scale(0, 1, "0-1")),
        ([0.4, 0.4001], Scale(0, 1, "0-1")),
        ([0.4, 0.400000001], Scale(0, 1, "0-1")),
        ([95.0, 95.5], Scale(0, 100, "0-100")),
        ([95.0, 95.0001], Scale(0, 100, "0-100")),
        ([3.0, 3.5], Scale(1, 5, "1-5")),
    ],
)
def test_values_genuinely_apart_stay_apart(values: list[float], scale: Scale) -> None:
    stated = np.repeat(np.array(values), 3)
    table = from_judgments(rows_of(stated, np.array([True, False, True] * 2), scale))
    assert table.value.tolist() == values and table.n.tolist() == [3, 3]
    t = from_counts(np.array(values), np.array([3, 3]), np.array([2, 1]), scale=scale)
    assert t.value.tolist() == values


def test_snap_keeps_stated_decimals_bit_for_bit() -> None:
    for scale, values in (
        (Scale(0, 1, "0-1"), np.r_[np.arange(1001) / 1000, 0.123456789012, 0.4001, 1e-12]),
        (Scale(0, 100, "0-100"), np.r_[np.arange(101), np.arange(201) / 2, 99.99, 33.3333333333]),
        (Scale(1, 10, "1-10"), np.arange(10, 101) / 10),
        (Scale(1000, 1001, "1000-1001"), 1000 + np.arange(11) / 10),
    ):
        assert np.array_equal(snap(values, scale), values), scale.name
    assert snap(np.array([0.39999999999999997, 0.4000000000000001]), Scale(0, 1, "0-1")).tolist() == [0.4, 0.4]
    assert snap(np.array([95 - 1e-13, 95 + 1e-13]), Scale(0, 100, "0-100")).tolist() == [95.0, 95.0]
    assert math.copysign(1, float(snap(np.array([-1e-14]), Scale(-1, 1, "-1-1"))[0])) == 1.0


def test_metrics_of_a_noisy_table_equal_row_level_numpy() -> None:
    rng = np.random.default_rng(21)
    logits = noisy_forty_percent_logits()
    # three true values, each reached by noisy paths: 0.4 (above), 0.7 and 0.9 (divided back from %)
    top40 = softmax(logits[rng.integers(0, len(logits), 400)]).max(axis=1)
    pct = rng.choice([70, 90], size=600)
    other = np.where(pct == 70, (0.1 * 7) * (pct / 70), pct * 0.01)  # 0.7000000000000001, 0.9
    p = np.r_[top40, other, np.full(50, 0.3)]
    assert np.unique(p).size > 4
    true = np.round(p, 9)  # the value each row means
    y = rng.random(p.size) < true - 0.05
    table = from_judgments(rows_of(p, y, Scale(0, 1, "0-1")))
    assert table.value.tolist() == [0.3, 0.4, 0.7, 0.9]
    n = p.size
    assert metrics.accuracy(table) == pytest.approx(y.mean(), abs=1e-12)
    assert metrics.mean_confidence(table) == pytest.approx(p.mean(), abs=1e-12)
    assert metrics.brier(table) == pytest.approx(np.mean((p - y) ** 2), abs=1e-12)
    pc = np.clip(p, EPS, 1 - EPS)
    assert metrics.log_loss(table) == pytest.approx(-np.mean(np.where(y, np.log(pc), np.log1p(-pc))), abs=1e-12)
    # ECE per stated value: one bin per true value
    ece_values = sum(abs((p - y)[true == v].sum()) for v in np.unique(true)) / n
    assert metrics.ece(table, "values") == pytest.approx(ece_values, abs=1e-12)
    # ECE on 10 right-closed equal-width bins: 0.3 and 0.4 close the bins (0.2, 0.3] and
    # (0.3, 0.4], whichever side of them the noise fell
    width_bin = np.ceil(np.round(true * 10, 6)).astype(int) - 1
    ece_width = sum(abs((p - y)[width_bin == b].sum()) for b in np.unique(width_bin)) / n
    assert metrics.ece(table, "width", 10) == pytest.approx(ece_width, abs=1e-12)
    assert metrics.bin_index(table, "width", 10).tolist() == [2, 3, 6, 8]


def test_noise_does_not_count_toward_the_pooling_limit() -> None:
    v101 = np.linspace(0, 1, 101)
    noisy = v101 * (1 + 2 * np.finfo(float).eps)  # 100 of them move by a few ulps
    assert np.unique(np.r_[v101, noisy]).size > MAX_EXACT_CELLS
    table = from_judgments(rows_of(np.r_[v101, noisy], np.ones(202, dtype=bool), Scale(0, 1, "0-1")))
    assert not table.pooled and table.cells == 101 and set(table.n.tolist()) == {2}
    # pooled tables put noisy copies of a grid midpoint in one cell too
    p = np.r_[np.full(200, 0.0005), np.full(200, 0.0005 * (1 + 4 * np.finfo(float).eps)), np.linspace(0.2, 0.9, 300)]
    pooled = from_judgments(rows_of(p, np.ones(p.size, dtype=bool), Scale(0, 1, "0-1"))).coarse()
    assert pooled.pooled and pooled.n[0] == 400 and pooled.value[0] in (0.0, 0.001)


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


def test_a_gzipped_count_table_inflates_under_the_cap(tmp_path: Path) -> None:
    """A ``.csv.gz`` given to :func:`read_counts` directly is inflated under the
    decompression cap (before: ``gzip.decompress`` with no cap; a 1 MB bomb became 1 GB):
    a 20 MB table of zeros behind its header is refused by size while inflating, a small
    one is read as the plain CSV it holds."""
    import gzip

    good = tmp_path / "t.csv.gz"
    good.write_bytes(gzip.compress(b"value,n,correct\n80,10,6\n95,5,4\n"))
    t = read_counts(good, scale=Scale(0, 100, "0-100"))
    assert (t.total, int(t.correct.sum())) == (15, 10)
    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(b"value,n,correct\n" + b"0" * (20 * 2**20), compresslevel=9))
    assert bomb.stat().st_size < 2**20
    with pytest.raises(CalibError, match=r"bomb\.csv\.gz.*(MB|decompress)"):
        read_counts(bomb, max_decompressed=10 * 2**20)
