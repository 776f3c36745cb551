"""Work a page reuses instead of redoing it on every run (issue 29: a warm page switch
under 0.3 s, a threshold move answered in 150 ms at 1,000,000 rows): the Report page's
parts (every figure of the HTML report), built once per session for the same datasets
and view (:func:`dashboard.report.session_report_parts`), and again when either changes;
whether the Routing page's data has items judged twice (route stability), decided once
per dataset, not on every threshold move."""

from __future__ import annotations

import pytest

import dashboard.report
import dashboard.stability_view
from tests.apptest import app, ok, upload
from tests.test_app_stability import repeated_file

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


def _count_repeated(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The answers of the Routing page's "is any item judged twice?" each time it is asked."""
    calls: list[bool] = []
    ask = dashboard.stability_view.repeated

    def counted(rows):  # type: ignore[no-untyped-def]
        calls.append(ask(rows))
        return calls[-1]

    monkeypatch.setattr(dashboard.stability_view, "repeated", counted)
    return calls


@pytest.mark.parametrize("twice", [False, True], ids=["ids once", "ids three times"])
def test_threshold_moves_do_not_ask_again_whether_items_repeat(monkeypatch, twice):
    calls = _count_repeated(monkeypatch)
    data = repeated_file(items=60, epochs=3 if twice else 1)
    at = app()
    at.query_params.update({"reps": "50"})
    at = upload(ok(at.run()), "judge.jsonl", data)
    ok(at.switch_page("pages/5_Routing.py").run())
    shown = any(s.value == "Route stability" for s in at.subheader)
    assert shown is twice and calls == [twice]
    slider = at.select_slider(key="w_lo")
    for value in slider.options[1:3]:  # two threshold moves
        slider.set_value(type(slider.value)(value))
        ok(at.run())
        assert any(s.value == "Route stability" for s in at.subheader) is twice
    assert calls == [twice]  # asked once for this dataset
