"""A small audit imports only what it needs (issue 13, point 3); the times are in bench/.

Each check runs a fresh interpreter and reads ``sys.modules``: which libraries were
imported, never how long it took.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from calib.readers import stated
from calib.readers.base import LoadOptions, Source

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "judge_b_synthetic.jsonl"


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_loading_a_small_jsonl_does_not_import_pyarrow() -> None:
    assert SAMPLE.stat().st_size < stated.PER_LINE_BELOW
    mods = _modules_after(f"from calib.loading import load\nload({str(SAMPLE)!r})")
    assert "pyarrow" not in mods and "calib.readers.stated.columnar" not in mods


def test_audit_json_of_a_small_file_imports_neither_pandas_nor_pyarrow() -> None:
    code = ("import io, contextlib\nfrom calib.cli.main import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['audit', {str(SAMPLE)!r}, '--json'])")
    mods = _modules_after(code)
    assert "pandas" not in mods and "pyarrow" not in mods


def test_text_audit_of_a_small_file_imports_neither_pandas_nor_pyarrow() -> None:
    code = ("import io, contextlib\nfrom calib.cli.main import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['audit', {str(SAMPLE)!r}])")
    mods = _modules_after(code)
    assert "calib.present.text_report" in mods  # the text report was written
    assert "pandas" not in mods and "pyarrow" not in mods
    # the failure-prediction block is written; its figure (plotly) is not drawn
    assert "calib.present.failure" in mods and "plotly" not in mods


def test_starting_the_cli_imports_no_report_wording() -> None:
    """Every command's parser is built at start; the report text modules load when a
    command writes its report (the routing and fit texts did so at start)."""
    mods = _modules_after("import calib.cli.main")
    assert not {"calib.present.explain", "calib.present.meanings"} & mods


def test_estimating_from_traffic_does_not_import_scipy_stats() -> None:
    assert "scipy.stats" not in _modules_after("import calib.traffic.estimate")


def test_the_default_path_reads_a_small_file_as_the_fast_path_does() -> None:
    src = Source("judge.jsonl", SAMPLE.read_bytes())
    rows, report = stated.read(src, LoadOptions())
    fast_rows, fast_report = stated.read(src, LoadOptions(), fast=True)
    assert report.to_dict() == fast_report.to_dict()
    for name in ("stated", "prob", "correct", "line", "item_id"):
        assert np.array_equal(getattr(rows, name), getattr(fast_rows, name)), name


def test_the_threshold_decision_does_not_import_scipy_stats() -> None:
    """scipy.stats costs a fresh server's first page about half a second (its import parses
    hundreds of docstrings); the decision's Clopper-Pearson bound needs only scipy.special."""
    code = ("from calib.loading import load\nfrom calib.decision import decide\n"
            f"decide(load({str(SAMPLE)!r}), target=0.1)")
    mods = _modules_after(code)
    assert "calib.decision.risk" in mods and "scipy.stats" not in mods


def test_cp_upper_is_the_beta_quantile() -> None:
    from scipy import stats

    from calib.decision.risk import cp_upper

    rng = np.random.default_rng(3)
    n = rng.integers(1, 10**6, 5000).astype(np.float64)
    e = np.floor(rng.random(n.size) * n)
    e[:50] = 0
    for c in (0.5, 0.9, 0.95, 0.999):
        assert np.array_equal(cp_upper(e, n, c), stats.beta.ppf(c, e + 1, n - e))
    assert cp_upper(3.0, 3.0, 0.95) == 1.0 and np.isnan(cp_upper(0.0, 0.0, 0.95))


def test_importing_the_engine_does_not_import_scipy_optimize() -> None:
    """scipy.optimize's import (linprog, shgo, scipy.linalg.interpolative, its docstrings
    parsed) costs a fresh process about 0.15 s: calib.solvers ports the two routines calib
    used (Brent's root, PAVA); only a PAVA on wide tables calls SciPy's."""
    for module in ("calib.audit", "calib.routing", "calib.decision", "calib.curves", "calib.maps"):
        mods = _modules_after(f"import {module}")
        assert module in mods and "scipy.optimize" not in mods, module


def test_routing_a_small_file_does_not_import_scipy_optimize() -> None:
    code = ("import io, contextlib\nfrom calib.cli.main import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['route', {str(SAMPLE)!r}, '--json'])")
    mods = _modules_after(code)
    assert "calib.routing" in mods and "scipy.optimize" not in mods


# ---------------------------------------------------------------- issue 29: route and fit
#: Libraries a small route or fit has no use for.
_HEAVY = ("pandas", "pyarrow", "scipy.sparse", "scipy.optimize", "scipy.stats")


def _cli_modules(*argv: str) -> set[str]:
    code = ("import io, contextlib\nfrom calib.cli.main import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main({list(argv)!r})")
    return _modules_after(code)


def test_loading_a_small_jsonl_does_not_import_scipy_sparse() -> None:
    """calib.loading imports calib.clusters, whose sparse tables only clustered rows need."""
    mods = _modules_after(f"from calib.loading import load\nload({str(SAMPLE)!r})")
    assert "calib.clusters" in mods and "scipy.sparse" not in mods


def test_small_route_and_fit_import_no_heavy_library() -> None:
    for argv in (("route", str(SAMPLE), "--json"), ("route", str(SAMPLE)),
                 ("fit", str(SAMPLE), "--method", "platt", "--json"), ("fit", str(SAMPLE), "--method", "isotonic")):
        mods = _cli_modules(*argv)
        assert "calib.maps" in mods, argv
        assert not set(_HEAVY) & mods, (argv, set(_HEAVY) & mods)


def test_a_small_audit_imports_neither_pandas_nor_scipy_stats() -> None:
    mods = _cli_modules("audit", str(SAMPLE), "--json")
    assert "calib.audit" in mods and not {"pandas", "pyarrow", "scipy.stats"} & mods


def test_sweep_records_are_the_frames_records() -> None:
    """Sweep.to_dict builds its records without pandas: the same records as the frame's
    (NaN as None, numpy numbers as Python ones), with and without costs."""
    from dataclasses import replace

    from calib.loading import load
    from calib.routing import basis, sweep

    sw = sweep(basis(load(str(SAMPLE)).table), cost_review=1.0, cost_miss=5.0)
    none_accepted = replace(  # the risk of a threshold that accepts nothing is NaN
        sw, risk=np.where(np.arange(sw.risk.size) % 3 == 0, np.nan, sw.risk), cost_total=None)
    for s in (sw, none_accepted):
        want = s.to_frame().replace({np.nan: None}).to_dict(orient="records")
        got = s.to_dict()["rows"]
        assert json.dumps(got) == json.dumps(want)
        assert [[type(v) for v in r.values()] for r in got] == [[type(v) for v in r.values()] for r in want]


# ---------------------------------------------------------------- issue 29: no scipy.optimize
#: scipy.optimize and what, on these paths, only it imported (shgo: scipy.spatial), and
#: scipy.fft (a small table's smooth ECE used only its next_fast_len).
_UNUSED = {"scipy.optimize", "scipy.linalg", "scipy.sparse.linalg", "scipy.spatial", "scipy.fft"}


def test_a_300_row_audit_route_and_fit_do_not_import_scipy_optimize(tmp_path: Path) -> None:
    """The smooth ECE's root, the CORP bootstrap's 2,000 isotonic fits and the temperature
    map's slope run on calib.solvers (SciPy's routines, ported bit for bit; test_solvers):
    a 300-row command no longer pays scipy.optimize's import, on the sample's six stated
    values nor on 300 rows spread over a 0-100 scale (101 cells); nor scipy.fft's."""
    six = tmp_path / "judge300.jsonl"
    six.write_text("".join(SAMPLE.read_text().splitlines(keepends=True)[:300]))
    wide = tmp_path / "scale300.jsonl"
    wide.write_text("".join(json.dumps({"id": f"i{i}", "confidence": (37 * i) % 101, "correct": (7 * i) % 10 < 7}) + "\n"
                            for i in range(300)))
    argvs = [[cmd, str(path), *rest] for path in (six, wide)
             for cmd, *rest in (("audit", "--json"), ("audit",), ("route", "--json"),
                                ("fit", "--method", "temperature", "--json"), ("fit", "--method", "isotonic"))]
    # one interpreter runs them in turn (a module once imported stays in sys.modules, so
    # what each command added is what appeared after it)
    code = ("import io, contextlib, json, sys\nfrom calib.cli.main import main\nseen = []\n"
            f"for argv in {argvs!r}:\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n        code = main(argv)\n"
            f"    seen.append([code, 'calib.isotonic' in sys.modules, sorted(set({sorted(_UNUSED)!r}) & set(sys.modules))])\n"
            "print(json.dumps(seen))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    for argv, (code_, isotonic, heavy) in zip(argvs, json.loads(out.splitlines()[-1]), strict=True):
        assert code_ == 0 and isotonic and heavy == [], (argv, code_, heavy)
