"""calib.solvers returns scipy.optimize's floats bit for bit (issue 29: a small audit, route
or fit no longer imports scipy.optimize, and no figure moves).

Every comparison is ``==`` / ``np.array_equal`` against SciPy itself, never a tolerance:
its Brent root finder (and the points it evaluates, in order), its PAVA, the rows laid
end to end as :func:`calib.isotonic.pav_rows` gave them to SciPy, and the root finder's
real callers (the smooth ECE's fixed point, the temperature map's slope).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import optimize

from calib import isotonic, maps, solvers
from calib.isotonic import ROWS_PORT_MAX_WIDTH, pav, pav_rows
from calib.metrics import smooth
from calib.scale import Scale
from calib.table import from_counts
from tests.cli_run import run

PCT = Scale(0.0, 100.0, "0-100")
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """pav and pav_rows as in a process that has not imported scipy.optimize (this one
    has: these tests compare with it), so that they take the ports."""
    monkeypatch.setattr(isotonic, "_optimize_imported", lambda: False)


# ---------------------------------------------------------------- PAVA, one array
def _scipy_fit(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    return optimize.isotonic_regression(y, weights=w).x


#: y values: a few levels (ties, equal block means), any float in [0, 1], or integers.
_levels = st.sampled_from([0.0, 0.25, 1 / 3, 0.5, 2 / 3, 0.75, 1.0])
_y = st.one_of(
    st.lists(_levels, min_size=1, max_size=60),
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=60),
    st.lists(st.integers(-5, 5).map(float), min_size=1, max_size=60),
)


@FAST
@given(_y, st.data())
def test_isotonic_regression_is_scipys_to_the_bit(y: list[float], data: st.DataObject) -> None:
    n = len(y)
    w = data.draw(st.one_of(st.lists(st.integers(1, 9).map(float), min_size=n, max_size=n),
                            st.lists(st.floats(1e-3, 1e3), min_size=n, max_size=n)))
    ya, wa = np.array(y), np.array(w)
    for yy in (ya, np.sort(ya), np.sort(ya)[::-1].copy(), np.full(n, ya[0])):  # as drawn, monotone, reversed, constant
        assert np.array_equal(solvers.isotonic_regression(yy, wa), _scipy_fit(yy, wa))


def test_isotonic_regression_edge_cases_are_scipys() -> None:
    for y, w in (([0.3], [2.0]), ([1.0, 0.0], [1.0, 1.0]), ([0.5, 0.5, 0.5], [1.0, 3.0, 7.0]),
                 ([0.1, 0.2, 0.3], [1.0, 1.0, 1.0]), ([3.0, 2.0, 1.0], [1.0, 2.0, 3.0])):
        ya, wa = np.array(y), np.array(w)
        assert np.array_equal(solvers.isotonic_regression(ya, wa), _scipy_fit(ya, wa))
    for bad in ([1.0, 0.0], [1.0, -1.0]):  # zero or negative weights: SciPy refuses, so does the port
        with pytest.raises(ValueError, match="strictly positive"):
            _scipy_fit(np.array([0.2, 0.1]), np.array(bad))
        with pytest.raises(ValueError, match="strictly positive"):
            solvers.isotonic_regression(np.array([0.2, 0.1]), np.array(bad))


@pytest.mark.usefixtures("fresh")
def test_pav_of_more_than_1000_cells_is_scipys_on_the_weighted_cells() -> None:
    """pav() gave SciPy the cells of positive weight when more than 1,000; the port now."""
    rng = np.random.default_rng(11)
    for size, levels in ((1001, 0), (5000, 0), (3000, 7)):
        n = rng.integers(0, 4, size)  # zero-weight cells too
        y = rng.integers(0, levels, size) / (levels - 1) if levels else rng.random(size)
        pos = n > 0
        want = np.empty(size)
        want[pos] = _scipy_fit(y[pos], n[pos].astype(float))
        got = pav(y, n.astype(float))
        assert np.array_equal(got[pos], want[pos])


# ---------------------------------------------------------------- PAVA, many rows
def _scipy_rows(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """What pav_rows computed before the port: SciPy on all rows end to end, row r + 2r."""
    out = np.zeros(n.shape)
    m = n > 0
    shift = 2.0 * np.broadcast_to(np.arange(n.shape[0])[:, None], n.shape)[m]
    out[m] = _scipy_fit(k[m] / n[m] + shift, n[m].astype(np.float64)) - shift
    return out


@FAST
@given(st.integers(2, 40), st.integers(1, 40), st.integers(0, 150), st.booleans(), st.integers(0, 2**32 - 1))
def test_pav_rows_is_scipys_end_to_end_fit_to_the_bit(reps: int, cells: int, rows: int, sorted_p: bool,
                                                       seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.random(cells)
    p = np.sort(p) if sorted_p else p
    n = rng.multinomial(rows, rng.dirichlet(np.ones(cells)), size=reps)  # empty cells and empty rows
    k = rng.binomial(n, p)
    with pytest.MonkeyPatch.context() as mp:  # the port (hypothesis: no function-scoped fixture)
        mp.setattr(isotonic, "_optimize_imported", lambda: False)
        assert np.array_equal(pav_rows(n, k), _scipy_rows(n, k))


@pytest.mark.usefixtures("fresh")
def test_pav_rows_of_bootstrap_sized_tables_is_scipys() -> None:
    """2,000 resamples of a 0-100 table (the audit's CORP bootstrap), and the widest rows
    the port takes, with ties in k / n across cells."""
    rng = np.random.default_rng(3)
    for reps, cells, rows in ((2000, 101, 300), (200, ROWS_PORT_MAX_WIDTH, 5000), (300, 6, 40)):
        n = rng.multinomial(rows, np.ones(cells) / cells, size=reps)
        k = rng.binomial(n, np.linspace(0.3, 0.95, cells))
        assert np.array_equal(pav_rows(n, k), _scipy_rows(n, k))


@FAST
@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_isotonic_regression_rows_fits_each_row_as_scipy_alone(rows: int, width: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    length = rng.integers(0, width + 1, rows)
    y = rng.integers(0, 5, (rows, width)) / 4.0 if seed % 2 else rng.normal(size=(rows, width))
    w = rng.integers(1, 6, (rows, width)).astype(float)
    got = solvers.isotonic_regression_rows(y, w, length)
    for r in range(rows):
        m = length[r]
        assert np.array_equal(got[r, :m], _scipy_fit(y[r, :m], w[r, :m]))
        assert np.array_equal(got[r, m:], y[r, m:])  # beyond the row's length: as it came


# ---------------------------------------------------------------- Brent's method
def _traced(f: Callable[[float], float]) -> tuple[Callable[[float], float], list[float]]:
    seen: list[float] = []

    def g(x: float) -> float:
        seen.append(x)
        return f(x)

    return g, seen


def _outcome(solve: Callable[..., float], f: Callable[[float], float], a: float, b: float,
             **kw: Any) -> tuple[Any, list[float]]:
    g, seen = _traced(f)
    try:
        return solve(g, a, b, **kw), seen
    except (ValueError, RuntimeError) as e:
        return (type(e), str(e)), seen


def _same_brentq(f: Callable[[float], float], a: float, b: float, **kw: Any) -> Any:
    """Both solvers on ``f``: the same root (or the same error, word for word), after
    evaluating ``f`` at the same points in the same order."""
    want, seen_want = _outcome(optimize.brentq, f, a, b, **kw)
    got, seen_got = _outcome(solvers.brentq, f, a, b, **kw)
    assert got == want and seen_got == seen_want, (got, want, len(seen_want), len(seen_got))
    return got


_tol = st.sampled_from([{}, {"xtol": 1e-14, "rtol": 1e-13}, {"xtol": 1e-14, "rtol": 1e-12, "maxiter": 200},
                        {"xtol": 1e-3}, {"xtol": 5e-324}])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=1, max_size=4), st.floats(-5, 5), st.floats(0.01, 8),
       st.integers(0, 4), _tol)
def test_brentq_is_scipys_on_polynomials_and_transcendental_functions(roots: list[float], a: float, width: float,
                                                                        shape: int, kw: dict[str, Any]) -> None:
    b = a + width
    funcs = [
        lambda x: math.prod(x - r for r in roots),
        lambda x: math.cos(x) - x / 3,
        lambda x: math.exp(x) - 2.0 + roots[0],
        lambda x: math.tanh(4 * (x - roots[0])) ** 3,  # flat near its root
        lambda x: float(x > roots[0]) - 0.5,  # a step: bisection all the way
    ]
    f = funcs[shape]
    fa, fb = f(a), f(b)
    if fa != 0 and fb != 0 and math.copysign(1, fa) == math.copysign(1, fb):
        return  # no bracket: covered by the error test
    _same_brentq(f, a, b, **kw)


def test_brentq_fails_as_scipy_does() -> None:
    cases: list[tuple[Callable[[float], float], float, float, dict[str, Any]]] = [
        (lambda x: x * x + 1, -1.0, 1.0, {}),  # no sign change
        (lambda x: math.nan if x > 0.3 else x - 0.5, 0.0, 1.0, {}),  # NaN
        (lambda x: math.tanh(4 * (x - 0.3)) ** 3, 0.0, 1.0, {"maxiter": 3}),  # not converged
        (lambda x: x - 0.5, 0.0, 1.0, {"xtol": 0.0}),
        (lambda x: x - 0.5, 0.0, 1.0, {"rtol": 1e-17}),
        (lambda x: x - 0.5, 0.0, 1.0, {"maxiter": -1}),
    ]
    for f, a, b, kw in cases:
        with pytest.raises((ValueError, RuntimeError)):
            optimize.brentq(f, a, b, **kw)
        _same_brentq(f, a, b, **kw)
    # a root at an end of the bracket is returned at once, by both
    assert _same_brentq(lambda x: x - 1.0, 1.0, 2.0) == 1.0
    assert _same_brentq(lambda x: x - 2.0, 1.0, 2.0) == 2.0


def _compare_calls(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[float]:
    """Make ``module.brentq`` run both solvers on the caller's own function."""
    roots: list[float] = []

    def both(f: Callable[[float], float], a: float, b: float, **kw: Any) -> float:
        roots.append(_same_brentq(f, a, b, **kw))
        assert isinstance(roots[-1], float)  # a root, not an error
        return roots[-1]

    monkeypatch.setattr(module, "brentq", both)
    return roots


def test_the_smooth_ece_fixed_point_is_scipys(monkeypatch: pytest.MonkeyPatch) -> None:
    roots = _compare_calls(monkeypatch, smooth)
    rng = np.random.default_rng(4)
    for cells, rows, skew in ((6, 300, 1.0), (101, 1000, 0.7), (101, 80, 1.4), (40, 5000, 0.9), (300, 900, 1.1)):
        v = np.sort(rng.choice(np.linspace(0, 100, 1001), cells, replace=False))
        n = rng.multinomial(rows, np.ones(cells) / cells)
        k = rng.binomial(n, (v / 100) ** skew)
        smooth.smooth_ece_detail(from_counts(v[n > 0], n[n > 0], k[n > 0], scale=PCT))
    assert len(roots) >= 4  # the fixed point was bracketed, not at a bound, in most tables


def test_the_temperature_fit_is_scipys(monkeypatch: pytest.MonkeyPatch) -> None:
    roots = _compare_calls(monkeypatch, maps.fitters)
    v = np.arange(50.0, 101.0)
    n = np.full(v.size, 200)
    rng = np.random.default_rng(5)
    for temp in (0.7, 1.0, 2.5):
        z = np.log((v + 0.5) / (101 - v - 0.5))
        k = rng.binomial(n, 1 / (1 + np.exp(-z / temp)))
        maps.fit_map(from_counts(v, n, k, scale=PCT), "temperature")
    # right answers falling with the stated value: the non-positive slope's search
    k = rng.binomial(n, np.linspace(0.9, 0.4, v.size))
    maps.fit_map(from_counts(v, n, k, scale=PCT), "temperature")
    assert len(roots) == 4


# ---------------------------------------------------------------- scipy.fft.next_fast_len
def test_the_smooth_ece_fast_length_is_scipy_next_fast_len() -> None:
    from scipy import fft

    rng = np.random.default_rng(9)
    for n in [*range(1, 5001), *(int(x) for x in rng.integers(5001, 10**12, 300))]:
        assert smooth._fast_len(n) == fft.next_fast_len(n, real=True), n


# ---------------------------------------------------------------- whole commands
ROOT = Path(__file__).resolve().parent.parent


def test_an_audit_writes_the_same_bytes_by_the_ports_as_by_scipy(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """300 rows over a 0-100 scale (101 cells): the CORP bootstrap's 2,000 fits by the
    lockstep port, then by SciPy's PAVA; the audit's JSON is the same to the byte."""
    path = tmp_path / "scale300.jsonl"
    rng = np.random.default_rng(8)
    v = rng.integers(0, 101, 300)
    path.write_text("".join(json.dumps({"id": f"i{i}", "confidence": int(c), "correct": bool(rng.random() < c / 110)})
                            + "\n" for i, c in enumerate(v)))
    port = isotonic._pav_rows_port
    ported: list[int] = []
    monkeypatch.setattr(isotonic, "_pav_rows_port", lambda *a: ported.append(a[0].shape[0]) or port(*a))
    outs = []
    for imported in (False, True):
        monkeypatch.setattr(isotonic, "_optimize_imported", lambda imported=imported: imported)
        code, out, err = run(["audit", path, "--json"], capsys)
        assert code == 0, err
        outs.append(out)
    assert ported == [2000]  # the bootstrap's fits ran by the port once, by SciPy once
    assert outs[0] == outs[1] and '"corp"' in outs[0]


def test_a_fresh_process_writes_the_golden_json_by_the_ports() -> None:
    """This process has imported scipy.optimize (the comparisons above), so the golden tests
    run in it take SciPy's PAVA; a fresh process takes the ports and writes the golden
    files of tests/test_json_golden.py byte for byte."""
    from tests.test_json_golden import CASES, GOLDEN

    names = ["audit_judge_a.json", "route_judge_a.json", "fit_judge_a.json"]
    code = ("import io, contextlib, json, sys\nfrom calib.cli.main import main\nouts = []\n"
            f"for argv in {[CASES[n] for n in names]!r}:\n"
            "    buf = io.StringIO()\n    with contextlib.redirect_stdout(buf):\n        main(argv)\n"
            "    outs.append(buf.getvalue())\n"
            "print(json.dumps(['scipy.optimize' in sys.modules, outs]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    imported, outs = json.loads(out.splitlines()[-1])
    assert not imported
    for name, text in zip(names, outs, strict=True):
        assert text == (GOLDEN / name).read_text(encoding="utf-8"), name
