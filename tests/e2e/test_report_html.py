"""The HTML report in a real browser (issue 14's size budget): plotly.js travels once,
compressed, and every figure is drawn from its spec after it is unpacked, offline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from calib.present import figures
from calib.present import html_report as hr
from calib.table import from_counts

pytestmark = pytest.mark.e2e


def test_every_figure_is_drawn_from_the_compressed_bundle(page, tmp_path: Path) -> None:
    t = from_counts(np.array([80.0, 90, 100]), np.array([100, 300, 600]), np.array([56, 220, 450]))
    fig = figures.stated_histogram([("m", t)], figures.palette(["m"]))
    doc = hr.render("r", [hr.Figure(fig), hr.Paragraph("between"), hr.Figure(fig)])
    path = tmp_path / "report.html"
    path.write_text(doc)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on(
        "request",
        lambda r: (
            errors.append(f"fetched {r.url}") if not r.url.startswith(("file:", "data:", "blob:")) else None
        ),
    )
    page.goto(path.as_uri())
    page.wait_for_function(
        "[...document.querySelectorAll('.calib-plot')].every(d => d.querySelector('.main-svg'))",
        timeout=30_000,
    )
    # the bars are drawn (plotly's own DOM), not an error text
    assert page.evaluate("document.querySelectorAll('.calib-plot .bars path').length") >= 6
    assert errors == []
    # the budget: plotly.js (4.8 MB) travels compressed, once
    assert len(doc.encode()) < 2_200_000 and doc.count("DecompressionStream('gzip')") == 1
