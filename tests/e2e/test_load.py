"""Load: 20 concurrent browser sessions on one share link, on loopback.

Every session opens the link, must show the right routing numbers (counted row by
row in the test, and cross-checked with ``calib.routing``), then moves the review
threshold with the keyboard and must show the numbers of its new threshold. The
server log must hold no error. The p95 time to first render and the server's peak
memory (VmHWM) are printed and written to test-artifacts/load.json; they are
recorded, not asserted (speed is measured, never a pass/fail condition here).
"""

from __future__ import annotations

from calib import routing
from calib.loading import load
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.hosting import JUDGE, ROUTING_LABELS, expected_routing, read_rows
from tests.e2e.loadrun import START, TARGETS, measured_run, run_sessions, write_json

SESSIONS = 20


def test_twenty_sessions_on_one_link(tmp_path):
    rows = read_rows()
    table = load(JUDGE).table
    b = routing.basis(table)
    for lo in (START, *TARGETS):
        # the per-row count and the engine agree (and the targets move the numbers)
        r = routing.route(b, lo)
        want = expected_routing(rows, lo)
        assert (f"{r.to_person:,}", f"{r.accepted:,}", f"{r.errors_slipping:,}", f"{r.errors_caught:,}") == (
            want["Sent to a person"], want["Accepted unseen"], want["Errors slipping through"], want["Errors caught"])
    assert len({tuple(expected_routing(rows, t).values()) for t in (START, *TARGETS)}) == 1 + len(TARGETS)

    figures, results, bad = measured_run(tmp_path, lambda srv, url: run_sessions(
        url, sessions=SESSIONS, moves=1, expected=lambda lo: expected_routing(rows, lo)))
    wall, peak, server_cpu = figures["wall_s"], figures["peak_server_memory_mb"], figures["server_cpu_s"]
    write_json(ARTIFACTS / "load.json", figures)
    first = figures["first_render_s"]
    print(f"\nload: {figures['sessions_ok']}/{SESSIONS} sessions ok in {wall:.1f} s; "
          f"first render p50 {first['p50']:.2f} s, p95 {first['p95']:.2f} s, max {first['max']:.2f} s; "
          f"threshold move p95 {figures['threshold_move_s']['p95']:.2f} s; peak server memory {peak:.0f} MB; "
          f"CPU: server {server_cpu:.0f} s, browser {figures['browser_cpu_s']} s")

    assert [r.error for r in results if r.error] == []
    assert len(results) == SESSIONS and all(len(r.moves_s) == 1 for r in results)
    for r in results:
        assert {k: r.shown[k] for k in ROUTING_LABELS} == expected_routing(
            rows, TARGETS[r.index % len(TARGETS)])
    assert bad == [], "\n".join(bad[:20])
