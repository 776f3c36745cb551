"""Browser end-to-end fixtures: a real `streamlit run` server and Debian's Chromium.

Every test here is marked ``e2e`` and ``slow`` (``pytest -m "not slow"`` leaves them out). Chromium must be at /usr/bin/chromium (tests/run.sh
installs Debian's package); its absence is a failure, not a skip, so CI cannot pass
without driving the real browser.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
#: Screenshots and logs of the browser tests land here (CI keeps them as artifacts).
ARTIFACTS = ROOT / "test-artifacts"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.slow)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running `streamlit run app.py` on loopback."""

    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path
    data_dir: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def start_server(tmp: Path, *, env: dict[str, str] | None = None, data_dir: Path | None = None,
                 timeout: float = 60.0, base_url_path: str = "") -> Server:
    """Start the dashboard on a free loopback port (under ``base_url_path``, Streamlit's
    ``server.baseUrlPath``, when given) and wait for its /_stcore/health."""
    port = free_port()
    data_dir = data_dir or (tmp / "calib-data")
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = tmp / f"streamlit-{port}.log"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CALIB_")}
    full_env.update({
        "CALIB_DATA_DIR": str(data_dir),
        "PYTHONUNBUFFERED": "1",
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    })
    full_env.update(env or {})
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.headless=true", f"--server.port={port}", "--server.address=127.0.0.1",
        "--server.fileWatcherType=none",
    ]
    if base_url_path:
        cmd.append(f"--server.baseUrlPath={base_url_path}")
    log = open(log_path, "wb")  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT)
    server = Server(port, proc, log_path, data_dir, full_env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early:\n{server.log()}")
        try:
            with urllib.request.urlopen(f"{server.url}{'/' + base_url_path if base_url_path else ''}/_stcore/health",
                                        timeout=2) as r:
                if r.status == 200:
                    return server
        except OSError:
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"streamlit did not become healthy in {timeout}s:\n{server.log()}")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One dashboard server shared by the browser tests that need no special settings."""
    s = start_server(tmp_path_factory.mktemp("server"))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's Chromium driven by Playwright (no `playwright install`)."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists() or shutil.which("chromium"), (
        "Chromium is missing: run tests/run.sh (installs Debian's chromium)"
    )
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser: object) -> Iterator[object]:
    """A fresh browser context and page per test."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    pg = ctx.new_page()
    yield pg
    ctx.close()


def screenshot(page: object, name: str) -> Path:
    """Save a full-page screenshot into test-artifacts/ and return its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    return path
