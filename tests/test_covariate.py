"""Calibration against a covariate (``calib audit --covariate FIELD``, :mod:`calib.covariate`):
cluster-robust standard errors against statsmodels, Holm against statsmodels, thin segments,
the JSONL field read by line, the CLI, and the family-wise level on calibrated data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm
from statsmodels.stats.multitest import multipletests

from calib.covariate import MIN_ANSWERS, covariate_calibration, holm
from calib.rows import Judgments
from calib.scale import Scale
from tests.cli_run import run, run_json

PCT = Scale(0.0, 100.0, "0-100")


def rows(v: np.ndarray, y: np.ndarray, cluster: np.ndarray | None = None) -> Judgments:
    n = v.size
    return Judgments(stated=v.astype(float), prob=v / 100, correct=y.astype(bool), line=np.arange(1, n + 1),
                     item_id=np.full(n, ""), scale=PCT, cluster=cluster)


def test_cluster_robust_errors_match_statsmodels() -> None:
    rng = np.random.default_rng(0)
    n = 900
    cl = rng.integers(0, 150, size=n)
    v = rng.choice([60.0, 80.0, 95.0], size=n)
    x = rng.normal(size=n) + 0.1 * cl
    y = rng.random(n) < v / 100 - 0.05 * (x > 1)
    r = y - v / 100
    c = covariate_calibration(rows(v, y, cl), np.array(x.tolist(), dtype=object), "x")
    fit = sm.OLS(r, sm.add_constant(x)).fit(cov_type="cluster", cov_kwds={"groups": cl, "df_correction": True},
                                             use_t=True)
    assert c.slope.value == pytest.approx(fit.params[1])
    assert c.slope.ci == (pytest.approx(fit.conf_int()[1][0]), pytest.approx(fit.conf_int()[1][1]))
    assert c.slope.method.endswith("(CR1)") and c.slope.level == 0.95
    assert c.slope_p == pytest.approx(fit.pvalues[1])
    lang = rng.choice(["en", "de", "ja"], size=n)
    c = covariate_calibration(rows(v, y, cl), np.array(lang.tolist(), dtype=object), "lang")
    for s in c.segments:
        m = lang == s.label
        f = sm.OLS(r[m], np.ones(m.sum())).fit(cov_type="cluster", cov_kwds={"groups": cl[m]}, use_t=True)
        assert s.residual.value == pytest.approx(f.params[0])
        assert s.residual.ci == (pytest.approx(f.conf_int()[0][0]), pytest.approx(f.conf_int()[0][1]))
    ps = [s.p_value for s in c.segments]
    assert [s.p_holm for s in c.segments] == pytest.approx(list(multipletests(ps, method="holm")[1]))


def test_segment_test_is_calibration_in_the_large_by_hand() -> None:
    """Without clusters and with many answers: z = sum (y - p) / sqrt(sum p (1 - p)), normal."""
    from scipy.stats import norm

    rng = np.random.default_rng(4)
    v = rng.choice([50.0, 70.0, 80.0], size=3000)
    lang = rng.choice(["en", "de"], size=3000)
    y = rng.random(3000) < v / 100 - 0.03 * (lang == "de")
    c = covariate_calibration(rows(v, y), np.array(lang.tolist(), dtype=object), "lang")
    for s in c.segments:
        m = lang == s.label
        pr = v[m] / 100
        z = np.sum(y[m] - pr) / np.sqrt(np.sum(pr * (1 - pr)))
        assert s.p_value == pytest.approx(2 * norm.sf(abs(z)), rel=1e-9)


def test_holm_matches_statsmodels() -> None:
    p = [0.01, 0.04, 0.03, 0.2, 0.001, 0.04]
    assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]))


def test_thin_segments_are_listed_not_tested() -> None:
    rng = np.random.default_rng(1)
    v = rng.choice([70.0, 90.0], size=400)
    y = rng.random(400) < v / 100
    lab = np.where(np.arange(400) < MIN_ANSWERS - 1, "rare", "common")
    c = covariate_calibration(rows(v, y), np.array(lab.tolist(), dtype=object), "kind")
    rare = next(s for s in c.segments if s.label == "rare")
    assert rare.thin and rare.p_value is None and rare.p_holm is None and rare.n == MIN_ANSWERS - 1
    assert any("too thin to certify" in n and "rare" in n for n in c.notes)
    assert c.to_dict()["segments"][[s.label for s in c.segments].index("rare")]["too_thin"] is True


def test_family_wise_level_on_calibrated_data() -> None:
    """200 calibrated datasets, 4 segments each (one of them rare): any segment flagged after
    Holm at most about 5% of the time (Binomial(200, 0.05): at most 18 holds 99.7%)."""
    rng = np.random.default_rng(2)
    flagged = 0
    for _ in range(200):
        v = rng.choice([60.0, 80.0, 90.0, 95.0], size=400)
        y = rng.random(400) < v / 100
        lab = rng.choice(["a", "b", "c", "d"], size=400, p=[.4, .3, .2, .1])
        c = covariate_calibration(rows(v, y), np.array(lab.tolist(), dtype=object), "seg")
        flagged += bool(c.flagged)
    assert flagged <= 18


def test_cli_reads_the_field_by_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(3)
    n = 1200
    v = rng.choice([60, 80, 95], size=n)
    lang = rng.choice(["en", "ja"], size=n)
    y = rng.random(n) < v / 100 - np.where(lang == "ja", 0.2, 0.0)
    lines = [json.dumps({"confidence": int(a), "correct": bool(b), "meta": {"lang": str(c)}})
             for a, b, c in zip(v, y, lang, strict=True)]
    lines.insert(5, "{not json")  # a dropped line: the covariate still follows the kept rows by line
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(lines) + "\n")
    d = run_json(["audit", str(path), "--covariate", "meta.lang", "--reps", "0", "--json"], capsys)
    cc = d["covariate_calibration"]
    assert (cc["field"], cc["kind"], cc["flagged"]) == ("meta.lang", "categorical", ["ja"])
    ja = next(s for s in cc["segments"] if s["segment"] == "ja")
    assert ja["n"] == int(np.sum(lang == "ja"))
    assert ja["residual"] == pytest.approx(np.mean(y[lang == "ja"] - v[lang == "ja"] / 100))
    code, out, _ = run(["audit", str(path), "--covariate", "meta.lang", "--reps", "0"], capsys)
    assert code == 0 and "Calibration against meta.lang (categorical)" in out and "ja" in out
    code, _, err = run(["audit", str(path), "--covariate", "nothing", "--reps", "0"], capsys)
    assert code == 2 and "no row" in err and "'nothing'" in err
    counts = tmp_path / "c.csv"
    counts.write_text("value,n,correct\n80,10,8\n90,10,9\n")
    code, _, err = run(["audit", str(counts), "--covariate", "lang", "--reps", "0"], capsys)
    assert code == 2 and "count table" in err


def test_fields_listed_and_values_read_from_bytes() -> None:
    """The dashboard reads the field from the loaded bytes as the CLI reads it from the file."""
    from calib.readers.covariate import covariate_values, field_names

    lines = [json.dumps({"confidence": 90, "correct": True, "meta": {"lang": "en", "deep": {"x": 1}}, "n": i})
             for i in range(3)] + ["not json", json.dumps({"confidence": 80, "correct": False, "n": 3})]
    data = ("\n".join(lines) + "\n").encode()
    r = Judgments(stated=np.array([90.0, 90, 90, 80]), prob=np.array([0.9, 0.9, 0.9, 0.8]),
                  correct=np.array([True, True, True, False]), line=np.array([1, 2, 3, 5]),
                  item_id=np.full(4, ""), scale=PCT)
    assert field_names(data, r, ("confidence", "correct")) == ["meta.lang", "n"]
    assert covariate_values(data, r, "meta.lang", "f").tolist() == ["en", "en", "en", None]
    assert covariate_values(data, r, "n", "f").tolist() == [0, 1, 2, 3]


def test_slice_thresholds_are_per_group_on_the_segments() -> None:
    """One threshold per language, each certified on its own items: the same as per_group on a
    table grouped by hand; a numeric field is refused."""
    from dataclasses import replace

    from calib.covariate import slice_thresholds
    from calib.decision.groups import per_group
    from calib.errors import CalibError
    from calib.table import from_judgments

    rng = np.random.default_rng(3)
    n = 800
    lang = rng.choice(["en", "fr", "xx"], size=n, p=[0.6, 0.35, 0.05])
    v = rng.choice([70.0, 90.0, 99.0], size=n)
    y = rng.random(n) < np.where(lang == "fr", v / 100 - 0.2, v / 100)
    r = rows(v, y)
    got = slice_thresholds(r, np.array(lang.tolist(), dtype=object), "lang", target=0.1, confidence=0.9)
    want = per_group(from_judgments(replace(r, group=np.array(lang.tolist(), dtype=object))), target=0.1,
                     confidence=0.9)
    assert [(g.group, g.threshold, g.accepted) for g in got.groups] == [(g.group, g.threshold, g.accepted)
                                                                        for g in want.groups]
    assert {g.group for g in got.groups} == {"en", "fr", "xx"}
    assert next(g for g in got.groups if g.group == "xx").pooled_fallback  # about 40 items: too few
    with pytest.raises(CalibError, match="numeric"):
        slice_thresholds(r, np.array(v.tolist(), dtype=object), "v", target=0.1, confidence=0.9)
