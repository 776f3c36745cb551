"""What the pages but the Data page get in their head (calib.hosting.page_head) and the
guard's HTML rewrite that puts it there (calib.hosting.webguard).

The reference for which files a chunk needs is Streamlit's own lazy loader: the list of
files its ``index`` bundle preloads before it imports a chunk (``__vite__mapDeps``), read
here independently of the import scan :func:`chunk_files` does. What the head does in a
browser is tested in tests/e2e/test_preload.py.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from calib.hosting.access import SessionRegistry
from calib.hosting.page_head import (
    BASE_URL_SCRIPT,
    EAGER_CHUNKS,
    PRELOADED_CHUNKS,
    PageHead,
    app_path,
    build,
    chunk_files,
    head,
    lazy_script,
    page_paths,
    react_chunk,
    streamlit_index_html,
    streamlit_static_js,
    with_head,
)
from calib.hosting.webguard import GuardMiddleware, security_headers
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


def test_react_is_found_once_among_the_bundles_the_page_loads_at_start(tmp_path: Path) -> None:
    js = streamlit_static_js()
    found = react_chunk(streamlit_index_html(), js)
    assert found is not None and (js / found).is_file()  # type: ignore[operator]
    text = (js / found).read_text()  # type: ignore[operator]
    assert "react.lazy" in text and ".lazy=function(" in text
    page = b'<script type="module" src="./static/js/index.A.js"></script><link rel="modulepreload" href="./static/js/r.B.js">'
    (tmp_path / "index.A.js").write_text("import'./r.B.js'")
    (tmp_path / "r.B.js").write_text("const s=Symbol.for(`react.lazy`);e.lazy=function(x){}")
    assert react_chunk(page, tmp_path) == "r.B.js"
    (tmp_path / "index.A.js").write_text("const s=Symbol.for(`react.lazy`);e.lazy=function(x){}")
    assert react_chunk(page, tmp_path) is None  # two: which one is unknown, so no script
    assert react_chunk(page, None) is None and react_chunk(b"", tmp_path) is None


def test_the_lazy_script_names_reacts_bundle_and_every_preloaded_chunk() -> None:
    script = lazy_script("r.B.js", ("Metric", "Table"))
    assert script.startswith('import*as m from"./static/js/r.B.js";')
    assert '["./Metric.","./Table."]' in script and "c._init(c._payload)" in script
    assert "window.__calibLazy" in script and "<" not in script  # nothing that could close its tag
    # the real one names each eager chunk as Streamlit's loaders import it (`./Name.<hash>.js`):
    # every preloaded one but the data grid's
    real = build().scripts[1]
    assert tuple(c for c in PRELOADED_CHUNKS if c != "DataFrame") == EAGER_CHUNKS and '"./DataFrame."' not in real
    index = re.search(rb'src="\./static/js/(index\.[\w-]+\.js)"', streamlit_index_html())
    assert index
    index_js = (streamlit_static_js() / index.group(1).decode()).read_text()  # type: ignore[operator]
    for name in EAGER_CHUNKS:
        assert f'"./{name}."' in real and re.search(r"import\(`\./" + name + r"\.[\w-]+\.js`\)", index_js), name


def test_the_head_puts_the_scripts_first_and_the_links_last() -> None:
    tags = head(["P.1.js", "q.2.js"], "r.B.js", ["component/x/f.js?v=1"])
    assert tags.scripts == (BASE_URL_SCRIPT, lazy_script("r.B.js"))
    assert tags.first == (f"<script>{BASE_URL_SCRIPT}</script>"
                          f'<script type="module">{lazy_script("r.B.js")}</script>').encode()
    assert tags.last == (
        b'<link rel="prefetch" href="./component/x/f.js?v=1">'
        b'<link rel="modulepreload" fetchpriority="low" crossorigin href="./static/js/P.1.js">'
        b'<link rel="modulepreload" fetchpriority="low" crossorigin href="./static/js/q.2.js">'
    )
    bare = head([])
    assert bare.scripts == (BASE_URL_SCRIPT,) and bare.last == b""
    for bad in ('x" onload="alert(1)', "/abs/path.js", "https://elsewhere/x.js", "a//b.js", "<x>"):
        with pytest.raises(ValueError, match="not an address relative to the app's root"):
            head([], prefetch=[bad])


def test_with_head_puts_the_tags_around_streamlits_scripts_on_its_page_only() -> None:
    tags = PageHead(b"<FIRST>", b"<LAST>", ())
    out = with_head(PAGE, tags)
    assert out == PAGE.replace(b'<script type="module"', b'<FIRST><script type="module"').replace(
        b"</head>", b"<LAST></head>")
    # the app's root is set before Streamlit's bundle runs: the classic script is parsed first
    assert out.index(b"<FIRST>") < out.index(b"index.A1.js") < out.index(b"<LAST>")
    component = b"<html><head></head><body><p>a component's page</p></body></html>"
    assert with_head(component, tags) == component
    assert with_head(b"no head", tags) == b"no head"
    no_module = PAGE.replace(b'type="module" ', b"")
    assert with_head(no_module, tags) == no_module


@pytest.mark.parametrize("base, want", [("", "/Routing"), ("app", "/app/Routing"), ("/app/", "/app/Routing"),
                                        ("a/b", "/a/b/Routing"), ("//", "/Routing")])
def test_page_and_asset_paths_under_a_base_url_path(base: str, want: str) -> None:
    assert page_paths(["Routing", "", "x/y"], base) == frozenset({want})
    assert app_path("component/x/f.js?v=1", base) == want.removesuffix("Routing") + "component/x/f.js"


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

    where, _, query = path.partition("?")
    run(app({"type": "http", "method": method, "path": where, "query_string": query.encode(), "headers": []},
            receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body


TAGS = head(["P.1.js", "q.2.js"], "r.B.js")


def guard(backend, **kw) -> GuardMiddleware:  # type: ignore[no-untyped-def]
    return GuardMiddleware(backend, sessions=SessionRegistry(), headers=security_headers(["'sha256-x'"]),
                           pages=["/Routing", "/base/Overview"], head=TAGS, **kw)


def test_a_page_gets_the_head_gzipped_or_not_in_one_message_or_two() -> None:
    for gzipped in (False, True):
        for parts in (1, 2):
            status, headers, body = get(guard(Html(PAGE, gzipped=gzipped, parts=parts)), "/Routing")
            assert status == 200 and body == with_head(PAGE, TAGS), (gzipped, parts)
            assert (
                headers[b"content-length"] == str(len(body)).encode() and b"content-encoding" not in headers
            )
            assert (
                headers[b"etag"] == b'"e1"'
                and b"frame-ancestors 'self'" in headers[b"content-security-policy"]
            )
            assert headers[b"x-content-type-options"] == b"nosniff"


def test_the_data_page_other_responses_and_other_methods_pass_untouched() -> None:
    # the Data page (the app's root), paths that are not the app's pages (a trailing slash, a
    # base URL path, another page name), Streamlit's endpoints and assets are left as they are
    assert get(guard(Html(PAGE)), "/base/Overview")[2] == with_head(PAGE, TAGS)
    for path in ("/", "/base/", "/base", "/Routing/", "/Overview", "/routing", "/_stcore/host-config",
                 "/static/x.html", "/base/static/x.html"):
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
    off = GuardMiddleware(Html(PAGE, gzipped=True), sessions=SessionRegistry(), headers=[])
    assert get(off, "/Routing")[2] == gzip.compress(PAGE)  # no pages named: Streamlit's page as it is
