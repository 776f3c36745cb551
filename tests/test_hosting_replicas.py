"""Two real dashboard processes (``streamlit run app.py``) on one PostgreSQL catalog (issue
27): wrong passwords spread over both lock the client out of both, at the protocol level
(tests/wsclient.py: the password form submitted over Streamlit's WebSocket, as a browser
does); each answers the readiness probe through the app's own middleware.
"""

from __future__ import annotations

import concurrent.futures
import urllib.request
from collections.abc import Iterator

import pytest

from calib.hosting.store import Store
from tests.e2e.conftest import Server, start_server
from tests.pgtest import fresh_database
from tests.wsclient import password_attempt

pytestmark = pytest.mark.slow  # two servers start: ~15 s


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Server]]]:
    databases = fresh_database()
    url = next(databases)
    tmp = tmp_path_factory.mktemp("replicas")
    env = {"CALIB_DATABASE_URL": url, "CALIB_PASSWORD": "open sesame", "CALIB_LOGIN_MAX_FAILURES": "3"}
    Store.open(tmp / "data", database_url=url)  # the schema first: the two starts then only read it
    for k in range(2):
        (tmp / f"r{k}").mkdir()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        servers = list(pool.map(lambda k: start_server(tmp / f"r{k}", env=env, data_dir=tmp / "data"), range(2)))
    try:
        yield url, servers
    finally:
        for s in servers:
            s.stop()
        databases.close()


def test_wrong_passwords_spread_over_two_processes_lock_the_client_out_of_both(replicas) -> None:
    _, (a, b) = replicas
    assert password_attempt(a.url, "guess 1") == "wrong"
    assert password_attempt(b.url, "guess 2") == "wrong"
    assert password_attempt(a.url, "guess 3") == "locked"
    assert password_attempt(b.url, "open sesame") == "locked"  # refused unchecked on the other one
    assert "Traceback" not in a.log() + b.log()


def test_each_process_answers_the_readiness_probe(replicas) -> None:
    _, servers = replicas
    for s in servers:
        with urllib.request.urlopen(f"{s.url}/_calib/ready", timeout=10) as r:
            assert (r.status, r.read()) == (200, b"ready")
