"""The multinomial count-table bootstrap: exactness in distribution, seeding,
percentile intervals."""

from __future__ import annotations

import numpy as np
import pytest

from calib import bootstrap as b
from calib import metrics as m
from calib.rows import Judgments
from calib.scale import Scale
from calib.table import from_counts, from_judgments

PCT = Scale(0.0, 100.0, "0-100")


def judge(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    v = rng.choice([60, 70, 80, 85, 90, 95, 100], size=n, p=[.05, .05, .1, .1, .2, .4, .1]).astype(float)
    return v, rng.random(n) < 0.1 + 0.7 * v / 100


def table_of(v: np.ndarray, y: np.ndarray):  # type: ignore[no-untyped-def]
    n = v.size
    return from_judgments(Judgments(stated=v, prob=v / 100, correct=y, line=np.arange(n), item_id=np.full(n, ""),
                                    scale=PCT))


def test_resample_counts_shape_totals_and_seed() -> None:
    t = table_of(*judge(0, 300))
    n, k = b.resample_counts(t, 50, seed=4)
    assert n.shape == k.shape == (50, t.cells) and n.dtype == np.int64
    assert (n.sum(axis=1) == t.total).all() and (k <= n).all() and (k >= 0).all()
    n2, k2 = b.resample_counts(t, 50, seed=4)
    assert (n == n2).all() and (k == k2).all()
    n3, _ = b.resample_counts(t, 50, seed=5)
    assert not (n == n3).all()


def many_values(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A model stating ~500 values on a 0-1000 scale: about one row per cell."""
    rng = np.random.default_rng(seed)
    v = rng.integers(500, 1001, size=n).astype(float)
    return v, rng.random(n) < v / 1000 - 0.1


@pytest.mark.parametrize("rows_drawn", [False, True], ids=["multinomial", "row-by-row"])
def test_cell_resampling_matches_a_row_level_bootstrap_in_distribution(rows_drawn: bool) -> None:
    if rows_drawn:
        v, y = many_values(1, 400)
        t = from_judgments(Judgments(stated=v, prob=v / 1000, correct=y, line=np.arange(v.size),
                                     item_id=np.full(v.size, ""), scale=Scale(0.0, 1000.0, "0-1000")))
        v = v / 10  # on the 0-100 scale of the row-level check below
    else:
        v, y = judge(1, 400)
        t = table_of(v, y)
    live = int((t.correct > 0).sum() + (t.n - t.correct > 0).sum())
    assert (t.total <= b.ROW_DRAW_RATIO * live) is rows_drawn
    reps = 4000
    n, k = b.resample_counts(t, reps, seed=0)
    acc_cells = k.sum(axis=1) / t.total
    stats = m.CellStats.resampled(t, n, k)
    brier_cells = (stats.sq - 2 * stats.py + stats.k).sum(axis=1) / t.total
    rng = np.random.default_rng(1)
    idx = rng.integers(0, v.size, size=(reps, v.size))  # the textbook bootstrap, on rows
    acc_rows = y[idx].mean(axis=1)
    brier_rows = ((v[idx] / 100 - y[idx]) ** 2).mean(axis=1)
    for a, r in ((acc_cells, acc_rows), (brier_cells, brier_rows)):
        se = r.std() / np.sqrt(reps)
        assert abs(a.mean() - r.mean()) < 4 * np.sqrt(2) * se
        assert a.std() == pytest.approx(r.std(), rel=0.08)
    # and the analytic bootstrap variance of a proportion, p (1 - p) / N
    p = y.mean()
    assert acc_cells.std() == pytest.approx(np.sqrt(p * (1 - p) / v.size), rel=0.08)


def test_intervals_contain_the_point_estimate_on_typical_data() -> None:
    v, y = judge(2, 1500)
    t = table_of(v, y | (v == 100))  # no wrong answer at 100, which leaves Cox without a fit
    plan = m.Plan.of(t)
    point = {k: float(v[0]) for k, v in m.batch_metrics(m.CellStats.of(t), plan).items()}
    boot = b.bootstrap(t, plan=plan, reps=1000, seed=0)
    for name in m.BATCH_METRICS:
        lo, hi = boot.ci(name)
        assert lo is not None and lo <= point[name] <= hi, name


def test_bootstrap_is_seeded_and_chunking_does_not_change_it(monkeypatch: pytest.MonkeyPatch) -> None:
    t = table_of(*judge(3, 500))
    a = b.bootstrap(t, reps=300, seed=9)
    monkeypatch.setattr(b, "CHUNK_CELLS", 7 * 37)  # 37 resamples per chunk
    c = b.bootstrap(t, reps=300, seed=9)
    for name in m.BATCH_METRICS:
        np.testing.assert_allclose(a.samples[name], c.samples[name], rtol=2e-5, atol=1e-12, err_msg=name)
        assert a.samples[name].shape == (300,)


def test_percentile_interval() -> None:
    s = np.arange(1, 1001, dtype=float)
    assert b.percentile_interval(s, 0.9) == pytest.approx((np.quantile(s, 0.05), np.quantile(s, 0.95)))
    s[:50] = np.nan  # 5% undefined: interval over the rest
    assert b.percentile_interval(s, 0.9)[0] == pytest.approx(np.quantile(s[50:], 0.05))
    s[:200] = np.nan  # 20% undefined: no interval
    assert b.percentile_interval(s, 0.9) == (None, None)
    assert b.percentile_interval(np.zeros(0)) == (None, None)


def test_undefined_metrics_give_no_interval() -> None:
    # 2 wrong answers in 400: many resamples have no wrong answer, so AUROC is often undefined
    t = from_counts(np.array([80.0, 90.0]), np.array([200, 200]), np.array([199, 199]), scale=PCT)
    boot = b.bootstrap(t, reps=400, seed=0)
    assert np.isnan(boot.samples["auroc"]).mean() > 0.1
    assert boot.ci("auroc") == (None, None)
    assert boot.ci("accuracy")[0] is not None


def test_empty_table_resamples_to_zeros() -> None:
    t = from_counts(np.array([50.0]), np.array([0]), np.array([0]), scale=PCT)
    n, k = b.resample_counts(t, 5, seed=0)
    assert n.sum() == 0 and k.sum() == 0


def test_draws_are_reused_read_only_and_equal_to_fresh_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(b, "_draw_cache", type(b._draw_cache)())
    t = table_of(*judge(0, 300))
    first = b.resample_counts(t, 300, 7)
    again = b.resample_counts(t, 300, 7)
    assert again[0] is first[0] and again[1] is first[1]
    with pytest.raises(ValueError, match="read-only"):
        first[0][0, 0] = 1
    # what was handed out is what a fresh draw with the same seed gives
    fresh_n, fresh_k = b._draw(t, 300, 7)
    np.testing.assert_array_equal(first[0], fresh_n)
    np.testing.assert_array_equal(first[1], fresh_k)
    # other counts, seed or reps: other draws
    other = from_counts(t.value, t.n, np.minimum(t.correct + 1, t.n), scale=t.scale)
    assert not np.array_equal(b.resample_counts(other, 300, 7)[1], first[1])
    assert not np.array_equal(b.resample_counts(t, 300, 8)[0], first[0])
    assert b.resample_counts(t, 200, 7)[0].shape == (200, t.cells)
    assert len(b._draw_cache) == b.DRAW_CACHE_ENTRIES


def test_large_draws_are_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(b, "_draw_cache", type(b._draw_cache)())
    monkeypatch.setattr(b, "DRAW_CACHE_MAX_ELEMENTS", 10)
    t = table_of(*judge(0, 300))
    n1, _ = b.resample_counts(t, 50, 1)
    n2, _ = b.resample_counts(t, 50, 1)
    assert n1 is not n2 and np.array_equal(n1, n2) and not b._draw_cache


def test_draws_in_slices_equal_one_multinomial_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # cells with only right answers (95, 100), only wrong ones (60) and both
    t = from_counts(np.array([60.0, 70, 80, 95, 100]), np.array([7, 30, 50, 90, 40]), np.array([0, 12, 35, 90, 40]),
                    scale=PCT)
    counts = np.concatenate([t.correct, t.n - t.correct]).astype(np.float64)
    live = counts > 0
    assert not live.all()  # empty sub-cells are left out of the draw and stay 0
    draw = np.random.default_rng(9).multinomial(t.total, counts[live] / t.total, size=257)
    one = np.zeros((257, counts.size), dtype=np.int64)
    one[:, live] = draw
    monkeypatch.setattr(b, "DRAW_SLICE", 3 * int(live.sum()) + 1)  # slices of 3 resamples, the last of 2
    n, k = b._draw(t, 257, 9)
    np.testing.assert_array_equal(k, one[:, :t.cells])
    np.testing.assert_array_equal(n, one[:, :t.cells] + one[:, t.cells:])


def test_row_by_row_draws_keep_totals_and_leave_empty_sub_cells_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(b, "_draw_cache", type(b._draw_cache)())
    v, y = many_values(4, 300)
    t = from_judgments(Judgments(stated=v, prob=v / 1000, correct=y, line=np.arange(v.size),
                                 item_id=np.full(v.size, ""), scale=Scale(0.0, 1000.0, "0-1000")))
    monkeypatch.setattr(b, "DRAW_SLICE", 1000)  # several slices of 3 resamples
    n, k = b.resample_counts(t, 101, seed=3)
    assert n.shape == (101, t.cells) and (n.sum(axis=1) == t.total).all()
    assert (k <= n).all() and (k[:, t.correct == 0] == 0).all() and (n - k)[:, t.n == t.correct].sum() == 0
    assert np.array_equal(b._draw(t, 101, 3)[0], n) and not np.array_equal(b._draw(t, 101, 4)[0], n)


def test_a_small_audit_warns_that_its_percentile_intervals_run_narrow() -> None:
    # issue 22: at n = 30-50 with 2-3 stated values the 95% percentile intervals covered 87-92%
    # (bench/sim_coverage.py --only "small n") and nothing said so
    from calib.audit import audit

    rng = np.random.default_rng(7)
    for n, warned in ((40, True), (b.SMALL_SAMPLE, False)):
        v = rng.choice([60.0, 90.0], n)
        a = audit(table_of(v, rng.random(n) < v / 100 - 0.05), reps=200)
        assert any("run narrow" in s for s in a.notes) is warned
    assert not any("run narrow" in s for s in audit(table_of(v[:40], v[:40] > 70), reps=0).notes)


def _continuous_table(n: int = 3_000, seed: int = 5):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.3, 0.99, n)
    rows = Judgments(stated=p, prob=p, correct=rng.random(n) < p * 0.9, line=np.arange(n),
                     item_id=np.full(n, ""), scale=Scale(0.0, 1.0, "0-1"))
    return from_judgments(rows)


def test_draws_handed_in_are_the_draws_the_bootstrap_would_make() -> None:
    t = _continuous_table()
    b._draw_cache.clear()
    own = b.bootstrap(t, reps=300, seed=4)
    b._draw_cache.clear()
    handed = b.bootstrap(t, reps=300, seed=4, draws=b.resample_counts(t.coarse(), 300, 4))
    assert own.samples.keys() == handed.samples.keys()
    for k in own.samples:
        np.testing.assert_array_equal(own.samples[k], handed.samples[k], err_msg=k)
    with pytest.raises(ValueError, match="300 resamples"):
        b.bootstrap(t, reps=300, seed=4, draws=b.resample_counts(t.coarse(), 299, 4))


def test_the_audit_on_two_threads_equals_the_audit_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second thread (Cox fit, the bootstrap's draws, the goodness-of-fit null) changes
    no figure: the audit of a table above ``BESIDE_FROM_CELLS`` run in one thread."""
    import calib.audit as a

    t = _continuous_table()
    assert t.cells >= a.BESIDE_FROM_CELLS
    b._draw_cache.clear()
    threaded = a.audit(t, reps=300, seed=2).to_dict()
    monkeypatch.setattr(a, "BESIDE_FROM_CELLS", t.cells + 1)
    b._draw_cache.clear()
    assert a.audit(t, reps=300, seed=2).to_dict() == threaded
