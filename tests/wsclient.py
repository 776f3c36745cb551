"""A Streamlit client at the protocol level: one WebSocket to ``/_stcore/stream`` speaking
Streamlit's protobufs (``BackMsg`` up, ``ForwardMsg`` down), for the tests of behaviour a
browser cannot be trusted to exercise (the headers of the WebSocket handshake, messages
the page never sends on its own, such as ``clear_cache``).

What the browser does, and this does too:

- opens the WebSocket with the subprotocol ``streamlit`` (and any handshake headers given:
  ``X-Forwarded-For`` / ``X-Forwarded-Proto`` as a reverse proxy would write them);
- starts a run with a ``rerun_script`` BackMsg whose ``ClientState`` carries the query
  string and the widgets' values;
- reads the page the run draws from the ``ForwardMsg`` deltas (``new_element``), until the
  run's ``script_finished`` (a run that ends early for a rerun, as ``st.rerun()`` does, is
  followed to the end of the next);
- submits a form as the browser does: one rerun with every widget of the form at its value
  and the form's submit button's trigger set (the ids come from the elements the run drew);
- keeps what the server says of the page: the current page and the app's pages (the
  ``navigation`` message) and the address's query (``page_info_changed``), sent with the
  next run as the browser's address bar would.

Uses the ``websockets`` package (a dependency of Streamlit's web server; pinned in
requirements-dev.txt).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

#: How long one run may take to answer (s): the CI machine has 2 cores shared by many processes.
TIMEOUT = 120.0
_EARLY_FOR_RERUN = ForwardMsg.FINISHED_EARLY_FOR_RERUN


@dataclass
class Page:
    """What one run drew: its elements in the order they came, with their delta paths."""

    elements: list[tuple[tuple[int, ...], Element]] = field(default_factory=list)
    status: int | None = None
    #: The fragments (``@st.fragment``) the run drew elements in, by id.
    fragments: set[str] = field(default_factory=set)

    def kinds(self) -> list[str]:
        return [e.WhichOneof("type") or "" for _, e in self.elements]

    def of_kind(self, kind: str) -> list[Any]:
        """The protos of every element of this kind (``"text_input"``, ``"button"``, …)."""
        return [getattr(e, kind) for _, e in self.elements if e.WhichOneof("type") == kind]

    def has(self, kind: str) -> bool:
        return bool(self.of_kind(kind))

    def alerts(self, fmt: int = Alert.ERROR) -> list[str]:
        """The text of every alert of this format (default: the error boxes)."""
        return [a.body for a in self.of_kind("alert") if a.format == fmt]

    def headings(self) -> list[str]:
        return [h.body for h in self.of_kind("heading")]

    def text(self) -> str:
        """Every heading, markdown, text, alert, metric and code body, one per line."""
        out: list[str] = []
        for _, e in self.elements:
            kind = e.WhichOneof("type")
            part = getattr(e, kind) if kind else None
            if kind in ("heading", "markdown", "alert", "code", "text"):
                out.append(part.body if kind != "code" else part.code_text)
            elif kind == "metric":
                out.append(f"{part.label}: {part.body}")
        return "\n".join(out)

    def widget(self, kind: str, label: str) -> Any:
        """The widget of this kind with exactly this label (AssertionError if none)."""
        found = [w for w in self.of_kind(kind) if w.label == label]
        assert found, f"no {kind} labelled {label!r} on the page: {self.kinds()}"
        return found[0]


class Session:
    """One Streamlit session over one WebSocket.

    Parameters
    ----------
    base_url:
        The server's address (``http://127.0.0.1:PORT``).
    headers:
        Extra headers of the WebSocket handshake (what a proxy would add).
    query_string:
        The page address's query (``share=TOKEN``), sent with every run.
    """

    def __init__(self, base_url: str, *, headers: Mapping[str, str] | None = None, query_string: str = "",
                 timeout: float = TIMEOUT) -> None:
        from websockets.sync.client import connect

        url = base_url.replace("http://", "ws://", 1).replace("https://", "wss://", 1).rstrip("/")
        self.timeout = timeout
        self.query_string = query_string
        self._stack = contextlib.ExitStack()  # websockets wants its connection used as a context manager
        self.ws = self._stack.enter_context(connect(
            f"{url}/_stcore/stream", subprotocols=["streamlit"],  # type: ignore[list-item]
            additional_headers=dict(headers or {}), open_timeout=timeout, max_size=None))
        self.session_id: str | None = None
        self.page = Page()
        #: The app's pages by name (the navigation's), and the page the session is on.
        self.pages: dict[str, str] = {}
        self.page_script_hash = ""

    # ------------------------------------------------------------ messages
    def send(self, msg: BackMsg) -> None:
        self.ws.send(msg.SerializeToString())

    def clear_cache(self) -> None:
        """Send what Streamlit's "Clear cache" menu item sends (any client may)."""
        self.send(BackMsg(clear_cache=True))

    def run(self, widgets: Iterable[WidgetState] = (), *, page: str | None = None, fragment: str = "") -> Page:
        """Start a run with these widget values, on the page named ``page`` (a name of the
        navigation; default the page the session is on), and return what it drew. With
        ``fragment`` (an id of :attr:`Page.fragments`), only that fragment runs, as when
        one of its widgets changes in the browser."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self.page_script_hash if page is None else self.pages[page]
        state.fragment_id = fragment
        state.widget_states.widgets.extend(widgets)
        self.send(msg)
        self.page = self._read_run()
        return self.page

    def _read_run(self) -> Page:
        """ForwardMsgs until a run finishes (not early for a rerun); the last run's elements."""
        deadline = time.monotonic() + self.timeout
        page = Page()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no end of run within {self.timeout} s; drew {page.kinds()}")
            fwd = ForwardMsg()
            fwd.ParseFromString(self.ws.recv(timeout=left))
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.session_id = fwd.new_session.initialize.session_id
            elif kind == "navigation":
                self.pages = {p.page_name: p.page_script_hash for p in fwd.navigation.app_pages}
                self.page_script_hash = fwd.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = fwd.page_info_changed.query_string
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                page.elements.append((tuple(fwd.metadata.delta_path), fwd.delta.new_element))
                if fwd.delta.fragment_id:
                    page.fragments.add(fwd.delta.fragment_id)
            elif kind == "script_finished":
                if fwd.script_finished != _EARLY_FOR_RERUN:
                    page.status = fwd.script_finished
                    return page
                page = Page()  # the next run draws the page afresh

    # ------------------------------------------------------------- forms
    def submit(self, values: Mapping[str, str], button: str) -> Page:
        """Fill the text inputs labelled as ``values``' keys and press the form's submit
        button labelled ``button``, as the browser does: one rerun carrying the inputs'
        values and the button's trigger."""
        press = self.page.widget("button", button)
        assert press.is_form_submitter, f"{button!r} is not a form's submit button"
        states = [WidgetState(id=self.page.widget("text_input", label).id, string_value=value)
                  for label, value in values.items()]
        states.append(WidgetState(id=press.id, trigger_value=True))
        return self.run(states)

    def click(self, label: str) -> Page:
        """Press the (non-form) button labelled ``label``: a rerun with its trigger set."""
        press = self.page.widget("button", label)
        return self.run([WidgetState(id=press.id, trigger_value=True)])

    def download(self, base_url: str, label: str) -> bytes:
        """Press the download button labelled ``label`` whose file is built on click (a
        callable ``data``): ask for the file as the browser does (a ``deferred_file``
        backend operation), then fetch the address the server answers with."""
        import urllib.request

        file_id = self.page.widget("download_button", label).deferred_file_id
        assert file_id, f"{label!r} is not a deferred download"
        msg = BackMsg()
        msg.backend_operation_request.request_id = "calib-test-download"
        msg.backend_operation_request.session_id = self.session_id or ""
        msg.backend_operation_request.deferred_file.file_id = file_id
        self.send(msg)
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer to the download of {label!r} within {self.timeout} s")
            fwd = ForwardMsg()
            fwd.ParseFromString(self.ws.recv(timeout=left))
            if fwd.WhichOneof("type") == "backend_operation_response":
                answer = fwd.backend_operation_response
                assert not answer.error_msg, answer.error_msg
                url = answer.deferred_file.url
                break
        with urllib.request.urlopen(base_url.rstrip("/") + url, timeout=self.timeout) as r:
            return r.read()

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ------------------------------------------------------- the password gate
def password_outcome(page: Page) -> str:
    """``"in"`` (the Data page's uploader shows), ``"locked"``, ``"wrong"`` or ``"form"``
    (the password form with no verdict)."""
    if page.has("file_uploader"):
        return "in"
    errors = " ".join(page.alerts())
    if "Too many wrong passwords" in errors:
        return "locked"
    if "Wrong password" in errors:
        return "wrong"
    page.widget("text_input", "Password")  # the form, or the page is something else entirely
    return "form"


def password_attempt(base_url: str, password: str, headers: Mapping[str, str] | None = None) -> str:
    """One attempt from a fresh session (a new WebSocket with these handshake headers):
    open the page, submit ``password``; its :func:`password_outcome`."""
    with Session(base_url, headers=headers) as s:
        first = s.run()
        assert password_outcome(first) == "form", first.text()
        return password_outcome(s.submit({"Password": password}, "Unlock"))
