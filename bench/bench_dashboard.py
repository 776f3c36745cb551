"""Benchmark (not a test): dashboard server time after a review-threshold move.

Loads a 1,000,000-row stated-confidence JSONL through the real upload widget
(Streamlit's AppTest, headless), opens the Routing page and moves the threshold
slider 20 times, printing for each move

- the threshold panel's own time (the fragment that a threshold move reruns in a
  browser session: routing lookup, numbers, reliability diagram with the threshold,
  risk-coverage curve), read from ``st.session_state`` where ``dashboard/threshold.py`` leaves it;
- the full AppTest rerun of the page (an upper bound: AppTest reruns the whole page,
  a browser reruns only the fragment).

Goal (issue 3): under 50 ms server time per threshold move. Browser time from key
press to updated numbers is measured by the Playwright suite.

Usage::

    python bench/bench_dashboard.py [--rows 1000000] [--moves 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_jsonl(rows: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    values = rng.choice([60, 70, 75, 80, 85, 90, 95, 100], size=rows, p=[.02, .03, .05, .2, .1, .2, .3, .1])
    right = rng.random(rows) < values / 100 * 0.8
    lines = [f'{{"id": "i{i}", "confidence": {v}, "correct": {"true" if c else "false"}}}'
             for i, (v, c) in enumerate(zip(values.tolist(), right.tolist(), strict=True))]
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--moves", type=int, default=20)
    args = ap.parse_args()

    from streamlit.testing.v1 import AppTest

    from dashboard.keys import FRAGMENT_TIMING_KEY

    t = time.perf_counter()
    data = make_jsonl(args.rows)
    print(f"wrote {args.rows:,} rows ({len(data) / 1e6:.1f} MB) in {time.perf_counter() - t:.1f} s")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    t = time.perf_counter()
    at.file_uploader[0].set_value(("big.jsonl", data, "application/octet-stream"))
    at.run()
    print(f"upload + load + first render: {time.perf_counter() - t:.1f} s")
    at.switch_page("pages/5_Routing.py")
    t = time.perf_counter()
    at.run()
    print(f"Routing page, first run (bootstrap of the routing basis, 2,000 resamples): {time.perf_counter() - t:.2f} s")
    assert not at.exception, at.exception
    frag, full = [], []
    values = [70.0, 75.0, 80.0, 85.0, 90.0, 95.0, 100.0]
    for i in range(args.moves):
        at.select_slider(key="w_lo").set_value(values[i % len(values)])  # in the Routing page body
        t = time.perf_counter()
        at.run()
        full.append(time.perf_counter() - t)
        frag.append(at.session_state[FRAGMENT_TIMING_KEY])
        assert not at.exception, at.exception
    ms = lambda xs: f"median {1000 * statistics.median(xs):.1f} ms, max {1000 * max(xs):.1f} ms"  # noqa: E731
    print(f"threshold panel (fragment) per move: {ms(frag)}")
    print(f"whole page rerun in AppTest per move: {ms(full)}")


if __name__ == "__main__":
    main()
