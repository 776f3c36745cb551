"""Every figure of the dashboard is drawn by :func:`show_figure`: a Plotly figure in a
frame of our own that loads plotly.js's basic bundle.

Contract
--------
:func:`show_figure` takes a ``plotly.graph_objects.Figure`` built by
:mod:`calib.present` and a key unique on the page, and draws it at the container's
width. Nothing comes back (the frame never sends a value, so drawing never reruns the
page). The same figure, redrawn on a rerun with the same key, is updated in place
(``Plotly.react``), as a threshold moves.

Why not ``st.plotly_chart``: it loads Streamlit's Plotly chunk, the full plotly.js
(4.7 MB), and a fresh browser runs all of it before the first figure. The figures use
scatter and bar traces only, which the basic bundle (1.2 MB) draws alike. Measured in
turn (bench/bench_browser.py ``--only share``, 2 December): a one-figure page's first
figure 1.5-1.6 s against 2.6-2.7 s; a share link of three judges on the Routing page
2.8-2.9 s against 3.9-4.2 s.

The frame (``chart_frame/``) is a Streamlit custom component (API version 1): Streamlit
serves its files from our own origin, so the hosted app's policy (scripts from
``'self'`` only, frames from ``'self'``, :mod:`calib.hosting.webguard`) holds inside it
too. ``bridge.js`` speaks Streamlit's component messages (ready, render, frame height)
and takes the dark theme's colours; a figure that cannot be drawn (plotly.js blocked on
its way) is a sentence in its frame. The figure's text is drawn by Plotly as SVG text,
never written as HTML. ``plotly-basic.min.js`` is plotly.js's own build
(``plotly.js-basic-dist-min`` on npm, MIT licence beside it), of the version
:data:`PLOTLY_JS_VERSION` that the pinned ``plotly`` package writes figures for; a test
checks the two agree, so an upgrade of ``plotly`` asks for the bundle too.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit.components.v1 as components

from calib.present.plot_base import CONFIG

if TYPE_CHECKING:
    import plotly.graph_objects as go

#: The component's files: its page, the bridge, plotly.js's basic bundle and its licence.
FRAME_DIR = Path(__file__).resolve().parent / "chart_frame"
#: The plotly.js version of ``chart_frame/plotly-basic.min.js`` (its first comment line).
PLOTLY_JS_VERSION = "4.1.1"
#: SHA-256 of ``plotly-basic.min.js`` as published in ``plotly.js-basic-dist-min-4.1.1.tgz``
#: on npm (the file is vendored unchanged). To upgrade with ``plotly``: ``npm pack
#: plotly.js-basic-dist-min@<the version plotly.offline.get_plotlyjs_version() names>``, copy
#: ``package/plotly-basic.min.js`` here, update both constants.
PLOTLY_JS_SHA256 = "99784e3abfb07b142a15e521a439e6d9addceadb3f79553fd24c72774f0649ba"
#: Plotly's own height of a figure that sets none, in pixels.
DEFAULT_HEIGHT = 450

#: The component's name as Streamlit writes it (module path and name): it is the frame's
#: ``title``, so :data:`FRAME_SELECTOR` finds every figure's frame on a page.
NAME = f"{__name__}.figure"
FRAME_SELECTOR = f'iframe[title="{NAME}"]'
#: The bundle's address relative to the app's root, as the frame loads it (``index.html``,
#: Streamlit serves a component's files under ``component/<name>/``): versioned, so the
#: server may let browsers keep it (``Cache-Control: immutable``) and the pages prefetch it
#: (:func:`cached_assets`).
PLOTLY_JS_URL = f"component/{NAME}/plotly-basic.min.js?v={PLOTLY_JS_VERSION}"


def cached_assets() -> tuple[tuple[str, Path], ...]:
    """The frame's versioned files, ``(address relative to the app's root, file)``, for
    :func:`calib.hosting.webguard.middleware`: served from memory at that address from the
    server's start (Streamlit serves a component's files only once a page has declared it),
    kept by browsers, prefetched by the pages: plotly.js's basic bundle, so that a page's
    figures find it in the browser's cache instead of each frame asking for 1.2 MB once it
    exists."""
    return ((PLOTLY_JS_URL, FRAME_DIR / "plotly-basic.min.js"),)


@functools.cache
def _component() -> Any:
    """The frame component, declared on the first figure (inside a page's run: declared
    at import, Streamlit warns when a test or a benchmark imports this module)."""
    return components.declare_component("figure", path=str(FRAME_DIR))


def show_figure(fig: go.Figure, *, key: str, config: dict[str, object] | None = None) -> None:
    """Draw ``fig`` at the container's width, under the page-unique ``key``.

    ``config`` is Plotly's (default :data:`calib.present.plot_base.CONFIG`: its toolbar
    with a PNG download, no logo, no scroll zoom); the frame adds ``responsive``. The frame
    starts at the figure's own height (Streamlit reads a ``height`` argument), so the
    page does not jump when the figure is drawn."""
    height = fig.layout.height
    frame = _component()
    frame(spec=fig.to_json(), config=CONFIG if config is None else config,
          height=int(height) if height else DEFAULT_HEIGHT, key=key, default=None)
