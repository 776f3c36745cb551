"""Two real dashboard replicas on one PostgreSQL catalog behind ``deploy/nginx.conf``, run
by Debian's nginx, all on loopback (issue 27), and reviewers that label through it at the
protocol level: the harness of ``tests/test_hosting_failover.py`` (a miniature, in CI) and
``bench/load_reviewers.py`` (50 reviewers for minutes, not in CI).

- :func:`start_proxy`: the deployment's nginx configuration with only the replicas'
  addresses and the listening port replaced, and an access log naming the replica each
  request went to (``$upstream_addr``): which replica served whom is read from the proxy,
  not assumed.
- :class:`Replica`: ``streamlit run app.py`` (tests/e2e/conftest.py's ``start_server``),
  which can be killed with SIGKILL and restarted on the same port, as a supervisor would.
- :class:`Reviewer`: one browser's worth of protocol (tests/wsclient.py): a page request
  through the proxy for its sticky cookie, the WebSocket with that cookie, the password,
  the Review page of the link with ``&reviewer=NAME``; a click is Right or Wrong with a
  unique click id in the note, so every label in the catalog names the click that made
  it. Each click is logged with what the reviewer was told: ``saved`` (the page said
  "Saved"), ``refused`` (it said why not) or ``unknown`` (the connection was lost before
  an answer: the label may or may not be stored, and the reviewer was never told "Saved").
- :func:`check_labels`: the clients' logs against the catalog's rows: every ``saved``
  click stored exactly once with its item and verdict (none lost), no click id stored
  twice (none duplicated), no row from a click nobody made.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from tests.e2e.conftest import ROOT, Server, free_port, start_server
from tests.wsclient import Page, Session, password_attempt, password_outcome

ITEM_LINE = re.compile(r"^Item \d+ of (\d+)(?: \((review queue|audit sample)\))?: (\S+)$")  # blind: no list
_LOG = re.compile(r"^(\S+) (\S+) (\S+)$")


def nginx_binary() -> str | None:
    """Debian's nginx (tests/run.sh installs nginx-light), or ``None``."""
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


def judge_file(n: int) -> bytes:
    """A judge's file of ``n`` items, confidences 10..100 in turn, about two thirds right;
    the question text says which item it is."""
    lines = [json.dumps({"id": f"q{i:05d}", "confidence": 10 * (1 + i % 10), "correct": i % 3 != 0,
                         "question": f"question {i}"}) for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


# ------------------------------------------------------------------ the proxy
@dataclass
class Proxy:
    port: int
    proc: subprocess.Popen[bytes]
    work: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self) -> list[tuple[str, str, str]]:
        """``(route cookie, replica address, URI)`` of every request so far (the access log;
        a WebSocket's line is written when it closes)."""
        text = (self.work / "access.log").read_text()
        return [m.groups() for line in text.splitlines() if (m := _LOG.match(line))]  # type: ignore[misc]

    def replica_of(self, cookie: str) -> str:
        """The address the last logged request with this route cookie went to (nginx
        writes a request's line just after its response: waited for, up to 5 s)."""
        deadline = time.monotonic() + 5
        while not (hits := [addr for route, addr, _ in self.routes() if route == cookie]):
            assert time.monotonic() < deadline, f"no request with route {cookie} in the proxy's log"
            time.sleep(0.02)
        return hits[-1]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def start_proxy(nginx: str, work: Path, upstreams: dict[str, int]) -> Proxy:
    """``deploy/nginx.conf`` on a free loopback port in front of ``{"app1": port, "app2": port}``."""
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    for name, p in upstreams.items():
        assert f"server {name}:8501" in conf, name
        conf = conf.replace(f"server {name}:8501", f"server 127.0.0.1:{p}")
    assert "listen 80;" in conf
    conf = conf.replace("listen 80;", f"listen 127.0.0.1:{port};")
    (work / "site.conf").write_text(conf)
    user = "user root;\n" if os.geteuid() == 0 else ""
    (work / "nginx.conf").write_text(
        f"{user}worker_processes 1;\npid {work}/nginx.pid;\nerror_log {work}/error.log;\n"
        "events { worker_connections 1024; }\n"
        "http { log_format route '$calib_route $upstream_addr $request_uri';\n"
        f"  access_log {work}/access.log route; client_body_temp_path {work}/body; proxy_temp_path {work}/proxy;\n"
        f"  fastcgi_temp_path {work}/f; uwsgi_temp_path {work}/u; scgi_temp_path {work}/s;\n"
        f"  include {work}/site.conf; }}\n"
    )
    proc = subprocess.Popen([nginx, "-p", str(work), "-c", str(work / "nginx.conf"), "-g", "daemon off;"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return Proxy(port, proc, work)
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"nginx did not start: {proc.stderr.read().decode()}") from None  # type: ignore[union-attr]
            time.sleep(0.05)


# ------------------------------------------------------------------ the replicas
class Replica:
    """One ``streamlit run app.py``, restartable on its port."""

    def __init__(self, work: Path, env: dict[str, str], data_dir: Path) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self.server: Server = start_server(work, env=env, data_dir=data_dir, timeout=120)
        self.work = work
        self.starts = 1

    @property
    def port(self) -> int:
        return self.server.port

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs, as when a node is lost."""
        self.server.proc.send_signal(signal.SIGKILL)
        self.server.proc.wait(10)

    def restart(self, timeout: float = 120.0) -> float:
        """Start the same command on the same port; the seconds until its health answers."""
        old = self.server
        t0 = time.monotonic()
        log = open(self.work / f"restart-{self.starts}.log", "wb")  # noqa: SIM115 - lives as long as the process
        proc = subprocess.Popen(old.proc.args, cwd=ROOT, env=old.env, stdout=log, stderr=subprocess.STDOUT)
        self.server = Server(old.port, proc, Path(log.name), old.data_dir, old.env)
        self.starts += 1
        while time.monotonic() - t0 < timeout:
            if proc.poll() is not None:
                raise RuntimeError(f"the restarted replica exited:\n{self.server.log()}")
            try:
                with urllib.request.urlopen(f"{self.server.url}/_calib/ready", timeout=2) as r:
                    if r.status == 200:
                        return time.monotonic() - t0
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"the restarted replica was not ready in {timeout} s")

    def logs(self) -> str:
        return "".join(p.read_text(errors="replace") for p in sorted(self.work.glob("*.log")))

    def stop(self) -> None:
        self.server.stop()


@dataclass
class Deployment:
    proxy: Proxy
    replicas: list[Replica]
    token: str
    database_url: str
    password: str

    def replica_of(self, address: str) -> int:
        """The index of the replica at ``127.0.0.1:PORT`` (as the access log names it)."""
        return [f"127.0.0.1:{r.port}" for r in self.replicas].index(address)


@contextmanager
def deployment(work: Path, database_url: str, data: bytes, *, password: str, sample_size: int = 50,
               env: dict[str, str] | None = None) -> Iterator[Deployment]:
    """A share of ``data`` (reviewing on) in a fresh catalog at ``database_url``, two replicas
    on it and the proxy in front; everything stopped on exit."""
    import concurrent.futures

    from calib.hosting.shares import DatasetSpec
    from calib.hosting.store import Store

    nginx = nginx_binary()
    assert nginx, "nginx is missing"
    data_dir = work / "data"
    store = Store.open(data_dir, database_url=database_url)  # the schema first: the starts then only read it
    r = store.share([DatasetSpec.from_upload("judge", "judge.jsonl", data)],
                    {"v": 1, "params": {"page": "review", "lo": "60"}})
    assert store.set_review(r.token, enabled=True, sample_size=sample_size, owner_secret=r.owner_secret).ok
    full_env = {"CALIB_DATABASE_URL": database_url, "CALIB_PASSWORD": password,
                "CALIB_TRUSTED_PROXIES": "127.0.0.1", **(env or {})}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        replicas = list(pool.map(lambda k: Replica(work / f"replica{k}", full_env, data_dir), range(2)))
    proxy = None
    try:
        proxy = start_proxy(nginx, work / "nginx", {"app1": replicas[0].port, "app2": replicas[1].port})
        yield Deployment(proxy, replicas, r.token, database_url, password)
    finally:
        if proxy:
            proxy.stop()
        for rep in replicas:
            rep.stop()


# ------------------------------------------------------------------ a reviewer
def route_cookie(base_url: str) -> str:
    """What a browser's first page request gets: the proxy's sticky ``calib_route`` cookie."""
    host, port = base_url.removeprefix("http://").split(":")
    con = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        con.request("GET", "/_stcore/health")
        resp = con.getresponse()
        resp.read()
        m = re.search(r"(?:^|, )calib_route=([^;]+);", ", ".join(resp.headers.get_all("Set-Cookie") or []))
        assert m, "the proxy set no calib_route cookie"
        return m.group(1)
    finally:
        con.close()


@dataclass
class Click:
    """One Right / Wrong click as the reviewer saw it."""

    click_id: str
    reviewer: str
    item: str
    correct: bool
    sent: float  # time.monotonic() when the click left
    outcome: str = "unknown"  # saved | refused | unknown (connection lost before an answer)
    answered: float | None = None  # when the page's "Saved" (or refusal) arrived
    message: str = ""


class _TimedSession(Session):
    """A session that notes when the run's first success or warning alert arrives (the
    reviewer's "Saved: …", drawn before the rest of the page)."""

    alert_at: float | None = None
    alert: str = ""

    def _read_run(self) -> Page:
        self.alert_at, self.alert = None, ""
        recv = self.ws.recv

        def timed(timeout: float | None = None) -> bytes:
            data = recv(timeout=timeout)
            if self.alert_at is None:
                fwd = ForwardMsg()
                fwd.ParseFromString(data)
                if (fwd.WhichOneof("type") == "delta" and fwd.delta.WhichOneof("type") == "new_element"
                        and fwd.delta.new_element.WhichOneof("type") == "alert"
                        and fwd.delta.new_element.alert.format in (Alert.SUCCESS, Alert.WARNING)):
                    self.alert_at, self.alert = time.monotonic(), fwd.delta.new_element.alert.body
            return data

        self.ws.recv = timed  # type: ignore[method-assign]
        try:
            return super()._read_run()
        finally:
            self.ws.recv = recv  # type: ignore[method-assign]


@dataclass
class Reviewer:
    """One reviewer: a browser's cookie, address and session, and the log of its clicks."""

    base_url: str
    token: str
    name: str
    password: str
    address: str  # the client address the proxy is told (X-Forwarded-For), as distinct hosts have
    timeout: float = 120.0
    clicks: list[Click] = field(default_factory=list)
    connects: list[float] = field(default_factory=list)  # when each session reached the Review page
    session: _TimedSession | None = None
    cookie: str = ""

    def connect(self) -> None:
        """Open the link's Review page past the password, in a new session (a reload)."""
        self.close()
        if not self.cookie:
            self.cookie = route_cookie(self.base_url)
        s = _TimedSession(self.base_url, headers={"Cookie": f"calib_route={self.cookie}",
                                                  "X-Forwarded-For": self.address},
                          query_string=f"share={self.token}&reviewer={self.name}", timeout=self.timeout)
        self.session = s
        first = s.run()
        assert password_outcome(first) == "form", first.text()
        unlocked = s.submit({"Password": self.password}, "Unlock")
        refused = [a for a in unlocked.alerts() if "password" in a.lower()]
        assert not refused, refused  # "Wrong password" / "Too many wrong passwords"
        if f"reviewer={self.name}" not in s.query_string.split("&"):
            s.query_string += f"&reviewer={self.name}"  # the opened link's address replaced the query
        page = s.run(page="Review")
        self.current_item(page)
        self.connects.append(time.monotonic())

    @staticmethod
    def current_item(page: Page) -> str:
        for t in page.of_kind("text"):
            if m := ITEM_LINE.match(t.body.strip()):
                return m.group(3)
        raise AssertionError(f"no item on the Review page: {page.text()[:500]}")

    def click(self, correct: bool) -> Click:
        """Label the item shown: Right or Wrong, with this click's id as the note."""
        assert self.session is not None
        s = self.session
        item = self.current_item(s.page)
        c = Click(f"{self.name}-{len(self.clicks):05d}", self.name, item, correct, time.monotonic())
        self.clicks.append(c)
        note = s.page.widget("text_input", "Note (optional)")
        button = s.page.widget("button", "Right" if correct else "Wrong")
        try:
            page = s.run([WidgetState(id=note.id, string_value=c.click_id),
                          WidgetState(id=button.id, trigger_value=True)])
        except Exception:  # the connection lost: "unknown", unless "Saved" had arrived before
            if s.alert.startswith("Saved"):
                c.outcome, c.answered = "saved", s.alert_at
            raise
        c.answered = s.alert_at or time.monotonic()
        saved = page.alerts(Alert.SUCCESS)
        if saved and saved[0].startswith("Saved"):  # "Saved: right." (markdown-escaped)
            c.outcome = "saved"
        else:
            shown = page.alerts(Alert.WARNING) + page.alerts(Alert.ERROR) + [
                f"{e.type}: {e.message}" for e in page.of_kind("exception")]
            c.outcome, c.message = "refused", " ".join(shown) or page.text()[:300]
        return c

    def idle(self, seconds: float) -> None:
        """Think for ``seconds`` with the WebSocket open; returns early, raising, if the
        server closes it (the browser then reconnects at once, as Streamlit's page does)."""
        assert self.session is not None
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                self.session.ws.recv(timeout=left)  # nothing is expected between runs; ignored
            except TimeoutError:
                return

    def close(self) -> None:
        if self.session is not None:
            with contextlib.suppress(Exception):  # a connection the server already dropped
                self.session.close()
            self.session = None


# ------------------------------------------------------------------ the check
@dataclass
class LabelCheck:
    saved: int
    unknown: int
    unknown_stored: int
    refused: int
    rows: int
    lost: list[str]  # told "Saved", not stored
    duplicated: list[str]  # stored more than once
    mismatched: list[str]  # stored unlike the click (another reviewer, item or verdict), or stored though refused
    strangers: list[str]  # stored, but no reviewer made that click

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.mismatched or self.strangers)


def catalog_labels(database_url: str) -> list[tuple[str, str, str, bool]]:
    """``(note, reviewer, item, correct)`` of every label row, read with psycopg itself."""
    import psycopg

    with psycopg.connect(database_url) as con:
        rows = con.execute("SELECT note, reviewer, item, correct FROM labels ORDER BY id").fetchall()
    return [(r[0], r[1], r[2], bool(r[3])) for r in rows]


def check_labels(clicks: list[Click], rows: list[tuple[str, str, str, bool]]) -> LabelCheck:
    """The clients' logs against the catalog: each click id is the note of its label."""
    by_note: dict[str, list[tuple[str, str, str, bool]]] = {}
    for row in rows:
        by_note.setdefault(row[0], []).append(row)
    made = {c.click_id: c for c in clicks}
    lost, mismatched = [], []
    for c in clicks:
        got = by_note.get(c.click_id, [])
        if c.outcome == "saved" and not got:
            lost.append(c.click_id)
        if any(r[1:] != (c.reviewer, c.item, c.correct) for r in got) or (c.outcome == "refused" and got):
            mismatched.append(c.click_id)
    return LabelCheck(
        saved=sum(c.outcome == "saved" for c in clicks),
        unknown=sum(c.outcome == "unknown" for c in clicks),
        unknown_stored=sum(c.outcome == "unknown" and c.click_id in by_note for c in clicks),
        refused=sum(c.outcome == "refused" for c in clicks),
        rows=len(rows),
        lost=lost,
        duplicated=sorted(n for n, got in by_note.items() if len(got) > 1),
        mismatched=mismatched,
        strangers=sorted(n for n in by_note if n not in made),
    )


# ------------------------------------------------------------------ labelling for a while
@dataclass
class Trouble:
    """What went wrong for one reviewer, with when (time.monotonic())."""

    at: float
    reviewer: str
    #: "closed" (the connection lost between clicks), "dropped" (lost with a click under way:
    #: its outcome unknown), "connect" (a (re)connection failed), "refused" (a click refused)
    what: str
    detail: str


def review(rv: Reviewer, until: Callable[[], float], think: tuple[float, float], seed: int,
           troubles: list[Trouble]) -> None:
    """Label until ``until()`` (a ``time.monotonic()`` deadline, read at every step):
    think a random time in ``think`` seconds with the page open, click Right or Wrong at
    random; when the connection is lost, reconnect (a reload) and carry on, as a reviewer
    does."""
    import random

    rng = random.Random(seed)
    while time.monotonic() < until():
        if rv.session is None:
            try:
                rv.connect()
            except Exception as exc:  # noqa: BLE001 - a replica going away or coming back
                troubles.append(Trouble(time.monotonic(), rv.name, "connect", f"{type(exc).__name__}: {exc}"[:200]))
                rv.close()
                time.sleep(0.5 + rng.random())
                continue
        try:
            rv.idle(min(rng.uniform(*think), max(0.0, until() - time.monotonic())))
        except Exception as exc:  # noqa: BLE001 - the replica went away while the reviewer read
            troubles.append(Trouble(time.monotonic(), rv.name, "closed", f"{type(exc).__name__}: {exc}"[:200]))
            rv.close()
            continue
        if time.monotonic() >= until():
            break
        try:
            c = rv.click(rng.random() < 0.5)
        except Exception as exc:  # noqa: BLE001 - the connection lost mid-click: the outcome is unknown
            troubles.append(Trouble(time.monotonic(), rv.name, "dropped", f"{type(exc).__name__}: {exc}"[:200]))
            rv.close()
            continue
        if c.outcome == "refused":
            troubles.append(Trouble(time.monotonic(), rv.name, "refused", c.message[:200]))
    rv.close()


def attempt(base_url: str, password: str, cookie: str, address: str) -> str:
    """One password attempt from a fresh session with this route cookie and client address:
    ``"in"``, ``"wrong"`` or ``"locked"`` (tests/wsclient.py)."""
    return password_attempt(base_url, password, {"Cookie": f"calib_route={cookie}", "X-Forwarded-For": address})


def cookies_per_replica(d: Deployment, per: int = 1) -> list[list[str]]:
    """``per`` route cookies the proxy sends to each replica (as the proxy's log says)."""
    found: list[list[str]] = [[] for _ in d.replicas]
    for _ in range(200):
        cookie = route_cookie(d.proxy.url)
        k = d.replica_of(d.proxy.replica_of(cookie))
        if len(found[k]) < per:
            found[k].append(cookie)
        if all(len(f) >= per for f in found):
            return found
    raise AssertionError(f"200 browsers did not reach both replicas: {found}")
