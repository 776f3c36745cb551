"""Concurrent browser sessions on one share link, for the CI load test
(tests/e2e/test_load.py) and the soak benchmark (bench/bench_soak.py).

Each session is a Playwright browser context of one Chromium, driven with the async
API (one event loop in its own thread, so it never meets the sync API of the other
browser tests). A session opens the link, waits until the Routing page shows the
expected numbers (its *first render* time), then moves the review threshold with the
keyboard and waits for the numbers of the new threshold.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, Server, start_server
from tests.e2e.hosting import JUDGE, ROUTING_LABELS

T = TypeVar("T")

#: A switch Chromium ignores, to find this run's browser processes in /proc.
MARKER = f"--calib-load-run={os.getpid()}-{time.time_ns()}"

#: Many pages of one browser run at once: none may be throttled as a background tab
#: (timers and animation frames of hidden pages are slowed or stopped by default).
LOAD_ARGS = [
    *CHROMIUM_ARGS,
    MARKER,
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
]

#: The slider's positions for the judge sample (the values it used: one per distinct
#: routing, issue 22), the threshold the shared view opens at, and where the sessions
#: move it, in this order (session i starts at the i-th): one step up, the lowest position
#: (Home key), the top (End key), one step down... so no move takes more than two presses.
POSITIONS = (80.0, 90.0, 95.0, 100.0)
START = 90
TARGETS = (95, 80, 100)
SCALE = (POSITIONS[0], POSITIONS[-1])

#: Reads every metric of the main area as {label: value} in one round trip.
METRICS_JS = """() => {
    const out = {};
    for (const m of document.querySelectorAll('[data-testid="stMain"] [data-testid="stMetric"]')) {
        const l = m.querySelector('[data-testid="stMetricLabel"]');
        const v = m.querySelector('[data-testid="stMetricValue"]');
        if (l && v) out[l.innerText.trim()] = v.innerText.trim();
    }
    return out;
}"""


def make_link_share(data_dir: Path, lo: float = START) -> str:
    """A share of the judge sample opening on the Routing page at threshold ``lo``,
    written into the server's data directory; returns the token."""
    view = {"v": 1, "params": {"page": "routing", "lo": str(lo)},
            "datasets": [{"kind": "file", "filename": "judge.jsonl", "overrides": {}}]}
    r = Store.open(data_dir).share([DatasetSpec.from_upload("judge", "judge.jsonl", JUDGE.read_bytes())], view)
    return r.token


#: CPU seconds of the browser of the last run (read just before it closed).
BROWSER_CPU: dict[str, float] = {}


@dataclass
class SessionResult:
    index: int
    first_render_s: float | None = None
    moves_s: list[float] = field(default_factory=list)
    error: str | None = None
    shown: dict[str, str] = field(default_factory=dict)


async def _wait_numbers(page, want: dict[str, str], timeout_s: float) -> dict[str, str]:
    deadline = time.monotonic() + timeout_s
    got: dict[str, str] = {}
    while time.monotonic() < deadline:
        try:
            got = await page.evaluate(METRICS_JS)
        except Exception:  # the page is navigating or re-rendering
            got = {}
        if {k: got.get(k) for k in want} == want:
            return got
        await asyncio.sleep(0.1)
    raise TimeoutError(f"wanted {want}, the page shows {got}")


def _slider(page):
    """The review threshold's slider (in the Routing page's body)."""
    return page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]').first


async def _shown(slider) -> float:
    """What the slider shows (its thumb's label: a select slider's value is its index)."""
    return float(await slider.get_attribute("aria-valuetext"))


async def _press_towards(page, target: float) -> None:
    """Keyboard only, few key presses (each one is a server round trip): Home / End for
    the ends of the scale, arrows otherwise (one press per position)."""
    slider = _slider(page)
    now = await _shown(slider)
    await slider.focus()
    if target in SCALE:
        await page.keyboard.press("Home" if target == SCALE[0] else "End")
        return
    n = POSITIONS.index(target) - POSITIONS.index(now)
    for _ in range(abs(n)):
        await page.keyboard.press("ArrowRight" if n > 0 else "ArrowLeft")


async def _move(page, target: float, want: dict[str, str], timeout_s: float) -> dict[str, str]:
    """Press towards ``target`` and wait until the page shows ``want``. Every key press
    is a rerun, and a rerun that answers late re-renders the slider with the value it
    saw: when the slider has rested away from ``target`` for a second, press again."""
    await _press_towards(page, target)
    deadline = time.monotonic() + timeout_s
    off_since: float | None = None
    got: dict[str, str] = {}
    while time.monotonic() < deadline:
        try:
            got = await page.evaluate(METRICS_JS)
            value = await _shown(_slider(page))
        except Exception:  # re-rendering
            await asyncio.sleep(0.1)
            continue
        on_target = abs(value - target) < 1e-9
        if on_target and {k: got.get(k) for k in want} == want:
            return got
        if on_target:
            off_since = None
        elif off_since is None:
            off_since = time.monotonic()
        elif time.monotonic() - off_since > 1.0:
            await _press_towards(page, target)
            off_since = None
        await asyncio.sleep(0.1)
    raise TimeoutError(f"wanted {want} at threshold {target}, the page shows {got}")


async def _session(browser, url: str, index: int, moves: int, expected: Callable[[float], dict[str, str]],
                   timeout_s: float, results: list[SessionResult]) -> None:
    res = SessionResult(index)
    results.append(res)
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(timeout_s * 1000)
    try:
        page = await ctx.new_page()
        t0 = time.monotonic()
        await page.goto(url, timeout=timeout_s * 1000)
        await _wait_numbers(page, expected(START), timeout_s)
        res.first_render_s = time.monotonic() - t0
        for m in range(moves):
            target = float(TARGETS[(index + m) % len(TARGETS)])
            t1 = time.monotonic()
            res.shown = await _move(page, target, expected(target), timeout_s)
            res.moves_s.append(time.monotonic() - t1)
    except Exception as exc:  # recorded, asserted by the caller
        res.error = f"{type(exc).__name__}: {exc}"[:500]
    finally:
        await ctx.close()


async def _run(url: str, sessions: int, moves: int, expected, timeout_s: float, stagger_s: float,
               rounds: int) -> tuple[list[SessionResult], float]:
    from playwright.async_api import async_playwright

    results: list[SessionResult] = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=LOAD_ARGS)
        started = time.monotonic()
        try:
            for r in range(rounds):
                tasks = []
                for i in range(sessions):
                    tasks.append(asyncio.create_task(
                        _session(browser, url, r * sessions + i, moves, expected, timeout_s, results)))
                    await asyncio.sleep(stagger_s)
                await asyncio.gather(*tasks)
            BROWSER_CPU["last"] = browser_cpu_seconds()
        finally:
            await browser.close()
        return results, time.monotonic() - started


def run_sessions(url: str, *, sessions: int, moves: int, expected: Callable[[float], dict[str, str]],
                 timeout_s: float = 180.0, stagger_s: float = 0.0, rounds: int = 1
                 ) -> tuple[list[SessionResult], float]:
    """Run ``rounds`` waves of ``sessions`` concurrent sessions (in a thread of its own);
    returns the per-session results and the wall time."""
    return _in_thread(lambda: _run(url, sessions, moves, expected, timeout_s, stagger_s, rounds), "load-sessions")


def _in_thread(make: Callable[[], Coroutine[Any, Any, T]], name: str) -> T:
    """Run the coroutine ``make()`` in an event loop of its own thread (pytest's thread
    may already run one) and return its result or raise its exception here."""
    out: dict[str, object] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(make())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            out["error"] = exc

    t = threading.Thread(target=target, name=name)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["value"]  # type: ignore[return-value]


async def _soak(url: str, workers: int, duration_s: float, moves: int, expected, timeout_s: float,
                on_sample: Callable[[float], None] | None) -> tuple[list[SessionResult], float]:
    from playwright.async_api import async_playwright

    results: list[SessionResult] = []
    counter = iter(range(10**9))
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=LOAD_ARGS)
        started = time.monotonic()
        deadline = started + duration_s

        async def worker() -> None:
            while time.monotonic() < deadline:
                await _session(browser, url, next(counter), moves, expected, timeout_s, results)

        async def sampler() -> None:
            while time.monotonic() < deadline:
                if on_sample is not None:
                    on_sample(time.monotonic() - started)
                await asyncio.sleep(5)

        try:
            await asyncio.gather(sampler(), *(worker() for _ in range(workers)))
            BROWSER_CPU["last"] = browser_cpu_seconds()
        finally:
            await browser.close()
        return results, time.monotonic() - started


def run_soak(url: str, *, workers: int, duration_s: float, moves: int,
             expected: Callable[[float], dict[str, str]], timeout_s: float = 180.0,
             on_sample: Callable[[float], None] | None = None) -> tuple[list[SessionResult], float]:
    """``workers`` concurrent users, each opening the link, moving the threshold
    ``moves`` times and closing, again and again for ``duration_s`` seconds."""
    return _in_thread(lambda: _soak(url, workers, duration_s, moves, expected, timeout_s, on_sample), "soak-sessions")


def cpu_seconds(pid: int) -> float:
    """CPU time of a process and of its children it has reaped (user + system), s."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def browser_cpu_seconds() -> float:
    """CPU time of this run's Chromium (the process started with :data:`MARKER` and
    every process below it), s. Read before the browser closes."""
    parent: dict[int, int] = {}
    root = None
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if root is None and MARKER.encode() in (d / "cmdline").read_bytes():
                root = int(d.name)
        except OSError:
            continue
    if root is None:
        return float("nan")
    tree, frontier = {root}, [root]
    while frontier:
        kids = [p for p, pp in parent.items() if pp in frontier and p not in tree]
        tree.update(kids)
        frontier = kids
    total = 0.0
    for pid in tree:
        with contextlib.suppress(OSError):
            total += cpu_seconds(pid)
    return total


def peak_memory_mb(pid: int) -> float:
    """Peak resident memory (VmHWM) of a process, MB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc status")


def resident_memory_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc status")


def percentile(xs: Sequence[float], q: float) -> float:
    """The ``q``-th percentile by linear interpolation (numpy's default method)."""
    import numpy as np

    return float(np.percentile(np.asarray(xs, dtype=float), q))


def summary(results: list[SessionResult], wall_s: float, peak_mb: float,
            server_cpu_s: float | None = None) -> dict[str, object]:
    firsts = [r.first_render_s for r in results if r.first_render_s is not None]
    moves = [m for r in results for m in r.moves_s]
    return {
        "sessions": len(results),
        "sessions_ok": sum(r.error is None for r in results),
        "first_render_s": {"p50": percentile(firsts, 50), "p95": percentile(firsts, 95), "max": max(firsts)}
        if firsts else None,
        "threshold_move_s": {"p50": percentile(moves, 50), "p95": percentile(moves, 95), "max": max(moves),
                             "count": len(moves)} if moves else None,
        "peak_server_memory_mb": round(peak_mb, 1),
        "server_cpu_s": None if server_cpu_s is None else round(server_cpu_s, 1),
        "browser_cpu_s": round(BROWSER_CPU.get("last", float("nan")), 1),
        "wall_s": round(wall_s, 2),
        "labels": list(ROUTING_LABELS),
        "errors": [asdict(r) for r in results if r.error is not None][:5],
    }


def write_json(path: Path, data: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def error_lines(log: str) -> list[str]:
    """The lines of a server log that speak of an error (none may appear under load)."""
    return [line for line in log.splitlines() if re.search(r"Traceback|Error|Exception|CRITICAL", line)]


def measured_run(
    tmp: Path, drive: Callable[[Server, str], tuple[list[SessionResult], float]],
) -> tuple[dict[str, object], list[SessionResult], list[str]]:
    """Start a server in ``tmp``, make a link share, run ``drive(server, share_url)`` (which
    returns the sessions' results and the wall time), and measure it: ``(figures of
    :func:`summary`, results, the server log's error lines)``."""
    srv = start_server(tmp)
    try:
        token = make_link_share(srv.data_dir)
        cpu0 = cpu_seconds(srv.proc.pid)
        results, wall = drive(srv, f"{srv.url}/?share={token}")
        peak = peak_memory_mb(srv.proc.pid)
        server_cpu = cpu_seconds(srv.proc.pid) - cpu0
    finally:
        srv.stop()
    return summary(results, wall, peak, server_cpu), results, error_lines(srv.log())
