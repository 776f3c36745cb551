"""Traffic without outcomes: the reader and the label join, the plan, the estimates, the certificate.

Every expected figure is computed here independently: by hand or by brute force (``bench/sim_traffic.py`` compares with ``ppi_py``).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from calib.cli.main import main
from calib.labels.records import Label
from calib.traffic.certify import betting_upper, certify
from calib.traffic.read import Traffic, join_labels


def _traffic(values: list[float], top: float = 100.0) -> Traffic:
    n = len(values)
    return Traffic("t", np.array([f"i{k}" for k in range(n)], dtype=object), np.asarray(values, float), top)


def _label(item: str, correct: bool, k: int, reviewer: str = "a") -> Label:
    return Label(item, correct, reviewer=reviewer, time=f"2026-12-01T10:{k // 60:02d}:{k % 60:02d}Z", kind="audit")


# ------------------------------------------------------------------ the certificate
def test_betting_bound_is_the_capital_process_by_brute_force() -> None:
    x = np.array([0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], float)
    alpha = 0.05
    u = betting_upper(x, alpha)

    def capital(m: float, t: int) -> float:
        """WSR's capital at ``m`` after ``t`` observations, written out term by term."""
        k = 1.0
        for i in range(1, t + 1):
            past = x[: i - 1]
            mus = [(0.5 + past[:j + 1].sum()) / (j + 2) for j in range(i - 1)]
            var = (0.25 + sum((past[j] - mus[j]) ** 2 for j in range(i - 1))) / i
            lam = min(math.sqrt(2 * math.log(1 / alpha) / (var * i * math.log(1 + i))), 0.75 / (1 - m))
            k *= 1 + lam * (m - x[i - 1])
        return k

    for t in (5, 15, 30):
        b = u[t - 1]
        assert capital(b - 0.001, t) < 1 / alpha  # the last grid point kept is not rejected
        assert capital(b + 0.0005, t) >= 1 / alpha or b >= 1.0  # above the bound: rejected


def test_certificate_bookkeeping_and_withdrawal() -> None:
    tr = _traffic([95] * 2000 + [60] * 500)
    good = [_label(f"i{k}", True, k) for k in range(120)]
    cert = certify(join_labels(tr, good), 0.05, 0.95)
    assert cert.certified and cert.threshold == 95 and not cert.withdrawn
    # brute force: the first label after which the bound at 95 stays <= 0.05 (2 strata: alpha = 0.025)
    u = betting_upper(np.zeros(120), 0.025)
    first = int(np.flatnonzero(u <= 0.05)[0]) + 1
    assert cert.since_label == first and cert.bound == pytest.approx(u[-1])
    # planted wrong labels push the bound back over the target: withdrawn, exit-worthy
    bad = good + [_label(f"i{k}", False, 120 + k) for k in range(120, 135)]
    later = certify(join_labels(tr, bad), 0.05, 0.95)
    assert later.withdrawn and 95.0 in later.withdrawn_thresholds and not later.certified
    assert later.labels_needed is None or later.labels_needed > 0


def test_cli_exit_codes(tmp_path, capsys) -> None:
    tr = tmp_path / "t.jsonl"
    tr.write_text("".join(json.dumps({"id": f"i{k}", "confidence": 95 if k < 2000 else 60}) + "\n"
                          for k in range(2500)))
    good = tmp_path / "l.jsonl"
    good.write_text("".join(json.dumps(_label(f"i{k}", True, k).to_dict()) + "\n" for k in range(120)))
    assert main(["certify", str(tr), "--labels", str(good), "--target-error", "0.05", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"certified", "threshold", "bound", "since_label", "withdrawn", "labels_needed"} <= set(out)
    few = tmp_path / "few.jsonl"
    few.write_text("".join(json.dumps(_label(f"i{k}", True, k).to_dict()) + "\n" for k in range(5)))
    assert main(["certify", str(tr), "--labels", str(few), "--target-error", "0.05"]) == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "confidence": null}\n')
    assert main(["certify", str(bad), "--labels", str(good)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl" in err and "no confidence" in err
    assert main(["plan", str(tr), "--budget", "10", "--seed", "1", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    assert len(items) == 10 and set(items[0]) >= {"id", "stratum", "inclusion_probability", "reason"}


def test_bound_survives_looks_after_every_label_where_clopper_pearson_does_not() -> None:
    # a fixed-seed miniature of bench/sim_traffic.py's table 2: true error 10%, target 9.8%;
    # a failure is any label after which the bound is at or under the target
    from scipy.stats import beta

    rng = np.random.default_rng(7)
    trials, n, delta = 200, 400, 0.05
    bet = cp = 0
    for _ in range(trials):
        x = (rng.random(n) < 0.10).astype(float)
        bet += bool((betting_upper(x, delta) <= 0.098).any())
        k = np.cumsum(x)
        cp += bool((beta.ppf(1 - delta, k + 1, np.arange(1, n + 1) - k) <= 0.098).any())
    assert bet / trials <= delta + 3 * math.sqrt(delta * (1 - delta) / trials)
    assert cp / trials > 2 * delta  # the fixed-n bound re-run after every label: the looks make it fail
