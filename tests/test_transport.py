"""Map transport (``calib transport``, :mod:`calib.maps.transport`): the held-out score a
fitted map carries, the calibration test and the Brier gain on new data against per-row
computations, the advice rule and its exit codes, and the level on an unchanged judge
(fixed-seed miniature of bench/sim_transport.py)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from calib import metrics as m
from calib.maps import CalibrationMap, fit_map, read_map
from calib.maps.transport import PAIRED_NORMAL, transport
from calib.scale import Scale
from calib.table import from_counts
from tests.cli_run import run, run_json

PCT = Scale(0.0, 100.0, "0-100")
VALUES = np.array([60.0, 70.0, 80.0, 90.0, 95.0])
SHARES = np.array([.15, .15, .2, .3, .2])


def judge(n: int, rng: np.random.Generator, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """An overconfident judge: stated v means 0.15 + 0.7 v / 100 (minus ``shift``)."""
    v = rng.choice(VALUES, size=n, p=SHARES)
    return v, rng.random(n) < 0.15 + 0.7 * v / 100 - shift


def table(v: np.ndarray, y: np.ndarray):  # type: ignore[no-untyped-def]
    vals = np.unique(v)
    return from_counts(vals, np.array([np.sum(v == a) for a in vals]), np.array([np.sum(y[v == a]) for a in vals]),
                       scale=PCT)


def write_jsonl(path: Path, v: np.ndarray, y: np.ndarray) -> Path:
    path.write_text("".join(json.dumps({"confidence": float(a), "correct": bool(b)}) + "\n"
                            for a, b in zip(v, y, strict=True)))
    return path


def test_transport_figures_against_per_row_computation() -> None:
    rng = np.random.default_rng(0)
    cmap = fit_map(table(*judge(2000, rng)), "platt")
    v, y = judge(1500, rng)
    t = transport(cmap, table(v, y))
    q, p = cmap.apply(v), v / 100
    assert t.brier_stated == pytest.approx(np.mean((p - y) ** 2))
    assert t.brier_mapped == pytest.approx(np.mean((q - y) ** 2))
    d = (p - y) ** 2 - (q - y) ** 2
    assert t.gain_now.value == pytest.approx(d.mean())
    half = 1.959964 * d.std(ddof=1) / math.sqrt(d.size)
    assert t.gain_now.ci == (pytest.approx(d.mean() - half), pytest.approx(d.mean() + half))
    assert (t.gain_now.level, t.gain_now.method) == (0.95, PAIRED_NORMAL)
    assert t.gap == pytest.approx(q.mean() - y.mean())
    # Kuiper of the mapped probabilities, by hand, and its normalisation with the fit's variance
    order = np.argsort(q, kind="stable")
    c = np.concatenate([[0.0], np.cumsum((y - q)[order])])
    ends = np.concatenate([[0], np.flatnonzero(np.diff(q[order]) != 0) + 1, [q.size]])
    path = c[ends]
    assert t.calibration.kuiper == pytest.approx((path.max() - path.min()) / q.size)
    sd = math.sqrt(np.sum(q * (1 - q)) * (1 + q.size / cmap.n_fit))
    assert t.calibration.kuiper_test.statistic == pytest.approx((path.max() - path.min()) / sd)
    assert t.inflation == pytest.approx(1 + 1500 / 2000) and cmap.n_fit == 2000


def test_advice_keep_refit_retire() -> None:
    rng = np.random.default_rng(1)
    cmap = fit_map(table(*judge(4000, rng)), "platt")
    assert transport(cmap, table(*judge(3000, rng))).advice == "keep"
    # the judge got 15 points worse at every value: the map no longer calibrates, but still helps
    shifted = transport(cmap, table(*judge(3000, rng, shift=0.15)))
    assert (shifted.advice, shifted.reason, shifted.exit_code) == ("refit", "miscalibrated", 1)
    assert shifted.gain_now.value is not None and shifted.gain_now.value > 0
    # the judge became calibrated: the map (pulling 95 down to 81%) now does harm
    v = rng.choice(VALUES, size=3000, p=SHARES)
    retired = transport(cmap, table(v, rng.random(v.size) < v / 100))
    assert (retired.advice, retired.reason, retired.exit_code) == ("retire", "map_hurts", 1)


def test_unchanged_judge_keeps_the_map_at_the_level() -> None:
    """60 unchanged judges, map fitted on 1,000 answers and checked on 1,000 new ones: the
    advice other than "keep" at most about 5% of the time (0 to 7 of 60 holds 99.6% of a
    Binomial(60, 0.05)); without the fit's variance the same draws gave 4 of 60."""
    rng = np.random.default_rng(5)
    flagged = 0
    for i in range(60):
        cmap = fit_map(table(*judge(1000, rng)), "isotonic")
        flagged += transport(cmap, table(*judge(1000, rng)), seed=i).advice != "keep"
    assert flagged <= 7


def test_held_out_score_round_trip_and_old_maps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(2)
    old = write_jsonl(tmp_path / "old.jsonl", *judge(1200, rng))
    out = tmp_path / "map.json"
    fit = run_json(["fit", str(old), "--method", "platt", "--out", str(out), "--reps", "0", "--json"], capsys)
    cmap = read_map(out)
    assert cmap.held_out is not None and cmap.held_out["n_eval"] == fit["n_eval"]
    assert cmap.held_out["brier_mapped"] == pytest.approx(fit["after"]["brier"]["value"])
    assert cmap.held_out["brier_stated"] == pytest.approx(fit["before"]["brier"]["value"])
    new = write_jsonl(tmp_path / "new.jsonl", *judge(800, rng))
    d = run_json(["transport", str(out), str(new), "--json"], capsys)
    assert d["gain_then"] == pytest.approx(fit["before"]["brier"]["value"] - fit["after"]["brier"]["value"])
    # a map file written before the held-out block: read, and "then" unknown
    raw = json.loads(out.read_text())
    del raw["held_out"]
    (tmp_path / "old_map.json").write_text(json.dumps(raw))
    d = run_json(["transport", str(tmp_path / "old_map.json"), str(new), "--json"], capsys)
    assert d["held_out_then"] is None and d["gain_then"] is None
    raw["held_out"] = {"brier_mapped": "0.2"}
    (tmp_path / "bad_map.json").write_text(json.dumps(raw))
    code, _, err = run(["transport", str(tmp_path / "bad_map.json"), str(new)], capsys)
    assert code == 2 and "held_out.brier_mapped must be a finite number" in err


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(3)
    cmap = fit_map(table(*judge(4000, rng)), "platt")
    mp = tmp_path / "map.json"
    mp.write_text(cmap.to_json())
    same = write_jsonl(tmp_path / "same.jsonl", *judge(3000, rng))
    worse = write_jsonl(tmp_path / "worse.jsonl", *judge(3000, rng, shift=0.15))
    code, out, _ = run(["transport", str(mp), str(same)], capsys)
    assert code == 0 and "Advice: KEEP" in out
    code, out, _ = run(["transport", str(mp), str(worse)], capsys)
    assert code == 1 and "Advice: REFIT" in out
    tenths = tmp_path / "tenths.jsonl"
    tenths.write_text('{"confidence": 0.9, "correct": true}\n{"confidence": 0.3, "correct": false}\n')
    code, _, err = run(["transport", str(mp), str(tenths)], capsys)
    assert code == 2 and "scale" in err
    code, _, err = run(["transport", str(tmp_path / "missing.json"), str(same)], capsys)
    assert code == 2 and "cannot read the map file" in err


def test_map_at_the_ends_is_not_impossible() -> None:
    """A map sending a value to exactly 1 (a histogram bin all right when fitted) meets a
    wrong answer there: read at 0.5 / (n_fit + 1) from the end, not "impossible"."""
    cmap = CalibrationMap(method="base_rate", scale=PCT, params={"p": 1.0}, n_fit=50)
    v = np.full(40, 90.0)
    y = np.array([True] * 39 + [False])
    t = transport(replace(cmap), table(v, y))
    assert t.calibration.kuiper_test.p_value is not None and t.calibration.kuiper_test.p_value > 0
    assert m.cumulative_differences(table(np.full(40, 100.0), y)).kuiper_test.p_value == 0.0
