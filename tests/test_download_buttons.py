"""Every download button of the dashboard leaves the page alone (``on_click="ignore"``).

A download changes nothing on the page, and the rerun a click otherwise starts replaced
the Report's deferred HTML file while a second click fetched it: the second download
never came (the CI failure of test_every_page_shows_the_engines_numbers, 3 of 14 runs
under load). The browser suite shows the behaviour on the Report page; this checks that
no page or dashboard module adds a button that reruns.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("dashboard/*.py"), ROOT / "app.py"])


def download_calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "download_button"]


def test_the_sources_have_download_buttons() -> None:
    found = sum(len(download_calls(ast.parse(p.read_text()))) for p in SOURCES)
    assert found >= 7  # Recalibration's map, Report's three, Review's two, Routing's queue


def test_every_download_button_ignores_the_click() -> None:
    bad = []
    for path in SOURCES:
        for call in download_calls(ast.parse(path.read_text())):
            on_click = next((k.value for k in call.keywords if k.arg == "on_click"), None)
            if not (isinstance(on_click, ast.Constant) and on_click.value == "ignore"):
                bad.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert bad == [], f"download buttons that rerun the page on click: {bad}"


def test_the_check_catches_a_button_that_reruns() -> None:
    tree = ast.parse('st.download_button("x", data=b"", key="k")\nc.download_button("y", b"", on_click="ignore")')
    calls = download_calls(tree)
    assert [next((k.value.value for k in c.keywords if k.arg == "on_click"), None) for c in calls] == [None, "ignore"]
