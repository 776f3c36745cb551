"""The dashboard's figure frame (dashboard/chart.py, dashboard/chart_frame/): what it loads,
and that it can draw every figure calib builds.

The frame draws with plotly.js's basic bundle, which knows three trace types. A figure
with another type (a histogram, a heatmap) would come out empty in the dashboard and
nowhere else, so the trace types the figure code constructs are checked against the
bundle's own list; the browser suite (tests/e2e/test_screenshots.py) then checks that
every page's figures are drawn and fill their axes.
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

import plotly.graph_objects as go
import plotly.offline
from plotly.basedatatypes import BaseTraceType

from dashboard import chart

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = chart.FRAME_DIR / "plotly-basic.min.js"
FIGURE_CODE = sorted((ROOT / "calib" / "present").glob("*.py"))
DASHBOARD = sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("dashboard/*.py"), ROOT / "app.py"])


def bundle_trace_types() -> set[str]:
    return set(re.findall(r'moduleType:"trace",name:"(\w+)"', BUNDLE.read_text(encoding="utf-8")))


def constructed_trace_types(paths: list[Path], root: Path = ROOT) -> dict[str, list[str]]:
    """Trace type -> where ``go.<Trace>(...)`` is called, in ``paths`` (relative to ``root``)."""
    found: dict[str, list[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "go":
                cls = getattr(go, node.func.attr, None)
                if isinstance(cls, type) and issubclass(cls, BaseTraceType):
                    found.setdefault(cls().type, []).append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_the_bundle_is_the_plotly_js_the_pinned_plotly_writes_for() -> None:
    head = BUNDLE.read_text(encoding="utf-8")[:200]
    version = re.search(r"plotly\.js \(basic - minified\) v([\d.]+)", head)
    assert version is not None, head
    assert version.group(1) == chart.PLOTLY_JS_VERSION == plotly.offline.get_plotlyjs_version()
    # vendored as published on npm (plotly.js-basic-dist-min), unchanged
    assert hashlib.sha256(BUNDLE.read_bytes()).hexdigest() == chart.PLOTLY_JS_SHA256
    assert (chart.FRAME_DIR / "LICENSE-plotly.js.txt").read_text().startswith("MIT License")


def test_every_trace_type_the_figures_build_is_in_the_bundle() -> None:
    have = bundle_trace_types()
    assert have == {"scatter", "bar", "pie"}
    built = constructed_trace_types(FIGURE_CODE)
    assert {"scatter", "bar"} <= set(built)
    missing = {t: where for t, where in built.items() if t not in have}
    assert missing == {}, f"trace types the dashboard's plotly.js cannot draw: {missing}"


def test_the_check_sees_a_trace_type_the_bundle_lacks(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import plotly.graph_objects as go\nfig = go.Figure(go.Histogram(x=[1]))\ngo.Layout()\n")
    assert constructed_trace_types([bad], tmp_path) == {"histogram": ["bad.py:2"]}


def test_the_dashboard_draws_figures_one_way() -> None:
    calls = [f"{p.relative_to(ROOT)}:{n.lineno}" for p in DASHBOARD for n in ast.walk(ast.parse(p.read_text()))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "plotly_chart"]
    assert calls == [], f"figures drawn past dashboard.chart.show_figure: {calls}"


def test_the_frame_loads_only_its_own_files_and_writes_no_html() -> None:
    page = (chart.FRAME_DIR / "index.html").read_text()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", page, re.S)
    # no inline script (the hosted policy allows scripts from the app's origin only)
    assert [(attrs.strip(), body.strip()) for attrs, body in scripts] == [('src="bridge.js"', "")]
    bridge = (chart.FRAME_DIR / "bridge.js").read_text()
    # the bundle is loaded from the address index.html preloads: the versioned one the server
    # marks immutable and the pages prefetch (dashboard.chart.PLOTLY_JS_URL)
    assert 'plotly.src = document.getElementById("plotly-js").href' in bridge
    preload = re.findall(r"<link\b[^>]*>", page)
    assert preload == [f'<link rel="preload" href="plotly-basic.min.js?v={chart.PLOTLY_JS_VERSION}" as="script" '
                       'id="plotly-js">']
    assert f"component/{chart.NAME}/plotly-basic.min.js?v={chart.PLOTLY_JS_VERSION}" == chart.PLOTLY_JS_URL
    assert chart.cached_assets() == ((chart.PLOTLY_JS_URL, BUNDLE),)
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function("):
        assert sink not in bridge, sink
    assert {p.name for p in chart.FRAME_DIR.iterdir()} == {"index.html", "bridge.js", "plotly-basic.min.js",
                                                            "LICENSE-plotly.js.txt"}


def test_show_figure_hands_the_frame_the_figure_its_height_and_the_config() -> None:
    import json

    from streamlit.testing.v1 import AppTest

    def page() -> None:
        import plotly.graph_objects as go

        from dashboard.chart import show_figure

        fig = go.Figure(go.Bar(x=[1, 2], y=[3, 4], name="<b>judge</b>"))
        fig.update_layout(height=321)
        show_figure(fig, key="one")
        show_figure(go.Figure(go.Scatter(x=[0, 1], y=[0, 1])), key="two", config={"displaylogo": False})

    at = AppTest.from_function(page).run()
    assert not at.exception
    frames = at.get("component_instance")
    assert len(frames) == 2
    first, second = (json.loads(f.proto.json_args) for f in frames)
    assert {f.proto.component_name for f in frames} == {chart.NAME}
    assert first["height"] == 321 and second["height"] == chart.DEFAULT_HEIGHT
    assert first["config"] == chart.CONFIG and second["config"] == {"displaylogo": False}
    spec = json.loads(first["spec"])
    assert spec["data"][0]["type"] == "bar" and spec["data"][0]["y"] == [3, 4]
    assert spec["data"][0]["name"] == "<b>judge</b>"  # as built: escaping is the figure code's (calib.present.format.esc)
