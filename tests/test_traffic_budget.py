"""The label budget (``calib budget``): its detectable drift and kappa against closed forms and a
simulation, and its simulated labels-to-certify against the certificate's own bookkeeping."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from scipy import stats

import calib
from calib.cli.main import main
from calib.labels.records import Label
from calib.traffic.budget import _first_certified, detectable
from calib.traffic.certify import certify
from calib.traffic.plan import strata
from calib.traffic.read import Traffic, join_labels


def _traffic(values: list[float], top: float = 100.0) -> Traffic:
    return Traffic("t", np.array([f"i{k}" for k in range(len(values))], dtype=object), np.asarray(values, float), top)


def test_detectable_drift_and_kappa_by_hand() -> None:
    tr = _traffic([90.0] * 50 + [100.0] * 50)
    d = detectable(tr, None, 10, None, 0.95)
    # Neyman with the floor by brute force: rates 0.9 and 1.0 clipped to 0.98
    sd = np.sqrt(np.array([0.9 * 0.1, 0.98 * 0.02]))
    best = min(((a, 10 - a) for a in range(2, 9)), key=lambda n: sum(50**2 * s**2 / k for s, k in zip(sd, n, strict=True)))
    assert d["allocation"] == {"90": best[0], "100": best[1]}
    var = sum(50**2 * (1 - k / 50) * s**2 / k for s, k in zip(sd, best, strict=True)) / 100**2
    zz = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert math.isclose(d["drift_accuracy"], zz * math.sqrt(2) * math.sqrt(var), rel_tol=1e-12)
    # both reviewers' share "right" a: the null variance of kappa is 1/L (Fleiss, Cohen & Everitt 1969)
    assert math.isclose(d["kappa"], (stats.norm.ppf(0.95) + stats.norm.ppf(0.8)) / math.sqrt(10), rel_tol=1e-9)


def test_kappa_null_spread_is_the_simulated_one() -> None:
    rng = np.random.default_rng(5)
    a, n, reps = 0.85, 400, 4000
    x = rng.random((reps, n)) < a
    y = rng.random((reps, n)) < a
    po = (x == y).mean(axis=1)
    pa, pb = x.mean(axis=1), y.mean(axis=1)
    pe = pa * pb + (1 - pa) * (1 - pb)
    kappa = (po - pe) / (1 - pe)
    assert abs(kappa.std() * math.sqrt(n) - 1.0) < 0.05  # the SE_0 = 1/sqrt(L) the budget uses


def test_first_certified_is_the_certificates_first_look_by_brute_force() -> None:
    rng = np.random.default_rng(2)
    values = [80.0] * 40 + [90.0] * 60 + [100.0] * 100
    tr = _traffic(values)
    st = strata(tr)
    order = rng.permutation(len(values))[:120]
    wrong = rng.random(order.size) < np.where(np.asarray(values)[order] >= 100, 0.01, 0.15)
    labels = [Label(f"i{i}", not w, reviewer="a", time=f"2026-12-01T{k // 3600:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z",
                    kind="audit") for k, (i, w) in enumerate(zip(order, wrong, strict=True))]
    target, conf = 0.08, 0.9
    brute = None
    for t in range(1, order.size + 1):
        cert = certify(join_labels(tr, labels[:t]), target, conf)
        if any(c["bound"] <= target for c in cert.candidates):
            brute = t
            break
    got = _first_certified(st.of[order], wrong.astype(float), st, (1 - conf) / len(st), target)
    assert brute is not None and got == brute


def test_budget_cli_and_api(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "t.jsonl"
    rng = np.random.default_rng(0)
    f.write_text("".join(json.dumps({"id": f"i{k}", "confidence": int(v)}) + "\n"
                         for k, v in enumerate(rng.choice([70, 90, 100], size=2000))))
    args = ["budget", str(f), "--target-error", "0.1", "--confidence", "0.9", "--trials", "4", "--seed", "1"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    api = calib.budget(str(f), target_error=0.1, confidence=0.9, trials=4, seed=1)
    assert out == api
    for key in ("plan", "uniform"):
        s = out["labels_to_certify"][key]
        assert set(s) == {"median", "p10", "p90", "certified_share", "trials", "max_labels"} and s["trials"] == 4
    assert set(out["detectable"]) >= {"labels", "drift_accuracy", "drift_error_accepted", "kappa"}
    assert main([*args[:2], "--trials", "0"]) == 2
    assert "--trials must be between" in capsys.readouterr().err
