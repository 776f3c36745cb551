"""The web server's guard preloads Streamlit's Plotly chunk on the pages that draw figures
(calib.hosting.webguard: chunk_files, page_preloads, the HTML rewrite).

The reference for which files a figure needs is Streamlit's own lazy loader: the list of
files its ``index`` bundle preloads before it imports the Plotly chunk (``__vite__mapDeps``),
read here independently of the import scan the guard does.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from calib.hosting.access import SessionRegistry
from calib.hosting.webguard import (
    PRELOADED_CHUNKS,
    GuardMiddleware,
    chunk_files,
    inline_script_hashes,
    page_preloads,
    security_headers,
    streamlit_index_html,
    streamlit_static_js,
    with_preloads,
)
from tests.test_webguard import run

PAGE = (
    b"<!DOCTYPE html><html><head><script>window.prerenderReady = false</script>"
    b'<script type="module" crossorigin src="./static/js/index.A1.js"></script></head>'
    b'<body><div id="root"></div></body></html>'
)


def _chunks(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_chunk_files_follow_static_imports_less_what_the_page_loads(tmp_path: Path) -> None:
    js = _chunks(
        tmp_path,
        {
            "index.A1.js": "export const x = 1;",
            "PlotlyChart.Zz9.js": 'import{a as b}from"./index.A1.js";import"./side.B2.js";import{c}from"./w.C3.js";'
            "const lazy = import(`./never.D4.js`);",
            "side.B2.js": 'import{d}from"./w.C3.js";import{e}from"./deep.E5.js";',
            "w.C3.js": "export const c = 1;",
            "deep.E5.js": "export const e = 1;",
            "never.D4.js": "export const n = 1;",
        },
    )
    # the chunk first; then its static imports, each once, breadth first; not the page's own
    # index bundle and not a dynamic import
    named = ("PlotlyChart",)
    assert chunk_files(PAGE, js, named) == ["PlotlyChart.Zz9.js", "side.B2.js", "w.C3.js", "deep.E5.js"]
    assert chunk_files(PAGE, js, chunks=("Missing",)) == []
    assert chunk_files(PAGE, js, chunks=("PlotlyChart", "Missing")) == []  # all or none
    (tmp_path / "PlotlyChart.Other.js").write_text("")
    assert chunk_files(PAGE, js, named) == []  # two builds side by side: which one is unknown
    assert chunk_files(PAGE, None) == []


def _lazy_deps(index_js: str, chunk: str) -> set[str]:
    """The files Streamlit's bundle preloads before importing ``chunk`` (its mapDeps)."""
    table = re.search(r"__vite__mapDeps=\(i,m=__vite__mapDeps,d=\(m\.f\|\|\(m\.f=\[(.*?)\]\)\)", index_js)
    assert table, "no __vite__mapDeps table in Streamlit's index bundle"
    names = [x.strip().strip('"').removeprefix("./") for x in table.group(1).split(",")]
    # import(`./X.js`),__vite__mapDeps([...]) or, for a chunk read through one export,
    # import(`./X.js`).then(e=>e.n),__vite__mapDeps([...])
    call = re.search(r"import\(`\./" + re.escape(chunk) + r"`\)(?:\.then\(\w+=>\w+\.\w+\))?,__vite__mapDeps\(\[([0-9,]+)\]\)",
                     index_js)
    assert call, f"no lazy import of {chunk}"
    return {names[int(i)] for i in call.group(1).split(",")}


def test_the_installed_streamlit_preloads_what_its_own_lazy_imports_load() -> None:
    js = streamlit_static_js()
    assert js is not None
    html = streamlit_index_html()
    files = chunk_files(html, js)
    # each named chunk first, in order, found in this Streamlit build
    heads = files[:len(PRELOADED_CHUNKS)]
    assert [f.split(".", 1)[0] for f in heads] == list(PRELOADED_CHUNKS)
    assert "ComponentInstance" in PRELOADED_CHUNKS  # the frame of every figure (dashboard.chart)
    assert not any(f.startswith("PlotlyChart.") for f in files)  # figures no longer use it
    index = re.search(rb'src="\./static/js/(index\.[\w-]+\.js)"', html)
    assert index
    index_js = (js / index.group(1).decode()).read_text()
    on_page = set(re.findall(r'(?:href|src)="\./static/js/([\w.-]+)"', html.decode()))
    expected = {f for head in heads for f in _lazy_deps(index_js, head) if f.endswith(".js")} - on_page
    assert set(files) == expected and len(files) == len(expected)


def test_page_preloads_are_module_preloads_and_add_no_inline_script() -> None:
    tags = page_preloads(["P.1.js", "q.2.js"])
    assert tags == (
        b'<link rel="modulepreload" fetchpriority="low" crossorigin href="./static/js/P.1.js">'
        b'<link rel="modulepreload" fetchpriority="low" crossorigin href="./static/js/q.2.js">'
    )
    assert page_preloads([]) == b""
    # the rewritten page has no inline script of its own: the policy's hashes are unchanged
    assert inline_script_hashes(with_preloads(PAGE, tags)) == inline_script_hashes(PAGE)


def test_with_preloads_puts_the_tags_before_the_head_closes_on_streamlits_page_only() -> None:
    out = with_preloads(PAGE, b"<link X>")
    assert out == PAGE.replace(b"</head>", b"<link X></head>")
    component = b"<html><head></head><body><p>a component's page</p></body></html>"
    assert with_preloads(component, b"<link X>") == component
    assert with_preloads(b"no head", b"<link X>") == b"no head"


class Html:
    """A stand-in for Streamlit: a page (gzipped or not, in one or two body messages),
    or any other response."""

    def __init__(
        self,
        body: bytes,
        content_type: bytes = b"text/html; charset=utf-8",
        gzipped: bool = False,
        parts: int = 1,
        status: int = 200,
    ) -> None:
        self.body = gzip.compress(body) if gzipped else body
        self.content_type, self.gzipped, self.parts, self.status = content_type, gzipped, parts, status
        self.paths: list[str] = []

    async def __call__(self, scope, receive, send) -> None:
        self.paths.append(scope["path"])
        headers = [
            (b"content-type", self.content_type),
            (b"content-length", str(len(self.body)).encode()),
            (b"etag", b'"e1"'),
        ]
        if self.gzipped:
            headers.append((b"content-encoding", b"gzip"))
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        cut = len(self.body) // 2 if self.parts == 2 else 0
        if self.parts == 2:
            await send({"type": "http.response.body", "body": self.body[:cut], "more_body": True})
        await send({"type": "http.response.body", "body": self.body[cut:], "more_body": False})


def get(app, path: str, method: str = "GET") -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg):
        sent.append(msg)

    run(app({"type": "http", "method": method, "path": path, "headers": []}, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body


def guard(backend) -> GuardMiddleware:
    return GuardMiddleware(
        backend,
        sessions=SessionRegistry(),
        headers=security_headers(["'sha256-x'"]),
        preload=["P.1.js", "q.2.js"],
    )


def test_a_page_with_figures_gets_the_preloads_gzipped_or_not_in_one_message_or_two() -> None:
    tags = page_preloads(["P.1.js", "q.2.js"])
    for gzipped in (False, True):
        for parts in (1, 2):
            status, headers, body = get(guard(Html(PAGE, gzipped=gzipped, parts=parts)), "/Routing")
            assert status == 200 and body == with_preloads(PAGE, tags), (gzipped, parts)
            assert (
                headers[b"content-length"] == str(len(body)).encode() and b"content-encoding" not in headers
            )
            assert (
                headers[b"etag"] == b'"e1"'
                and b"frame-ancestors 'self'" in headers[b"content-security-policy"]
            )
            assert headers[b"x-content-type-options"] == b"nosniff"


def test_the_data_page_other_responses_and_other_methods_pass_untouched() -> None:
    # the Data page (the app's root) draws no figure; Streamlit's endpoints and assets are no pages
    for path in ("/", "/base/", "/_stcore/host-config", "/static/x.html", "/base/static/x.html"):
        status, headers, body = get(guard(Html(PAGE, gzipped=True)), path)
        assert body == gzip.compress(PAGE) and headers[b"content-encoding"] == b"gzip", path
    for backend in (
        Html(b"{}", content_type=b"application/json"),
        Html(PAGE, status=304),
        Html(b"<html><head></head><body>component</body></html>"),
    ):
        status, headers, body = get(guard(backend), "/Routing")
        assert body == backend.body and headers[b"content-length"] == str(len(backend.body)).encode()
    assert get(guard(Html(PAGE)), "/Routing", method="HEAD")[2] == PAGE
    off = GuardMiddleware(Html(PAGE, gzipped=True), sessions=SessionRegistry(), headers=[], preload=[])
    assert get(off, "/Routing")[2] == gzip.compress(PAGE)  # nothing to preload: Streamlit's page as it is
