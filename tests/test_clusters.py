"""Clustered rows (calib.clusters): the cluster bootstrap against brute force, cell
merging against direct recomputation, design effects against row-level sums, cluster
inference in the readers, the command-line flag, and a fixed-seed miniature of the
coverage failure of the row bootstrap on clustered data (bench/sim_clusters.py holds
the full simulation)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from calib import clusters as C
from calib.errors import CalibError
from calib.estimates import WILSON
from calib.loading import load
from calib.metrics.values import CLUSTERED_WILSON
from calib.readers.base import LoadOptions

DATA = Path(__file__).parent / "data"
JSON_JSON = next((DATA / "inspect-0.3.285").glob("*calib-mc-json*.json"))


def rows_of(clusters: C.Clusters) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each cluster as dense (n, k) tuples, in order."""
    n, k = clusters.n.toarray(), clusters.k.toarray()
    return [(tuple(a), tuple(b)) for a, b in zip(n, k, strict=True)]


def random_rows(seed: int, G: int = 30, cells: int = 6, m: int = 4) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    cluster = rng.integers(0, G, size=G * m)
    cell = rng.integers(0, cells, size=G * m)
    y = rng.random(G * m) < 0.6
    return cluster, cell, y


# ------------------------------------------------------------------ build
def test_build_counts_each_cluster_and_cell() -> None:
    cluster, cell, y = random_rows(0)
    cl = C.build(cluster, cell, y, 6, "test")
    labels = np.unique(cluster.astype(str))
    assert cl.count == labels.size and cl.how == "test"
    for g, lab in enumerate(labels):
        mine = cluster.astype(str) == lab
        assert cl.n[g].toarray().ravel().tolist() == np.bincount(cell[mine], minlength=6).tolist()
        assert cl.k[g].toarray().ravel().tolist() == np.bincount(cell[mine], weights=y[mine], minlength=6).tolist()


# -------------------------------------------------------------- bootstrap
def _exact_pmf(patterns: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> dict[tuple[int, ...], float]:
    """Brute force: every ordered pick of G clusters with replacement, equally likely."""
    G = len(patterns)
    pmf: Counter[tuple[int, ...]] = Counter()
    for pick in itertools.product(range(G), repeat=G):
        n = np.sum([patterns[i][0] for i in pick], axis=0)
        k = np.sum([patterns[i][1] for i in pick], axis=0)
        pmf[tuple(n) + tuple(k)] += 1
    return {key: c / G**G for key, c in pmf.items()}


def test_draw_has_the_distribution_of_resampling_clusters() -> None:
    # four clusters, two of them identical (drawn as one pattern), over three cells
    cluster = np.array([0, 0, 0, 1, 1, 2, 2, 3, 3, 3, 3])
    cell = np.array([0, 1, 1, 0, 2, 0, 2, 1, 1, 2, 2])
    y = np.array([1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0], dtype=bool)
    cl = C.build(cluster, cell, y, 3, "t")
    assert rows_of(cl)[1] == rows_of(cl)[2]
    exact = _exact_pmf(rows_of(cl))
    reps = 40_000
    n, k = C.draw(cl, reps, seed=3)
    seen = Counter(tuple(a) + tuple(b) for a, b in zip(n.tolist(), k.tolist(), strict=True))
    assert set(seen) <= set(exact)
    for key, p in exact.items():
        se = np.sqrt(p * (1 - p) / reps)
        assert abs(seen[key] / reps - p) < 5 * se + 1e-4, key


def test_draw_moments_match_the_multinomial_weights() -> None:
    # w ~ Multinomial(G, 1/G): E[w @ N] = column sums, Cov = G * (population covariance of the rows)
    cluster, cell, y = random_rows(1, G=25)
    cl = C.build(cluster, cell, y, 6, "t")
    rows = np.hstack([cl.n.toarray(), cl.k.toarray()]).astype(float)
    G = rows.shape[0]
    n, k = C.draw(cl, 20_000, seed=5)
    both = np.hstack([n, k]).astype(float)
    assert np.allclose(both.mean(axis=0), rows.sum(axis=0), atol=4 * np.sqrt(both.var(axis=0) / 20_000).max())
    cov = G * np.cov(rows.T, bias=True)
    assert np.allclose(np.cov(both.T), cov, atol=0.08 * np.abs(cov).max())
    assert (n.sum(axis=1) == 0).sum() == 0 and (k <= n).all()


def test_draw_is_seeded_and_handles_no_clusters() -> None:
    cluster, cell, y = random_rows(2)
    cl = C.build(cluster, cell, y, 6, "t")
    a, b = C.draw(cl, 50, seed=9), C.draw(cl, 50, seed=9)
    assert (a[0] == b[0]).all() and (a[1] == b[1]).all()
    empty = C.build(np.array([], dtype=str), np.array([], dtype=int), np.array([], dtype=bool), 4, "t")
    n, k = C.draw(empty, 7, 0)
    assert empty.count == 0 and n.shape == (7, 4) and not n.any() and not k.any()


def test_one_row_clusters_collapse_to_at_most_two_patterns_per_cell() -> None:
    rng = np.random.default_rng(4)
    cell, y = rng.integers(0, 5, 3000), rng.random(3000) < 0.5
    cl = C.build(np.arange(3000), cell, y, 5, "rows")
    pn, _pk, mult = cl.patterns
    assert pn.shape[0] <= 10 and mult.sum() == 3000
    assert C.outcome_design_effect(cl) == pytest.approx(1.0, abs=1e-12)


# ----------------------------------------------------------- cell algebra
def test_merge_cells_equals_building_on_merged_cells() -> None:
    cluster, cell, y = random_rows(6)
    index = np.array([2, 0, -1, 2, 1, -1])
    merged = C.build(cluster, cell, y, 6, "t").merge_cells(index, 3)
    # rows whose cell is dropped go; clusters with only such rows go too
    keep = index[cell] >= 0
    direct = C.build(cluster[keep], index[cell][keep], y[keep], 3, "t")
    assert rows_of(merged) == rows_of(direct) and merged.how == "t"


@pytest.mark.parametrize("as_mask", [False, True])
def test_select_equals_building_on_the_selected_cells(as_mask: bool) -> None:
    cluster, cell, y = random_rows(7)
    cols = np.array([4, 1])
    pick = np.isin(np.arange(6), cols) if as_mask else cols
    sel = C.build(cluster, cell, y, 6, "t").select(pick)
    order = np.sort(cols) if as_mask else cols
    new = {int(c): i for i, c in enumerate(order)}
    keep = np.isin(cell, cols)
    direct = C.build(cluster[keep], np.array([new[int(c)] for c in cell[keep]]), y[keep], 2, "t")
    assert rows_of(sel) == rows_of(direct)


# ---------------------------------------------------------- design effects
def test_design_effect_equals_the_row_level_sandwich() -> None:
    cluster, cell, y = random_rows(8, G=40)
    p = np.array([0.3, 0.4, 0.5, 0.6, 0.7, 0.9])
    cl = C.build(cluster, cell, y, 6, "t")
    r = y - p[cell]  # per-row residual
    sums = {g: r[cluster == g].sum() for g in np.unique(cluster)}
    J = sum(v * v for v in sums.values())
    info = float(np.sum(p[cell] * (1 - p[cell])))
    assert C.design_effect(cl, 1 - p, -p, info) == pytest.approx(J / info, rel=1e-12)
    # two scores, full information matrix
    x = np.log(p / (1 - p))
    s = np.stack([r, r * x[cell]], axis=1)
    U = np.array([s[cluster == g].sum(axis=0) for g in np.unique(cluster)])
    X = np.stack([np.ones(len(y)), x[cell]], axis=1)
    info2 = (X * (p[cell] * (1 - p[cell]))[:, None]).T @ X
    want = np.trace(np.linalg.solve(info2, U.T @ U)) / 2
    right = np.stack([1 - p, (1 - p) * x], axis=1)
    wrong = np.stack([-p, -p * x], axis=1)
    assert C.design_effect(cl, right, wrong, info2) == pytest.approx(want, rel=1e-10)


def test_design_effect_per_coordinate_equals_the_dense_one_hot_scores() -> None:
    cluster, cell, y = random_rows(11, G=40)
    p = np.array([0.3, 0.4, 0.5, 0.6, 0.7, 0.9])
    cl = C.build(cluster, cell, y, 6, "t")
    bins = np.array([0, 0, 1, -1, 2, 2])  # cell 3 in no bin
    onehot = (bins[:, None] == np.arange(3)[None, :]).astype(float)
    info = np.array([3.0, 5.0, 7.0])
    dense = C.design_effect(cl, onehot * (1 - p)[:, None], onehot * -p[:, None], info)
    assert C.design_effect(cl, 1 - p, -p, info, coordinate=bins) == pytest.approx(dense, rel=1e-12)
    # and by brute force on rows: sum over bins of (sum over cluster of residuals in the bin)^2 / info
    r = y - p[cell]
    want = np.mean([sum(r[(cluster == g) & (bins[cell] == b)].sum() ** 2 for g in np.unique(cluster)) / info[b]
                    for b in range(3)])
    assert dense == pytest.approx(want, rel=1e-12)


def test_outcome_design_effect_is_kish_on_rows() -> None:
    cluster, cell, y = random_rows(9, G=50)
    cl = C.build(cluster, cell, y, 6, "t")
    N, G, ybar = len(y), np.unique(cluster).size, y.mean()
    between = sum((y[cluster == g] - ybar).sum() ** 2 for g in np.unique(cluster)) * G / (G - 1)
    want = between / (N * np.var(y, ddof=1))
    assert C.outcome_design_effect(cl) == pytest.approx(want, rel=1e-12)
    d = cl.to_dict()
    assert d["count"] == G and d["design_effect"] == pytest.approx(want)
    assert d["effective_n"] == pytest.approx(N / want)
    json.dumps(d)
    one_class = C.build(cluster, cell, np.ones(len(y), dtype=bool), 6, "t")
    assert C.outcome_design_effect(one_class) is None and one_class.to_dict()["effective_n"] is None


def test_perfectly_correlated_clusters_have_design_effect_near_their_size() -> None:
    # every item's 5 epochs share the outcome: deff = 1 + (m - 1) * 1 = 5 (up to finite-sample factors)
    rng = np.random.default_rng(10)
    item = np.repeat(np.arange(400), 5)
    y = np.repeat(rng.random(400) < 0.5, 5)
    cl = C.build(item, np.zeros(2000, dtype=int), y, 1, "t")
    assert C.outcome_design_effect(cl) == pytest.approx(5.0, rel=0.01)
    assert C.effective_n(cl) == pytest.approx(400, rel=0.01)
    assert C.test_adjustment(0.7) == 1.0 and C.test_adjustment(None) == 1.0 and C.test_adjustment(2.5) == 2.5


# ------------------------------------------ the failure the clusters correct
def _clustered(rng: np.random.Generator, items: int = 200, epochs: int = 5) -> tuple[np.ndarray, ...]:
    """Calibrated clustered data: stated p per item, outcomes share one uniform per item
    (so P(y | p) = p marginally, outcomes correlated within an item)."""
    values = np.array([0.4, 0.6, 0.8])
    cell = np.repeat(rng.integers(0, 3, items), epochs)
    u = np.where(rng.random(items * epochs) < 0.8, np.repeat(rng.random(items), epochs), rng.random(items * epochs))
    return np.repeat(np.arange(items), epochs), cell, u < values[cell], values


def test_fixed_seed_miniature_row_bootstrap_undercovers_cluster_bootstrap_covers() -> None:
    rng = np.random.default_rng(2024)
    hits = {"cluster": 0, "row": 0}
    datasets = 150
    for d in range(datasets):
        item, cell, y, values = _clustered(rng)
        truth = values.mean()  # accuracy of the population
        for how, lab in (("cluster", item), ("row", np.arange(y.size))):
            n, k = C.draw(C.build(lab, cell, y, 3, how), 400, seed=d)
            lo, hi = np.quantile(k.sum(axis=1) / n.sum(axis=1), [0.025, 0.975])
            hits[how] += lo <= truth <= hi
    # the full simulation: about 95% and under 80% (bench/sim_clusters.py)
    assert hits["cluster"] / datasets >= 0.85  # 0.90 with this seed
    assert hits["row"] / datasets <= 0.75  # 0.69 with this seed


def test_fixed_seed_miniature_adjusted_test_keeps_its_level() -> None:
    rng = np.random.default_rng(7)
    from scipy import stats

    plain = adjusted = 0
    datasets = 300
    for _ in range(datasets):
        item, cell, y, p = _clustered(rng)
        cl = C.build(item, cell, y, 3, "item")
        info = float(np.sum(p[cell] * (1 - p[cell])))
        z = float(np.sum(y - p[cell])) / np.sqrt(info)
        za = z / np.sqrt(C.test_adjustment(C.design_effect(cl, 1 - p, -p, info)))
        plain += 2 * stats.norm.sf(abs(z)) < 0.05
        adjusted += 2 * stats.norm.sf(abs(za)) < 0.05
    assert plain / datasets > 0.2  # calibration-in-the-large rejects calibrated clustered data
    assert adjusted / datasets < 0.09


# ----------------------------------------------------------------- readers
def _jsonl(tmp_path: Path, objs: list[dict], name: str = "j.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(o) for o in objs) + "\n")
    return p


def _stated(n_items: int = 6, epochs: int = 3) -> list[dict]:
    return [{"id": f"q{i}", "confidence": 50 + 5 * i, "correct": (i + e) % 2 == 0, "passage": f"P{i // 2}"}
            for i in range(n_items) for e in range(epochs)]


def test_stated_repeated_ids_are_inferred_as_clusters(tmp_path: Path) -> None:
    ds = load(_jsonl(tmp_path, _stated()))
    assert ds.rows.cluster is not None and len(set(ds.rows.cluster.tolist())) == 6
    assert ds.rows.cluster.tolist() == ds.rows.item_id.tolist()
    note = next(n for n in ds.report.notes if "appear on more than one row" in n)
    assert "6 ids" in note and "6 ids (clusters), not the 18 rows" in note and "--cluster-key none" in note
    off = load(_jsonl(tmp_path, _stated()), options=LoadOptions(cluster_key="none"))
    assert off.rows.cluster is None and not any("cluster" in n for n in off.report.notes)


def test_stated_rows_without_an_id_are_their_own_clusters(tmp_path: Path) -> None:
    objs = _stated()
    for o in objs[:3]:
        del o["id"]
    ds = load(_jsonl(tmp_path, objs))
    lab = ds.rows.cluster.tolist()
    assert len(set(lab[:3])) == 3 and not set(lab[:3]) & set(lab[3:])
    assert lab[3:] == [o["id"] for o in objs[3:]]
    assert any("3 row(s) without a value are each their own cluster" in n for n in ds.report.notes)
    assert ds.table.clusters.count == 3 + 6 - 1  # q0 has no row left with an id


def test_stated_unique_ids_are_not_clusters(tmp_path: Path) -> None:
    ds = load(_jsonl(tmp_path, _stated(epochs=1)))
    assert ds.rows.cluster is None


def test_stated_cluster_key_field_and_missing_values(tmp_path: Path) -> None:
    objs = _stated()
    del objs[0]["passage"], objs[1]["passage"]
    ds = load(_jsonl(tmp_path, objs), options=LoadOptions(cluster_key="passage"))
    lab = ds.rows.cluster.tolist()
    assert len(set(lab)) == 3 + 2  # P0, P1, P2 and two rows without a passage
    assert lab[2:] == [o["passage"] for o in objs[2:]]
    assert any("field 'passage'" in n and "2 row(s) without a value" in n for n in ds.report.notes)
    with pytest.raises(CalibError, match="no row has the field 'nope'"):
        load(_jsonl(tmp_path, objs), options=LoadOptions(cluster_key="nope"))


def test_logprobs_repeated_ids_are_clusters(tmp_path: Path) -> None:
    objs = [{"id": f"i{i % 4}", "logprobs": [-0.2 - 0.1 * i, -2.0, -3.0], "gold": i % 3} for i in range(12)]
    ds = load(_jsonl(tmp_path, objs))
    assert ds.report.format == "logprobs"
    assert sorted(set(ds.rows.cluster.tolist())) == ["i0", "i1", "i2", "i3"]


def _epochs_log(tmp_path: Path, epochs: int = 3, samples: int = 8) -> Path:
    log = json.loads(JSON_JSON.read_text())
    base = log["samples"][:samples]
    out = []
    for e in range(1, epochs + 1):
        for s in base:
            t = json.loads(json.dumps(s))
            t["epoch"] = e
            out.append(t)
    log["samples"] = out
    p = tmp_path / "epochs.json"
    p.write_text(json.dumps(log))
    return p


def test_inspect_epochs_are_clusters_of_the_sample_id(tmp_path: Path) -> None:
    ds = load(_epochs_log(tmp_path))
    rows = ds.rows
    assert len(rows) == 24 and rows.item_id[0].endswith("#1")
    assert rows.cluster.tolist() == [i.rsplit("#", 1)[0] for i in rows.item_id.tolist()]
    assert rows.cluster_how == "Inspect epochs: sample id"
    assert any("3 epochs of 8 samples: intervals resample samples" in n for n in ds.report.notes)
    off = load(_epochs_log(tmp_path), options=LoadOptions(cluster_key="none"))
    assert off.rows.cluster is None and not any("resample samples" in n for n in off.report.notes)


def test_inspect_one_epoch_has_no_clusters() -> None:
    assert load(JSON_JSON).rows.cluster is None


def test_inspect_cluster_key_reads_a_sample_field(tmp_path: Path) -> None:
    log = json.loads(JSON_JSON.read_text())
    log["samples"] = log["samples"][:8]
    for i, s in enumerate(log["samples"]):
        s.setdefault("metadata", {})["passage"] = f"p{i // 4}"
    p = tmp_path / "meta.json"
    p.write_text(json.dumps(log))
    ds = load(p, options=LoadOptions(cluster_key="metadata.passage"))
    assert sorted(set(ds.rows.cluster.tolist())) == ["p0", "p1"]


def test_lmeval_folder_has_no_clusters_when_doc_ids_are_unique() -> None:
    ds = load(DATA / "lm-eval-0.4.13-dummy")
    assert ds.rows.cluster is None


# --------------------------------------------------------------------- CLI
def test_cli_flag_sets_the_load_option() -> None:
    from calib import cli

    args = cli.build_parser().parse_args(["audit", "x.jsonl", "--cluster-key", "passage"])
    assert cli.load_options(args).cluster_key == "passage"
    args = cli.build_parser().parse_args(["audit", "x.jsonl"])
    assert cli.load_options(args).cluster_key is None


# --------------------------------------------------------------- end to end
def _clustered_jsonl(tmp_path: Path, seed: int = 0) -> Path:
    item, cell, y, values = _clustered(np.random.default_rng(seed))
    return _jsonl(tmp_path, [{"id": f"q{i}", "confidence": round(100 * values[c]), "correct": bool(v)}
                             for i, c, v in zip(item, cell, y, strict=True)], "clustered.jsonl")


def test_audit_intervals_resample_the_inferred_clusters(tmp_path: Path) -> None:
    from calib.audit import audit
    from calib.bootstrap import resample_counts

    path = _clustered_jsonl(tmp_path)
    ds = load(path)
    assert ds.table.clusters is not None and ds.table.clusters.count == 200
    # the audit's resamples are the cluster bootstrap's
    n, k = resample_counts(ds.table, 300, seed=4)
    n2, k2 = C.draw(ds.table.clusters, 300, seed=4)
    assert (n == n2).all() and (k == k2).all()
    off = load(path, options=LoadOptions(cluster_key="none"))
    assert off.table.clusters is None
    width = {}
    for name, d in (("cluster", ds), ("row", off)):
        lo, hi = audit(d.table, reps=500).ci["accuracy"]
        width[name] = hi - lo
    # 5 epochs sharing 80% of their outcome: the design effect is about 4, the interval twice as wide
    assert width["cluster"] > 1.6 * width["row"]


def _clustered_table(rng: np.random.Generator, clustered: bool):  # type: ignore[no-untyped-def]
    from calib.rows import Judgments
    from calib.scale import PROBABILITY
    from calib.table import from_judgments

    item, cell, y, values = _clustered(rng)
    p = values[cell]
    label = item.astype(str) if clustered else None
    return from_judgments(Judgments(stated=p, prob=p, correct=y, line=np.arange(1, y.size + 1),
                                    item_id=item.astype(str), scale=PROBABILITY, cluster=label,
                                    cluster_how="item" if clustered else ""))


def test_fixed_seed_miniature_the_audits_tests_keep_their_level_with_clusters() -> None:
    from calib import metrics as m

    tests = {
        "calibration_in_the_large": m.calibration_in_the_large,
        "goodness_of_fit": m.goodness_of_fit,
        "cox_lr": lambda t: m.cox(t).test,
        "spiegelhalter": m.spiegelhalter,
    }
    datasets = 120
    rejects = {(name, c): 0 for name in tests for c in (True, False)}
    for seed in range(datasets):
        for clustered in (True, False):
            t = _clustered_table(np.random.default_rng(seed), clustered)
            for name, test in tests.items():
                rejects[name, clustered] += bool(test(t).rejects(0.05))
    for name in tests:
        # independent: 20-50% (bench/sim_clusters.py); with the design effect about 5%
        assert rejects[name, False] / datasets > 0.15, name
        assert rejects[name, True] / datasets < 0.11, name


def test_the_tests_say_they_allowed_for_clusters() -> None:
    from calib import metrics as m

    t = _clustered_table(np.random.default_rng(0), True)
    for test in (m.calibration_in_the_large(t), m.goodness_of_fit(t), m.cox(t).test, m.brier_vs_constant(t),
                 m.spiegelhalter(t)):
        assert "200 clusters (item): statistic divided by its design effect" in test.note, test.name
    plain = _clustered_table(np.random.default_rng(0), False)
    assert "clusters" not in m.calibration_in_the_large(plain).note


def test_cli_json_and_text_show_the_clusters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from calib import cli

    path = _clustered_jsonl(tmp_path)
    assert cli.main(["audit", str(path), "--reps", "100", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    c = d["clusters"]
    assert c["count"] == 200 and c["how"] == "repeated item id (id)"
    assert c["effective_n"] == pytest.approx(1000 / c["design_effect"]) and c["design_effect"] > 2
    assert any("Rows are clustered: 200 clusters" in n for n in d["notes"])
    assert cli.main(["audit", str(path), "--reps", "100", "--cluster-key", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["clusters"] is None
    assert cli.main(["audit", str(path), "--reps", "100"]) == 0
    out = capsys.readouterr().out
    assert "Clusters: 200 (repeated item id (id)); effective n" in out


# --------------------------------------------------------------- dashboard
def test_data_page_picks_the_cluster_field() -> None:
    from tests.apptest import app, clear_caches, ok, upload

    clear_caches()
    data = b"".join(json.dumps(o).encode() + b"\n" for o in _stated())
    at = upload(ok(app().run()), "epochs.jsonl", data)
    box = at.selectbox(key="ov0_cluster")
    assert "passage" in box.options and "none" in box.options

    def shown() -> str:
        return "\n".join(str(e.value) for kind in (at.text, at.markdown, at.caption, at.code) for e in kind)

    assert "ids appear on more than one row" in shown()
    box.set_value("passage")
    ok(at.run())
    assert "clusters: field 'passage': 3 clusters" in shown()


# ------------------------------------------------- per-value hit rates with clusters
def test_cell_design_effects_equal_kish_per_cell_on_rows() -> None:
    cluster, cell, y = random_rows(12, G=40)
    p = np.array([0.3, 0.4, 0.5, 0.6, 0.7, 0.9])
    cl = C.build(cluster, cell, y, 6, "t")
    centred, tested = C.cell_design_effects(cl), C.cell_design_effects(cl, p)
    for c in range(6):
        yc, gc = y[cell == c], cluster[cell == c]
        groups = np.unique(gc)
        G, N, ybar = groups.size, yc.size, yc.mean()
        between = sum((yc[gc == g] - ybar).sum() ** 2 for g in groups) * G / (G - 1)
        assert centred[c] == pytest.approx(between / (N * np.var(yc, ddof=1)), rel=1e-12)
        j = sum((yc[gc == g] - p[c]).sum() ** 2 for g in groups)
        assert tested[c] == pytest.approx(j / (N * p[c] * (1 - p[c])), rel=1e-12)
    # one class only in a cell: undefined, not 0
    assert np.isnan(C.cell_design_effects(C.build(cluster, cell, np.ones(len(y), bool), 6, "t"))).all()


def _clustered_judgments(item: np.ndarray, cell: np.ndarray, y: np.ndarray, values: np.ndarray,
                         cluster: bool = True):
    from calib.rows import Judgments
    from calib.scale import PROBABILITY

    n = len(y)
    return Judgments(stated=values[cell], prob=values[cell], correct=y, line=np.arange(1, n + 1),
                     item_id=item.astype(str), group=None, scale=PROBABILITY,
                     cluster=item.astype(str) if cluster else None, cluster_how="item" if cluster else "")


def test_per_value_intervals_use_each_values_effective_size() -> None:
    from calib.metrics import per_value, wilson_interval
    from calib.table import from_judgments

    rng = np.random.default_rng(5)
    item, cell, y, values = _clustered(rng, items=120, epochs=4)
    rows = per_value(from_judgments(_clustered_judgments(item, cell, y, values)))
    plain = per_value(from_judgments(_clustered_judgments(item, cell, y, values, cluster=False)))
    for r, q in zip(rows, plain, strict=True):
        c = int(np.flatnonzero(values == r.value)[0])
        yc, gc = y[cell == c], item[cell == c]
        groups = np.unique(gc)
        G, N, ybar = groups.size, yc.size, yc.mean()
        deff = max(1.0, sum((yc[gc == g] - ybar).sum() ** 2 for g in groups) * G / (G - 1)
                   / (N * np.var(yc, ddof=1)))
        # Student's t on the effective number of clusters (Kish) minus one
        sizes = np.array([np.sum(gc == g) for g in groups], dtype=float)
        lo, hi = wilson_interval(ybar * N / deff, N / deff, df=np.array(sizes.sum() ** 2 / np.sum(sizes ** 2) - 1))
        assert r.hit_rate.ci == pytest.approx((float(lo), float(hi)), rel=1e-12)
        assert r.hit_rate.method == CLUSTERED_WILSON and q.hit_rate.method == WILSON
        # the epochs agree: wider than rows alone
        assert deff > 1.5 and r.hit_rate.hi - r.hit_rate.lo > q.hit_rate.hi - q.hit_rate.lo
        assert (r.n, r.correct, r.hit_rate.value) == (q.n, q.correct, q.hit_rate.value)  # the estimate is unchanged
        assert abs(r.z) < abs(q.z)


def test_per_value_with_one_row_clusters_has_the_independent_rows_counts() -> None:
    from calib.metrics import per_value, wilson_interval
    from calib.table import from_judgments

    rng = np.random.default_rng(6)
    item, cell, y, values = _clustered(rng, items=300, epochs=1)
    a = per_value(from_judgments(_clustered_judgments(item, cell, y, values)))
    b = per_value(from_judgments(_clustered_judgments(item, cell, y, values, cluster=False)))
    for r, q in zip(a, b, strict=True):
        # the design effect is 1: the independent rows' counts, with t on n - 1 degrees of freedom
        lo, hi = wilson_interval(q.correct, q.n, df=np.array(q.n - 1.0))
        assert (*r.hit_rate.ci, r.hit_rate.value) == pytest.approx((float(lo), float(hi), q.hit_rate.value),
                                                                  rel=1e-12)
        assert r.hit_rate.lo <= q.hit_rate.lo and r.hit_rate.hi >= q.hit_rate.hi
        # the test's effect is estimated from the rows at the stated p (never below 1), as for the other tests
        yc = y[values[cell] == r.value]
        d = max(1.0, float(np.sum((yc - r.value) ** 2)) / (yc.size * r.value * (1 - r.value)))
        assert r.z == pytest.approx(q.z / np.sqrt(d), rel=1e-12)


def test_fixed_seed_miniature_per_value_intervals_cover_with_clusters() -> None:
    # calibrated clustered data: each value's hit rate is the value; row-level Wilson intervals
    # ignore that the epochs of an item agree and undercover, the cluster-aware ones cover
    from calib.metrics import per_value
    from calib.table import from_judgments

    rng = np.random.default_rng(31)
    cover = {True: 0, False: 0}
    total = 0
    for _ in range(150):
        item, cell, y, values = _clustered(rng)
        for clustered in (True, False):
            for r in per_value(from_judgments(_clustered_judgments(item, cell, y, values, clustered))):
                cover[clustered] += bool(r.hit_rate.contains(r.value))
        total += 3
    assert cover[False] / total < 0.85
    assert cover[True] / total > 0.91


def test_cox_intervals_with_clusters_are_the_sandwich_on_rows() -> None:
    from scipy import stats
    from sklearn.linear_model import LogisticRegression

    from calib.metrics import cox
    from calib.table import from_judgments

    rng = np.random.default_rng(8)
    item, cell, y, values = _clustered(rng, items=150, epochs=4)
    c = cox(from_judgments(_clustered_judgments(item, cell, y, values)))
    x = np.log(values[cell] / (1 - values[cell]))
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x[:, None], y)
    a, b = float(lr.intercept_[0]), float(lr.coef_[0, 0])
    assert (c.intercept.value, c.slope.value) == pytest.approx((a, b), abs=1e-6)
    # the sandwich by hand, row by row: I^-1 (G/(G-1) sum_g U_g U_g^T) I^-1
    X = np.stack([np.ones_like(x), x], axis=1)
    q = 1 / (1 + np.exp(-(a + b * x)))
    info = (X * (q * (1 - q))[:, None]).T @ X
    groups = np.unique(item)
    U = np.array([((y - q)[item == g, None] * X[item == g]).sum(axis=0) for g in groups])
    inv = np.linalg.inv(info)
    sandwich = inv @ (U.T @ U * groups.size / (groups.size - 1)) @ inv
    se = np.sqrt(np.maximum(np.diag(sandwich), np.diag(inv)))
    z = stats.norm.ppf(0.975)
    assert sandwich[1, 1] > 1.5 * inv[1, 1]  # the epochs agree: the model's variance is too small
    assert c.intercept.ci == pytest.approx((a - z * se[0], a + z * se[0]), abs=1e-6)
    assert c.slope.ci == pytest.approx((b - z * se[1], b + z * se[1]), abs=1e-6)
    plain = cox(from_judgments(_clustered_judgments(item, cell, y, values, cluster=False)))
    se0 = np.sqrt(np.diag(inv))
    assert plain.slope.ci == pytest.approx((b - z * se0[1], b + z * se0[1]), abs=1e-6)


def _ranking_null(rng: np.random.Generator, items: int = 150, epochs: int = 4) -> tuple[np.ndarray, ...]:
    """Stated values and outcomes both shared within an item, independent of each other:
    the number does not rank answers (AUROC 0.5), yet rows of an item agree on both."""
    values = np.array([0.5, 0.6, 0.7, 0.8, 0.9])
    item = np.repeat(np.arange(items), epochs)
    cell = np.where(rng.random(items * epochs) < 0.8, np.repeat(rng.integers(0, 5, items), epochs),
                    rng.integers(0, 5, items * epochs))
    y = np.where(rng.random(items * epochs) < 0.8, np.repeat(rng.random(items) < 0.7, epochs),
                 rng.random(items * epochs) < 0.7)
    return item, cell, y, values


def test_mann_whitney_with_clusters_divides_by_the_rank_scores_design_effect() -> None:
    from scipy import stats

    from calib.metrics import auroc_vs_chance
    from calib.table import from_judgments

    item, cell, y, values = _ranking_null(np.random.default_rng(3))
    plain = auroc_vs_chance(from_judgments(_clustered_judgments(item, cell, y, values, cluster=False)))
    clustered = auroc_vs_chance(from_judgments(_clustered_judgments(item, cell, y, values)))
    # by hand on rows: scores (y - ybar)(R - (N + 1)/2), their cluster totals against the independent variance
    score = values[cell]
    ranks = stats.rankdata(score)
    s = (y - y.mean()) * (ranks - (len(y) + 1) / 2)
    J = sum(s[item == g].sum() ** 2 for g in np.unique(item))
    n1 = int(y.sum())
    n0 = len(y) - n1
    _, counts = np.unique(score, return_counts=True)
    var = n1 * n0 / 12 * ((len(y) + 1) - np.sum(counts**3 - counts) / (len(y) * (len(y) - 1)))
    d = max(1.0, J / var)
    assert d > 2
    assert clustered.statistic == pytest.approx(plain.statistic / np.sqrt(d), rel=1e-10)
    assert "design effect" in clustered.note


def test_fixed_seed_miniature_mann_whitney_keeps_its_level_with_clusters() -> None:
    from calib.metrics import auroc_vs_chance
    from calib.table import from_judgments

    rng = np.random.default_rng(17)
    reject = {True: 0, False: 0}
    datasets = 200
    for _ in range(datasets):
        item, cell, y, values = _ranking_null(rng)
        for clustered in (True, False):
            p = auroc_vs_chance(from_judgments(_clustered_judgments(item, cell, y, values, clustered))).p_value
            reject[clustered] += p < 0.05
    assert reject[False] / datasets > 0.2
    assert reject[True] / datasets < 0.09


def test_clusters_each_exactly_at_the_accuracy_give_no_effective_n(tmp_path: Path) -> None:
    """Every cluster half right, half wrong: the between-cluster sum of squares is 0, so
    the design effect is 0 and N / deff has no value (it once divided by zero and the
    audit ended with an internal error)."""
    rows = [{"id": f"{g}-{i}", "session": f"s{g}", "confidence": 70 + (g % 3) * 10, "correct": i == 0}
            for g in range(40) for i in range(2)]
    path = tmp_path / "halves.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-W", "error", "-m", "calib", "audit", str(path), "--cluster-key",
                          "session", "--json", "--reps", "200"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    c = json.loads(out.stdout)["clusters"]
    assert c["design_effect"] == 0.0 and c["effective_n"] is None
    ds = load(path, options=LoadOptions(cluster_key="session"))
    assert C.effective_n(ds.table.clusters) is None
