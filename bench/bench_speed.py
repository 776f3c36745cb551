"""Benchmark (not a test): the speed budgets of issues 13 and 29, each beside its floor.

Absolute times on the project's 2-core machine move from run to run, so every
figure is printed next to a floor measured in the same run, the same way:

============================================  ======  ==================================
figure                                        budget  floor
============================================  ======  ==================================
``calib audit`` on a 300-row JSONL, end to     0.8 s  ``python -c "import numpy,
end (a fresh process)                                 pandas"``
``calib audit --json``, 1,000,000 rows,        1.5 s  a pyarrow parse of the same file
integer confidences, 2,000 resamples                  (``pyarrow.json.read_json``, fresh
                                                      process, import included)
the same, continuous confidences               2.5 s  the same floor on that file
dashboard, three judges loaded: page switch,   0.3 s  a one-widget Streamlit page
warm (server side, AppTest)                           (AppTest rerun of ``st.button``)
the same, first visit in a fresh server, to    0.5 s  the first run of that page in a
its first figure                                      fresh process
dashboard: a Platt map fit shown after         1.0 s  the same floor
choosing it on the Recalibration page
dashboard, 1,000,000 rows loaded: key press   0.15 s  the same key press on a page of
on the Routing page's review threshold ->             one select slider and one metric
routing numbers updated (Chromium)                    (:data:`bench_browser.KEYS_FLOOR_APP`)
a share link of three judges on the Routing    1.5 s  a page that draws one tiny figure
page: first figure drawn, fresh browser               with the dashboard's frame, fresh
context, warm server (Chromium)                       context, warm server
============================================  ======  ==================================

Each row prints the figure, its floor, their ratio, the target ratio of issue 29 where
it sets one (300 rows: 1.1x ``python -c "import numpy, pandas"``; 1,000,000 rows: 2x the
parse for integer scores, 3x for continuous ones) and the load average (1 minute) when
the row was measured: the first line says whether the machine was quiet (load average
below 1) or loaded. The ratio of a command line is the median over the rounds of its
time divided by the floor's in the same round (figure and floor run in turn); the CPU
seconds (user + system, every thread) of both are printed beside it. Only the ratios
are comparable between runs on a loaded machine.
The commands run without ``PYTHONDONTWRITEBYTECODE`` (removed from their environment):
as for an installed package, calib's modules are read from their cached bytecode, not
compiled anew in every process (about 0.15 s of a small audit's start).

Page switches are timed two ways. *Warm*: AppTest's whole run of the page after
every page has been visited once (engine results cached, as on a warm server).
*Fresh server*: in a new process, the three judges picked on the Data page, then the
first visit to the page, timed to the first figure (the first ``show_figure``
call returning, see :func:`_watch_figures`) and to the end of the run. The map fit is
Recalibration opened, then Platt chosen, in a new process. AppTest runs the scripts
in-process without a browser: the figures are server time only. Each figure is the
median of ``--repeat`` runs.

The last two rows are measured in Debian's Chromium (Playwright) with
:mod:`bench_browser`'s functions, the one way each is measured: the key press as the
median of ``--moves`` presses from ``keydown`` to the new text of "Sent to a person"
(:func:`bench_browser.key_presses`), with ``--rows`` rows uploaded; the share link as
the median of ``--repeat`` opens, from the navigation's start to the first figure's
trace drawn in its frame, on the page's own clock (:func:`bench_browser.share_first_figures`).
``--skip-browser`` leaves them out. Prints figures; asserts nothing.

``--busy N`` loads the machine on purpose (N processes spinning on a core throughout), for
the loaded run beside the quiet one.

Run: ``python bench/bench_speed.py [--repeat 5] [--rows 1000000] [--skip-big] [--skip-dashboard]
[--skip-browser] [--moves 20] [--busy N]``
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_audit import write_continuous, write_int  # noqa: E402

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

PAGES = ("pages/1_Overview.py", "pages/2_Scale.py", "pages/3_Reliability.py",
         "pages/4_Recalibration.py", "pages/5_Routing.py", "pages/6_Report.py")
#: Pages whose first visit is timed in a fresh server (Recalibration's is the map fit;
#: Report draws its figures inside an HTML report, not with show_figure).
FIRST_VISIT = ("pages/1_Overview.py", "pages/2_Scale.py", "pages/3_Reliability.py", "pages/5_Routing.py")
JUDGES = ["judge_a_synthetic.jsonl", "judge_b_synthetic.jsonl", "judge_c_synthetic.jsonl"]
ONE_WIDGET = "import streamlit as st\n\nst.button('ok')\n"
#: the commands' environment: bytecode cached, as for an installed package (see above)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def load() -> float:
    """The 1-minute load average (printed beside every figure)."""
    return os.getloadavg()[0]


def machine(busy: int = 0) -> str:
    """Quiet (load average below 1, nothing spinning) or loaded, with the load average and the cores."""
    la = load()
    state = "quiet" if la < 1 and not busy else "loaded"
    spin = f", {busy} spinning process(es) started by --busy" if busy else ""
    return f"{state} machine: load average {la:.2f} on {os.cpu_count()} cores{spin}"


@dataclass(frozen=True)
class Timed:
    """One command's medians over the rounds: wall and CPU seconds (user + system, all
    its threads), and the median over the rounds of its wall time divided by the floor's
    in the same round (the floor's own ratio is 1)."""

    wall: float
    cpu: float
    ratio: float


def walls(cmds: list[list[str]], repeat: int) -> list[Timed]:
    """Each of ``cmds`` run ``repeat`` times in a fresh process, the commands taken in
    turn so that a change of load hits the figure and its floor (``cmds[0]``) alike."""
    wall: list[list[float]] = [[] for _ in cmds]
    cpu: list[list[float]] = [[] for _ in cmds]
    for _ in range(repeat):
        for cmd, w, c in zip(cmds, wall, cpu, strict=True):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, check=True, env=ENV)
            w.append(time.perf_counter() - t)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            c.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return [Timed(statistics.median(w), statistics.median(c),
                  statistics.median(a / b for a, b in zip(w, wall[0], strict=True)))
            for w, c in zip(wall, cpu, strict=True)]


def row(what: str, figure: float, budget: float | None, floor: float, floor_what: str,
        target: float | None = None, paired: Timed | None = None, floor_cpu: float | None = None) -> None:
    """One printed figure: beside its budget (``None``: shown for information, the budget
    is on another row), its floor, the ratio to the floor (the median of the rounds'
    ratios when ``paired`` is given; against issue 29's target ratio when it sets one),
    the CPU seconds of both when measured, and the load average."""
    if budget is None:
        verdict = "(for information)        "
    else:
        verdict = f"(budget {budget:4g} s, {'met' if figure <= budget else 'NOT met':<7})"
    r = paired.ratio if paired is not None else (figure / floor if floor > 0 else math.nan)
    ratio = f"{r:5.2f}x"
    if target is not None:
        ratio += f" (target {target:.1f}x, {'met' if r <= target else 'NOT met':<7})"
    cpu = f"  cpu {paired.cpu:6.3f} s / {floor_cpu:6.3f} s" if paired is not None and floor_cpu is not None else ""
    print(f"{what:<62} {figure:6.3f} s  {verdict}  floor {floor:6.3f} s  {ratio:<29}{cpu}  "
          f"load {load():4.2f}  floor: {floor_what}")


def cli_small(tmp: Path, repeat: int) -> None:
    path = tmp / "judge300.jsonl"
    lines = (ROOT / "sample_data" / "judge_b_synthetic.jsonl").read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:300]))
    audit = [sys.executable, "-m", "calib", "audit", str(path)]
    floor, text, js = walls([[sys.executable, "-c", "import numpy, pandas"], audit, [*audit, "--json"]], repeat)
    what = "python -c 'import numpy, pandas'"
    row("calib audit, 300 rows, end to end", text.wall, 0.8, floor.wall, what, None, text, floor.cpu)
    row("calib audit --json, 300 rows, end to end", js.wall, 0.8, floor.wall, what, 1.1, js, floor.cpu)


def cli_big(tmp: Path, rows: int, repeat: int) -> None:
    parse = "import sys, pyarrow.json as pj; pj.read_json(sys.argv[1])"
    for name, write, budget, target in (("integer", write_int, 1.5, 2.0), ("continuous", write_continuous, 2.5, 3.0)):
        path = tmp / f"{name}.jsonl"
        write(path, rows)
        floor, fig = walls([[sys.executable, "-c", parse, str(path)],
                            [sys.executable, "-m", "calib", "audit", str(path), "--json"]], repeat)
        row(f"calib audit --json, {rows:,} rows, {name}", fig.wall, budget, floor.wall, "pyarrow parse of the file",
            target, fig, floor.cpu)


def _timed(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _loaded() -> AppTest:
    """The Data page with the three synthetic judges picked (AppTest, this process)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    at.multiselect(key="w_samples").set_value(JUDGES)
    at.run()
    assert not at.exception, at.exception
    return at


#: perf_counter() after each figure was handed to the page (dashboard.chart.show_figure)
_SHOWN: list[float] = []


def _watch_figures() -> None:
    """Note when each figure is handed to the page: every figure goes through
    :func:`dashboard.chart.show_figure`, which gets the frame component from the module's
    global ``_component``, so wrapping that sees every figure, whoever imported
    ``show_figure`` and when."""
    from dashboard import chart

    component = chart._component

    def watched_component() -> object:
        frame = component()

        def watched(*a: object, **kw: object) -> object:
            out = frame(*a, **kw)
            _SHOWN.append(time.perf_counter())
            return out

        return watched

    chart._component = watched_component  # type: ignore[assignment]


def _run(at: AppTest, what: str) -> float:
    t = time.perf_counter()
    at.run()
    dt = time.perf_counter() - t
    assert not at.exception, (what, at.exception)
    return dt


def _first_figure(at: AppTest, what: str) -> tuple[float, float]:
    """Seconds from the run's start to its first figure, and to its end."""
    _SHOWN.clear()
    t = time.perf_counter()
    whole = _run(at, what)
    assert _SHOWN, f"{what}: no figure"
    return _SHOWN[0] - t, whole


def one_fresh(page: str) -> None:
    """In a fresh process: judges loaded, then the first visit to ``page`` (a page name,
    or ``fit`` for Recalibration followed by choosing Platt); prints the seconds.
    Recalibration without a map shows no figure: its first visit is the ``fit`` figure."""
    _watch_figures()
    at = _loaded()
    if page == "fit":
        at.switch_page("pages/4_Recalibration.py")
        at.run()
        at.sidebar.selectbox(key="w_method").set_value("platt")
        print(*_first_figure(at, "Platt fit"))
        return
    at.switch_page(page)
    print(*_first_figure(at, page))


def floor_fresh() -> None:
    """In a fresh process: the first run of a one-widget page, then a rerun."""
    from streamlit.testing.v1 import AppTest

    with tempfile.TemporaryDirectory() as d:
        app = Path(d) / "one_widget.py"
        app.write_text(ONE_WIDGET)
        t = time.perf_counter()
        at = AppTest.from_file(str(app)).run()
        first = time.perf_counter() - t
        print(first, _timed(at.run, 5))


def _fresh(args: list[str], repeat: int) -> list[float]:
    outs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=ROOT, check=True,
                             env=ENV)
        outs.append([float(x) for x in out.stdout.split()])
    return [statistics.median(col) for col in zip(*outs, strict=True)]


def dashboard(repeat: int) -> None:
    first_floor, warm_floor = _fresh(["--floor"], repeat)
    at = _loaded()
    for page in PAGES:  # every page once: the engine results are cached from here on
        at.switch_page(page)
        _run(at, page)
        if page == "pages/4_Recalibration.py":  # a map chosen: the page then has its figures
            at.sidebar.selectbox(key="w_method").set_value("platt")
            _run(at, page)
    for page in PAGES:
        label = Path(page).stem.split("_", 1)[1]

        def visit(page: str = page) -> None:
            at.switch_page(page)
            _run(at, page)
        row(f"page switch to {label}, three judges, warm", _timed(visit, repeat), 0.3, warm_floor,
            "one-widget page rerun")
        if page in FIRST_VISIT:
            fig, whole = _fresh(["--one", page], repeat)
            row(f"  fresh server: first visit -> first figure ({label})", fig, 0.5, first_floor,
                "one-widget page, first run")
            row(f"  fresh server: first visit -> whole run ({label})", whole, None, first_floor,
                "one-widget page, first run")
    fig, whole = _fresh(["--one", "fit"], repeat)
    row("Platt chosen -> fitted map's figure, fresh server", fig, 1.0, first_floor, "one-widget page, first run")
    row("  the same, whole run", whole, None, first_floor, "one-widget page, first run")


def browser(repeat: int, rows: int, moves: int) -> None:
    """The figures only a real browser shows (Debian's Chromium, :mod:`bench_browser`'s
    measurements): a key press on the Routing page's review threshold to its updated
    numbers with ``rows`` rows loaded, beside the same on a one-slider page; a share link's
    first figure in a fresh browser context (warm server, median of ``repeat`` opens),
    beside a one-figure page's."""
    import bench_browser as bb
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_server

    with sync_playwright() as pw, tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            server = start_server(tmp / "keys")
            try:
                keys = bb.bench_keys(chromium, server, rows, moves, tmp)
            finally:
                server.stop()
            floor = bb.keys_floor(chromium, tmp / "keys-floor", moves)
            row(f"key press -> routing numbers, {rows:,} rows (browser, median)", statistics.median(keys.numbers),
                0.15, statistics.median(floor.numbers), "one-slider one-metric page, key press -> number")
            server = start_server(tmp / "share")
            try:
                got = bb.share_first_figures(chromium, bb.share_url(server), repeat)
            finally:
                server.stop()
            fig_floor = bb.figure_floor(chromium, tmp / "figure-floor", repeat)
            row("share link, three judges: first figure, fresh browser", statistics.median(x.in_page for x in got),
                1.5, statistics.median(x.in_page for x in fig_floor), "one-figure page, first figure, fresh browser")
        finally:
            chromium.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--skip-big", action="store_true", help="skip the 1,000,000-row command lines")
    ap.add_argument("--skip-dashboard", action="store_true")
    ap.add_argument("--skip-browser", action="store_true", help="skip the figures measured in Chromium")
    ap.add_argument("--moves", type=int, default=20, help="key presses timed in the browser")
    ap.add_argument("--busy", type=int, default=0, metavar="N",
                    help="load the machine on purpose: N processes spinning on a core for the whole run")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: one fresh-process measurement
    ap.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one or args.floor:
        one_fresh(args.one) if args.one else floor_fresh()
        return
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        if spinners:
            time.sleep(60)  # the 1-minute load average catches up with them
        print(f"{machine(args.busy)} (at the start)")
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            cli_small(tmp, args.repeat)
            if not args.skip_big:
                cli_big(tmp, args.rows, args.repeat)
            if not args.skip_dashboard:
                dashboard(args.repeat)
            if not args.skip_browser:
                browser(args.repeat, args.rows, args.moves)
        print(f"{machine(args.busy)} (at the end)")
    finally:
        for p in spinners:
            p.kill()


if __name__ == "__main__":
    main()
