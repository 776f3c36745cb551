"""What the HTML page of every dashboard page but the Data page gets in its head, so that a
page opened cold (a share link, a bookmark, a reload) draws sooner. Plain Python: no
Streamlit import; :mod:`calib.hosting.webguard` writes the tags into the page.

Streamlit serves one ``index.html`` at every page's address. In its head,
:func:`build` adds, in this order:

1. **The app's root, for the connection** (:data:`BASE_URL_SCRIPT`, before Streamlit's
   own scripts). Streamlit's frontend
   cannot tell a page path (``/Routing``) from a base URL path, so on a page it first
   looks for its server under ``/Routing/`` (a 404), waits, then tries the root: about
   0.17 s of every open of a page other than the Data page (bench/bench_browser.py). The
   script sets ``window.__streamlit.BACKEND_BASE_URL``, which Streamlit reads at start
   for exactly this, to the folder the page's address sits in, so the root is tried first
   and alone. It is written only on the exact paths of the app's pages
   (:func:`page_paths`), where that folder is the app's root whatever base URL path or
   proxy prefix is in front (the browser's own address is used, not the server's).
2. **The element chunks loaded from the start** (:func:`lazy_script`, a module script
   before Streamlit's own). Streamlit draws each kind of element with a React component
   loaded on first use (``React.lazy``). The first element of a kind is drawn as a
   placeholder while its code loads, and React shows the placeholders' elements together,
   in one later pass over every element that waited: on a share link of three judges, the
   Routing page's metrics, widgets, tables and figure frames all waited for that pass,
   about 0.5 s after their messages had arrived. The script starts loading the components
   of :data:`EAGER_CHUNKS` as soon as Streamlit's bundle declares them, so each is
   ready when its first element arrives and is drawn with it (measured in turn on that
   link: the figures' frames 0.4-0.6 s sooner). Streamlit's data grid (``st.dataframe``) is
   left to load on first use: drawn with the rest, its canvas held the Routing page's
   first figure back by 0.2 s (measured in turn); drawn a moment later, on its own, it
   waits for nothing else and nothing waits for it. It finds React's ``lazy`` in Streamlit's
   bundle (:func:`react_chunk`) and asks each of those components to load, which is what
   drawing one would do; it changes nothing else, and does nothing when it does not find
   what it looks for (another Streamlit build), so the page only loses the head start.
3. **Prefetches of the app's own cached assets** (the figures' plotly.js, named by
   ``app.py``): fetched while the browser is otherwise idle, kept (the server marks them
   immutable), there when the first figure's frame asks.
4. **Module preloads of the chunks of the pages' elements** (:func:`chunk_files`):
   metrics, select boxes, sliders, number inputs, buttons, tables, the component frame
   that holds each figure (:data:`PRELOADED_CHUNKS`) and their imports. Streamlit loads
   each only once the first element that needs it has arrived, about 70 small files over
   the browser's six connections; preloaded, a fresh browser fetches and compiles them
   while the page connects and its script runs.

All addresses are relative, as Streamlit's own tags, so they hold under a base URL path.
The two scripts are the page's only inline scripts besides Streamlit's: the
Content-Security-Policy allows each by its hash (:func:`calib.hosting.webguard.security_headers`).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: Streamlit's lazily loaded chunks a page is told to fetch at once: those of the elements
#: the Routing page of a share link draws (found by listing the chunks a fresh browser
#: requested after the script's first message), 72 files and 2.0 MB with their imports in
#: Streamlit 1.67. ``ComponentInstance`` holds each figure's frame.
PRELOADED_CHUNKS = ("ComponentInstance", "Metric", "Selectbox", "Slider", "NumberInput", "Button", "Checkbox",
                    "TextInput", "DataFrame", "Table", "Html", "DownloadButton")
#: The chunks whose components :func:`lazy_script` starts loading at once: every preloaded
#: one but Streamlit's data grid (see the module's docstring).
EAGER_CHUNKS = tuple(c for c in PRELOADED_CHUNKS if c != "DataFrame")
#: Sets the address Streamlit's frontend looks for its server at: the folder of the page's
#: own address (``https://host/app/Routing?share=…`` -> ``https://host/app/``).
BASE_URL_SCRIPT = 'window.__streamlit={BACKEND_BASE_URL:new URL(".",location.href).href}'
#: A chunk's static imports (Vite writes them first: ``import{a as b}from"./x.js";``).
_STATIC_IMPORT = re.compile(rb'(?:from|import)\s*"\./([\w.-]+\.js)"')
#: How much of a chunk its static imports are read from (they open the file).
_IMPORTS_HEAD = 16_384


def _streamlit_static() -> Path | None:
    spec = importlib.util.find_spec("streamlit")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "static"


def streamlit_index_html() -> bytes:
    """The ``index.html`` Streamlit serves (read from the installed package, without
    importing Streamlit)."""
    root = _streamlit_static()
    path = None if root is None else root / "index.html"
    return path.read_bytes() if path is not None and path.is_file() else b""


def streamlit_static_js() -> Path | None:
    """The folder of Streamlit's JavaScript bundles (``static/static/js``), or None."""
    root = _streamlit_static()
    folder = None if root is None else root / "static" / "js"
    return folder if folder is not None and folder.is_dir() else None


def _named(js_dir: Path, chunks: Iterable[str]) -> list[str] | None:
    """The file of each named chunk (``NAME.<hash>.js``); None unless each is found once."""
    out = []
    for name in chunks:
        found = sorted(js_dir.glob(f"{name}.*.js"))
        if len(found) != 1:
            return None
        out.append(found[0].name)
    return out


def chunk_files(index_html: bytes, js_dir: Path | None, chunks: Iterable[str] = PRELOADED_CHUNKS) -> list[str]:
    """The files of the Streamlit chunks named ``chunks`` (``NAME.<hash>.js`` in ``js_dir``),
    each first, then their static imports, less what ``index_html`` already loads or
    preloads; ``[]`` when a chunk is not found (another Streamlit build)."""
    todo = None if js_dir is None else _named(js_dir, chunks)
    if js_dir is None or todo is None:
        return []
    have = set(re.findall(r'(?:href|src)="\./static/js/([\w.-]+\.js)"', index_html.decode("utf-8", "replace")))
    out: list[str] = []
    while todo:
        name = todo.pop(0)
        path = js_dir / name
        if name in have or not path.is_file():
            continue
        have.add(name)
        out.append(name)
        with path.open("rb") as f:
            todo.extend(m.decode() for m in _STATIC_IMPORT.findall(f.read(_IMPORTS_HEAD)))
    return out


def react_chunk(index_html: bytes, js_dir: Path | None) -> str | None:
    """The one file among the bundles ``index_html`` loads at start that defines React's
    ``lazy`` (``….lazy=function(`` beside the ``react.lazy`` symbol), or None when there
    is not exactly one (another Streamlit build: then no :func:`lazy_script`)."""
    if js_dir is None:
        return None
    names = sorted(set(re.findall(r'(?:href|src)="\./static/js/([\w.-]+\.js)"', index_html.decode("utf-8", "replace"))))
    found = []
    for name in names:
        path = js_dir / name
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        if "react.lazy" in text and ".lazy=function(" in text:
            found.append(name)
    return found[0] if len(found) == 1 else None


def lazy_script(react_file: str, chunks: Iterable[str] = EAGER_CHUNKS) -> str:
    """A module script (run before Streamlit's bundle, which imports the same React) that
    wraps ``React.lazy`` so that each lazy component whose loader names one of ``chunks``
    (``import(`./Metric.<hash>.js`)``) starts loading at once, as its first drawing
    would. React is found among the exports of ``react_file`` that take no argument (the
    bundle's CommonJS wrappers) as the one with ``lazy``, ``Suspense`` and
    ``createElement``. ``window.__calibLazy`` tells how many components it started (tests);
    any failure leaves Streamlit as it is."""
    names = json.dumps([f"./{n}." for n in chunks], separators=(",", ":"))
    return (
        f'import*as m from"./static/js/{react_file}";'
        f"const W={names};let n=0;"
        "try{for(const k of Object.keys(m)){const f=m[k];if(typeof f!==\"function\"||f.length)continue;"
        "let R=null;try{R=f()}catch(e){continue}"
        "if(R&&typeof R.lazy===\"function\"&&R.Suspense&&R.createElement){const lazy=R.lazy;"
        "R.lazy=function(load){const c=lazy.apply(this,arguments);let s=\"\";try{s=String(load)}catch(e){}"
        "if(W.some(w=>s.includes(w))){n++;queueMicrotask(()=>{try{c._init(c._payload)}catch(e){}})}return c};break}}"
        "}catch(e){}window.__calibLazy=()=>n;"
    )


@dataclass(frozen=True)
class PageHead:
    """What a page's head gets: ``first`` before Streamlit's own scripts, ``last`` before
    the head closes, and the text of each inline script (their hashes go into the
    Content-Security-Policy)."""

    first: bytes
    last: bytes
    scripts: tuple[str, ...]


def head(files: Iterable[str], react_file: str | None = None, prefetch: Iterable[str] = ()) -> PageHead:
    """The tags of a page: :data:`BASE_URL_SCRIPT` and (with ``react_file``)
    :func:`lazy_script` first; then a prefetch of each of ``prefetch`` (addresses relative
    to the app's root) and a module preload of each of ``files`` (fetched and compiled, not
    run) at low priority, so that Streamlit's own bundles, which start the page, are
    fetched first (at high priority the page's title came up to 0.15 s later in some runs;
    at low, within the runs' noise)."""
    scripts = (BASE_URL_SCRIPT,) + (() if react_file is None else (lazy_script(react_file),))
    first = f"<script>{BASE_URL_SCRIPT}</script>"
    if react_file is not None:
        first += f'<script type="module">{scripts[1]}</script>'
    last = ("".join(f'<link rel="prefetch" href="./{_attribute(url)}">' for url in prefetch)
            + "".join(f'<link rel="modulepreload" fetchpriority="low" crossorigin href="./static/js/{name}">'
                      for name in files))
    return PageHead(first.encode(), last.encode(), scripts)


def _attribute(url: str) -> str:
    """``url`` for a double-quoted attribute: the app's own addresses only (no quote, no
    angle bracket, no scheme), so that nothing in it can leave the attribute."""
    if not re.fullmatch(r"[\w.~/?=&%-]+", url) or url.startswith("/") or "//" in url:
        raise ValueError(f"not an address relative to the app's root: {url!r}")
    return url


@functools.cache
def build(prefetch: tuple[str, ...] = ()) -> PageHead:
    """:func:`head` for the installed Streamlit (read once per process), prefetching
    ``prefetch``."""
    html, js = streamlit_index_html(), streamlit_static_js()
    return head(chunk_files(html, js), react_chunk(html, js), prefetch)


def with_head(html: bytes, tags: PageHead) -> bytes:
    """``html`` with ``tags.first`` before its first module script and ``tags.last`` just
    before its ``</head>``, when it is Streamlit's page (it mounts the app on ``<div
    id="root">`` and loads its bundle as a module); any other HTML (a component's)
    unchanged."""
    end = html.rfind(b"</head>")
    start = html.find(b'<script type="module"')
    if end < 0 or not 0 <= start < end or b'<div id="root">' not in html:
        return html
    return html[:start] + tags.first + html[start:end] + tags.last + html[end:]


def _root(base_url_path: str) -> str:
    """The app's root as a request path under Streamlit's ``server.baseUrlPath`` (``""``,
    ``"app"``, ``"/app/"``…): ``/``, ``/app/``."""
    base = "/".join(p for p in base_url_path.split("/") if p)
    return f"/{base}/" if base else "/"


def app_path(relative: str, base_url_path: str = "") -> str:
    """The request path (no query) of ``relative`` (an address relative to the app's root,
    ``component/x/f.js?v=1``) under ``base_url_path``: ``/app/component/x/f.js``."""
    return _root(base_url_path) + relative.split("?", 1)[0]


def page_paths(names: Iterable[str], base_url_path: str = "") -> frozenset[str]:
    """The request paths of the pages named ``names`` (their URL paths: ``Routing``…) under
    ``base_url_path``: ``/Routing``, ``/app/Routing``. Only these get :func:`build`'s tags;
    the root (the Data page), a path with a trailing slash, Streamlit's endpoints and assets
    never do."""
    return frozenset(_root(base_url_path) + n for n in names if n and "/" not in n)
