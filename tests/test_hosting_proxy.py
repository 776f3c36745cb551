"""deploy/nginx.conf run by a real nginx (Debian's; tests/run.sh installs it) in front of two
stand-in replicas on loopback, checked at the protocol level (issue 27, item 4): the
sticky cookie, a browser's requests and WebSocket on one replica, browsers spread over
both, the WebSocket upgraded and kept open, the client address passed on.

The stand-ins are plain sockets that say which replica answered and what headers they
got; the configuration under test is the file the Compose deployment mounts, with only
the replicas' addresses and the listening port replaced (and a main file around it).
The deployment files themselves are checked against the code they name (the probes'
paths, the drain time, the trusted proxy's address).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import socketserver
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from calib.hosting.shutdown import DRAIN_SECONDS

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


class _Replica(socketserver.BaseRequestHandler):
    name = ""

    def handle(self) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            data += chunk
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
        if headers.get("upgrade", "").lower() == "websocket":
            self.request.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                 b"X-Replica: " + self.name.encode() + b"\r\n\r\n")
            while chunk := self.request.recv(4096):
                self.request.sendall(self.name.encode() + b":" + chunk)
            return
        body = json.dumps({"replica": self.name, "path": head[0].split()[1], "headers": headers}).encode()
        self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def _serve(name: str) -> tuple[socketserver.ThreadingTCPServer, int]:
    handler = type(f"Replica_{name}", (_Replica,), {"name": name})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def _nginx() -> str:
    path = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail("nginx is missing: tests/run.sh installs Debian's nginx")
    pytest.skip("nginx is missing (tests/run.sh installs Debian's nginx)")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """deploy/nginx.conf on a free loopback port, in front of replicas "app1" and "app2"."""
    nginx = _nginx()
    work = tmp_path_factory.mktemp("nginx")
    servers = {name: _serve(name) for name in ("app1", "app2")}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conf = (DEPLOY / "nginx.conf").read_text()
    for name, (_, p) in servers.items():
        conf = conf.replace(f"server {name}:8501", f"server 127.0.0.1:{p}")
    conf = conf.replace("listen 80;", f"listen 127.0.0.1:{port};")
    (work / "site.conf").write_text(conf)
    user = "user root;\n" if os.geteuid() == 0 else ""
    (work / "nginx.conf").write_text(
        f"{user}worker_processes 1;\npid {work}/nginx.pid;\nerror_log {work}/error.log;\n"
        "events { worker_connections 256; }\n"
        f"http {{ access_log off; client_body_temp_path {work}/body; proxy_temp_path {work}/proxy;\n"
        f"  fastcgi_temp_path {work}/f; uwsgi_temp_path {work}/u; scgi_temp_path {work}/s;\n"
        f"  include {work}/site.conf; }}\n"
    )
    proc = subprocess.Popen([nginx, "-p", str(work), "-c", str(work / "nginx.conf"), "-g", "daemon off;"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"nginx did not start: {proc.stderr.read().decode()}") from None
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)
        for server, _ in servers.values():
            server.shutdown()


def _get(port: int, path: str = "/", cookie: str | None = None) -> tuple[dict, str | None]:
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    con.request("GET", path, headers={"Cookie": f"calib_route={cookie}"} if cookie else {})
    resp = con.getresponse()
    body = json.loads(resp.read())
    set_cookie = resp.getheader("Set-Cookie") or ""
    con.close()
    m = re.match(r"calib_route=([^;]+);", set_cookie)
    return body, m.group(1) if m else None


def test_a_browser_gets_a_route_cookie_and_all_its_requests_reach_one_replica(proxy: int) -> None:
    first, cookie = _get(proxy)
    assert cookie and re.fullmatch(r"[0-9a-f]{32}", cookie)
    replicas = {_get(proxy, f"/page{k}", cookie)[0]["replica"] for k in range(20)}
    assert replicas == {first["replica"]}
    # the WebSocket of that browser: upgraded, on the same replica, bytes both ways
    ws = socket.create_connection(("127.0.0.1", proxy), timeout=10)
    ws.sendall(b"GET /_stcore/stream HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
               b"Cookie: calib_route=" + cookie.encode() + b"\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += ws.recv(4096)
    assert head.startswith(b"HTTP/1.1 101") and f"X-Replica: {first['replica']}".encode() in head
    ws.sendall(b"ping")
    assert ws.recv(4096) == f"{first['replica']}:ping".encode()
    time.sleep(1.5)  # longer than nginx's default keepalive to a client: the upgraded stream stays
    ws.sendall(b"again")
    assert ws.recv(4096) == f"{first['replica']}:again".encode()
    ws.close()


def test_browsers_spread_over_both_replicas_and_the_client_address_is_passed_on(proxy: int) -> None:
    seen = [_get(proxy)[0] for _ in range(40)]
    counts = {r: sum(s["replica"] == r for s in seen) for r in ("app1", "app2")}
    assert min(counts.values()) >= 5, counts  # 40 fresh browsers, a fair hash: P(< 5 on one) < 1e-6
    assert {s["headers"]["x-forwarded-for"] for s in seen} == {"127.0.0.1"}


# ------------------------------------------------------------------ the deployment files
def test_the_compose_file_runs_two_identical_replicas_on_one_catalog_and_one_volume() -> None:
    from calib.hosting.webguard import _READY

    spec = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    apps = [spec["services"][n] for n in ("app1", "app2")]
    assert apps[0] == apps[1]
    env = apps[0]["environment"]
    assert re.fullmatch(r"postgresql://calib:\$\{CALIB_DB_PASSWORD:\?[^}]+\}@db:5432/calib", env["CALIB_DATABASE_URL"])
    assert env["CALIB_TRUSTED_PROXIES"] == spec["services"]["proxy"]["networks"]["calib"]["ipv4_address"]
    assert apps[0]["volumes"] == ["calib-data:/data"]  # the image's CALIB_DATA_DIR
    assert "CALIB_DATA_DIR=/data" in (ROOT / "Dockerfile").read_text()
    probe = apps[0]["healthcheck"]["test"][-1]
    assert _READY.search(re.search(r"8501(/[^']+)'", probe).group(1))
    assert int(apps[0]["stop_grace_period"].rstrip("s")) > DRAIN_SECONDS
    # the passwords' file (deploy/.env) stays out of git and out of the image (build context: the repository)
    assert apps[0]["build"] == ".." and "deploy" in (ROOT / ".dockerignore").read_text().split()
    assert "/deploy/.env" in (ROOT / ".gitignore").read_text().split()


def test_the_kubernetes_example_probes_drains_and_keeps_browsers_sticky() -> None:
    from calib.hosting.webguard import _READY

    docs = {d["kind"]: d for d in yaml.safe_load_all((DEPLOY / "kubernetes" / "calib.yaml").read_text())}
    assert set(docs) == {"Secret", "PersistentVolumeClaim", "Deployment", "Service", "Ingress"}
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    box = pod["containers"][0]
    assert _READY.search(box["readinessProbe"]["httpGet"]["path"])
    assert box["livenessProbe"]["httpGet"]["path"] == "/_stcore/health"
    assert pod["terminationGracePeriodSeconds"] > DRAIN_SECONDS + 5  # the preStop pause, then the drain
    assert docs["PersistentVolumeClaim"]["spec"]["accessModes"] == ["ReadWriteMany"]
    assert {"CALIB_DATABASE_URL", "CALIB_PASSWORD", "secrets.toml"} <= set(docs["Secret"]["stringData"])
    notes = docs["Ingress"]["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
