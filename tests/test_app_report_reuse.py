"""The Report page builds its parts (every figure of the HTML report) once per session
for the same datasets and view (:func:`dashboard.report.session_report_parts`, issue 29:
a warm page switch under 0.3 s), and again when either changes."""

from __future__ import annotations

import pytest

import dashboard.report
from tests.apptest import app, ok

pytestmark = pytest.mark.usefixtures("fresh_caches")

REPORT = "pages/6_Report.py"


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the page builds the report's parts."""
    calls: list[int] = []
    build = dashboard.report.report_parts

    def counted(ctx):  # type: ignore[no-untyped-def]
        calls.append(1)
        return build(ctx)

    monkeypatch.setattr(dashboard.report, "report_parts", counted)
    return calls


def _contents(at) -> list[str]:  # type: ignore[no-untyped-def]
    """The lines under "What is in the report" (one per model, counts of its parts)."""
    return [t.value for t in at.text if " headline figures, " in t.value]


def test_report_parts_are_built_once_per_view_and_again_when_it_changes(monkeypatch):
    calls = _counted(monkeypatch)
    at = app()
    at.query_params.update({"sample": "judge_b_synthetic.jsonl,judge_c_synthetic.jsonl", "reps": "100"})
    ok(at.run())
    ok(at.switch_page(REPORT).run())
    first = _contents(at)
    assert len(first) == 2 and len(calls) == 1
    ok(at.switch_page("pages/1_Overview.py").run())
    ok(at.switch_page(REPORT).run())
    assert len(calls) == 1  # the same datasets and view: the parts of the first visit
    assert _contents(at) == first
    # a map chosen: each model's report gains its recalibration section, so it is built anew
    at.sidebar.selectbox(key="w_method").set_value("platt")
    ok(at.run())
    assert len(calls) == 2
    extra = [int(line.split(" tables, ")[1].split()[0]) for line in _contents(at)]
    assert extra == [int(line.split(" tables, ")[1].split()[0]) + 1 for line in first]
    # back to no map: the first parts' counts again (built anew: only the last is kept)
    at.sidebar.selectbox(key="w_method").set_value("none")
    ok(at.run())
    assert len(calls) == 3 and _contents(at) == first
