"""A real PostgreSQL for the catalog tests' ``postgresql`` parameter (issue 27): no mock.

The server is ``CALIB_TEST_DATABASE_URL`` when it is set (tests/run.sh starts a throwaway
cluster and exports it); otherwise this module starts its own throwaway cluster once per
test session, the same way (Debian's ``initdb`` and ``pg_ctl``, as the ``postgres`` user
when running as root, on a free loopback port, removed at exit). When neither is possible
the PostgreSQL tests fail under ``CI=true`` (CI must not pass without them) and are
skipped, saying why, elsewhere.

Each test gets a schema of its own (``search_path`` in the URL's ``options``), dropped
afterwards: tests do not see each other's rows.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import pytest

_STARTED: dict[str, str] = {}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_cluster() -> str | None:
    """A throwaway cluster's URL, or ``None`` when PostgreSQL is not installed."""
    if "url" in _STARTED:
        return _STARTED["url"]
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not bins:
        return None
    pg_bin = os.path.dirname(bins[-1])
    work = tempfile.mkdtemp(prefix="calib-pg-")
    as_pg: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        shutil.chown(work, "postgres")
        as_pg = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    run = dict(check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    subprocess.run([*as_pg, f"{pg_bin}/initdb", "-D", f"{work}/data", "-U", "calib", "--auth=trust", "-E", "UTF8"],
                   **run)
    opts = f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={work} -c fsync=off"
    subprocess.run([*as_pg, f"{pg_bin}/pg_ctl", "-D", f"{work}/data", "-l", f"{work}/log", "-w", "-o", opts, "start"],
                   **run)

    def stop() -> None:
        subprocess.run([*as_pg, f"{pg_bin}/pg_ctl", "-D", f"{work}/data", "-m", "immediate", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        shutil.rmtree(work, ignore_errors=True)

    atexit.register(stop)
    _STARTED["url"] = f"postgresql://calib@127.0.0.1:{port}/postgres"
    return _STARTED["url"]


def server_url() -> str:
    """The PostgreSQL server's URL; fails (under ``CI=true``) or skips when there is none."""
    url = os.environ.get("CALIB_TEST_DATABASE_URL") or _start_cluster()
    if url:
        return url
    why = "no PostgreSQL: CALIB_TEST_DATABASE_URL is unset and initdb is missing (tests/run.sh installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


def with_schema(url: str, schema: str) -> str:
    """``url`` with ``search_path`` set to ``schema`` (libpq's ``options`` parameter)."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-c search_path={schema}')}"


def fresh_database() -> Iterator[str]:
    """A URL whose tables land in a new, empty schema; the schema is dropped afterwards."""
    import psycopg

    url = server_url()
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}")
    try:
        yield with_schema(url, schema)
    finally:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute(f"DROP SCHEMA {schema} CASCADE")


def database_urls(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """For a fixture parametrised ``["sqlite", "postgresql"]``: ``None`` (the embedded
    SQLite catalog) or a fresh PostgreSQL schema's URL."""
    if request.param == "sqlite":
        yield None
    else:
        yield from fresh_database()
