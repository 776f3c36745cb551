"""The certificate's bookkeeping by brute force over every prefix of a label stream, and the PPI++
estimate beside ``ppi_py`` itself (the ``ppi-python`` package, pinned in requirements-dev.txt; it
installs a top-level ``tests`` package, which ours, a regular package at the repo root, shadows)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calib.labels.records import Label
from calib.traffic.certify import bound_path, certify
from calib.traffic.estimate import difference
from calib.traffic.read import Traffic, join_labels


def _stream(seed: int, n: int) -> tuple[Traffic, list[Label]]:
    rng = np.random.default_rng(seed)
    values = [70.0] * 100 + [90.0] * 300 + [99.0] * 600
    tr = Traffic("t", np.array([f"i{k}" for k in range(len(values))], dtype=object), np.asarray(values), 100.0)
    err = {70.0: 0.3, 90.0: 0.06, 99.0: 0.01}
    rows = rng.permutation(len(values))[:n]
    labels = [Label(f"i{i}", bool(rng.random() >= err[values[i]]), reviewer="a",
                    time=f"2026-12-01T{k // 3600:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z", kind="audit")
              for k, i in enumerate(rows)]
    return tr, labels


@pytest.mark.parametrize(("seed", "target"), [(1, 0.10), (2, 0.12)])
def test_no_certificate_earlier_than_its_bounds_allow(seed: int, target: float) -> None:
    tr, labels = _stream(seed, 90)
    # then planted wrong labels on items stated 99: certified thresholds are withdrawn
    fresh = [k for k in range(400, 1000) if f"i{k}" not in {lab.item for lab in labels}][:12]
    labels += [Label(f"i{k}", False, reviewer="b", time=f"2026-12-02T00:00:{j:02d}Z", kind="audit")
               for j, k in enumerate(fresh)]
    states = []
    full = bound_path(join_labels(tr, labels), 0.9)[1]
    seen_ok = np.zeros(full.shape[1], dtype=bool)
    for k in range(1, len(labels) + 1):
        cert = certify(join_labels(tr, labels[:k]), target, 0.9)
        now = np.array([c["bound"] for c in cert.candidates])
        # the bound after label k does not depend on later labels (predictable bets)
        np.testing.assert_allclose(now, full[k - 1], rtol=0, atol=1e-12)
        ok = now <= target
        lowest = int(np.argmax(ok)) if ok.any() else None
        assert cert.certified == (lowest is not None)
        if lowest is not None:
            assert cert.threshold == cert.candidates[lowest]["threshold"] and cert.bound == now[lowest]
            # since_label: the first label of the run, through label k, at which the bound stayed <= target
            run = [j for j in range(1, k + 1) if all(full[i - 1, lowest] <= target for i in range(j, k + 1))]
            assert cert.since_label == run[0]
        assert cert.withdrawn == bool((seen_ok & ~ok).any())
        seen_ok |= ok
        states.append((cert.certified, cert.withdrawn))
    assert (True, False) in states and any(w for _, w in states)  # the stream certifies, then withdraws


def test_difference_estimator_beside_ppi_py() -> None:
    import ppi_py

    import tests  # ours, not ppi-python's top-level ``tests``: the suite's modules stay importable
    assert tests.__file__.startswith(str(__import__("pathlib").Path(__file__).parent))
    rng = np.random.default_rng(11)
    big, n = 50_000, 300
    g = rng.beta(5, 2, size=big)
    z = (rng.random(big) < g).astype(float)
    lab = rng.choice(big, size=n, replace=False)
    est, se, lam = difference(np.array([float(big)]), np.zeros(n, dtype=int), z[lab], g[lab],
                              np.array([g.sum()]), np.array([(g**2).sum()]), big)
    pe = float(np.ravel(ppi_py.ppi_mean_pointestimate(z[lab], g[lab], g, lam=lam))[0])
    lo, hi = ppi_py.ppi_mean_ci(z[lab], g[lab], g, alpha=0.05, lam=lam)
    assert est == pytest.approx(pe, rel=1e-9)
    half = (float(np.ravel(hi)[0]) - float(np.ravel(lo)[0])) / 2
    assert 1.959964 * se == pytest.approx(half, rel=0.03)
    assert not math.isnan(lam)
