"""A figure built while another thread imports pandas (tests/e2e/test_load.py on a
fresh server: 13 tracebacks "partially initialized module 'pandas' has no attribute
'Series'" in the log of 20 sessions).

Plotly takes ``sys.modules["pandas"]`` without the import lock when it builds a figure;
every page run first calls :func:`dashboard.page.pandas_ready`, which must wait for
another thread's import to finish. The race is made certain here: a meta-path hook holds
pandas half-made (in ``sys.modules``, not yet executed) for a second while the main thread
builds and serialises a figure, in a fresh interpreter so that pandas is not imported yet.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import importlib.abc, importlib.util, sys, threading, time
    import plotly.graph_objects as go
    from dashboard.page import pandas_ready

    assert "pandas" not in sys.modules
    started = threading.Event()

    class Slow(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "pandas":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec("pandas")
            real = spec.loader.exec_module

            def slow(module):  # the module is in sys.modules, still empty
                started.set()
                time.sleep(1.0)
                real(module)

            spec.loader.exec_module = slow
            return spec

    sys.meta_path.insert(0, Slow())
    threading.Thread(target=lambda: __import__("pandas"), daemon=True).start()
    started.wait(10)
    WAIT
    fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[0.1, 0.5, 0.9]))  # lists: plotly asks pandas
    spec = fig.to_json()
    assert '"y":[0.1,0.5,0.9]' in spec.replace(" ", ""), spec[:200]
    print("ok")
""")


def _run(wait: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT.replace("WAIT", wait)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_a_figure_waits_for_a_half_imported_pandas() -> None:
    r = _run("pandas_ready()")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_the_race_is_real_without_the_wait() -> None:
    # without the wait plotly reads the half-made module: what pandas_ready prevents
    r = _run("pass")
    assert r.returncode != 0 and "partially initialized module 'pandas'" in r.stderr, r.stderr[-2000:]
