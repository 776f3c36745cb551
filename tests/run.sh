#!/usr/bin/env bash
# Installs everything the tests need and runs the whole suite. The README's quick start and
# .ci/run (CI: a fresh clone, as root, no virtualenv) call this file.
#
#   1. Debian's Chromium for the browser tests, if there is no `chromium`, and Debian's
#      Java 17 (openjdk-17-jre-headless) for the local Spark session of
#      tests/test_sql_spark.py, if there is no `java` (apt-get);
#   2. a virtualenv, .venv (or $CALIB_VENV), created if missing: a stock Debian/Ubuntu Python
#      refuses `pip install` outside one (PEP 668, "externally-managed-environment"); where
#      `python3 -m venv` lacks ensurepip, Debian's python3-venv is installed first;
#   3. the pinned test requirements (requirements-dev.txt, which includes requirements.txt)
#      and calib itself (editable) into it;
#   4. a throwaway PostgreSQL cluster (Debian's postgresql, installed if missing: initdb into a
#      temporary folder, on a free loopback port, as the postgres user when run as root:
#      PostgreSQL refuses root), stopped and removed on exit; its URL is exported as
#      CALIB_TEST_DATABASE_URL for the catalog tests' PostgreSQL parameter (tests/pgtest.py),
#      and Debian's nginx (nginx-light) for the deployment's proxy configuration
#      (tests/test_hosting_proxy.py, tests/test_hosting_failover.py);
#   5. ruff, the architecture check (tools/check_architecture.py), the manual's strict build
#      (mkdocs build --strict: a broken link or anchor in docs/ fails), the Dockerfile check
#      (.ci/check_docker.sh; CALIB_SKIP_DOCKER_CHECK=1 skips it),
#      and pytest with the virtualenv's Python (arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

if ! command -v chromium >/dev/null 2>&1; then
  apt_install chromium
fi
# PySpark 4 starts a JVM and needs Java 17 or newer; the headless JRE is enough (no GUI libraries)
if ! command -v java >/dev/null 2>&1; then
  # slim Debian images drop /usr/share/man, and the JRE's postinst then fails to link java.1.gz
  if [ "$(id -u)" != 0 ]; then sudo mkdir -p /usr/share/man/man1; else mkdir -p /usr/share/man/man1; fi
  apt_install openjdk-17-jre-headless
fi

# deploy/nginx.conf is run by a real nginx in front of two stand-in replicas (tests/test_hosting_proxy.py)
# and of two real replicas, one killed mid-labelling (tests/test_hosting_failover.py); a user's
# PATH may lack /usr/sbin, where Debian puts it. Under CI=true those tests fail without it.
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  apt_install nginx-light || apt_install nginx  # newer releases fold nginx-light into nginx
fi
# The catalog tests run against SQLite and PostgreSQL (issue 27); under CI=true a missing
# CALIB_TEST_DATABASE_URL fails them instead of skipping.
if [ -z "${CALIB_TEST_DATABASE_URL:-}" ]; then
  PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
    apt_install postgresql
    PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  fi
  PG_DIR="$(mktemp -d /tmp/calib-pg.XXXXXX)"
  PG_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  as_pg=()
  if [ "$(id -u)" = 0 ]; then
    id -u postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$PG_DIR"
    as_pg=(runuser -u postgres --)
  fi
  "${as_pg[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U calib --auth=trust -E UTF8 >/dev/null
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
    -o "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories=$PG_DIR -c fsync=off" start >/dev/null
  trap '"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1; rm -rf "$PG_DIR"' EXIT
  export CALIB_TEST_DATABASE_URL="postgresql://calib@127.0.0.1:$PG_PORT/postgres"
  echo "tests/run.sh: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') at $CALIB_TEST_DATABASE_URL"
fi

VENV="${CALIB_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  if ! python3 -m venv "$VENV" 2>/dev/null; then
    rm -rf "$VENV"
    # Debian/Ubuntu ship venv without ensurepip: python3.X-venv brings it
    apt_install "python3-venv" "python$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')-venv" \
      || apt_install python3-venv
    python3 -m venv "$VENV"
  fi
fi
PY="$VENV/bin/python"
echo "tests/run.sh: virtualenv $VENV ($("$PY" --version))"

"$PY" -m pip install -q --disable-pip-version-check -r requirements-dev.txt
"$PY" -m pip install -q --disable-pip-version-check --no-deps -e .

"$PY" -m ruff check .
# The house rules of docs/ARCHITECTURE.md: module and function sizes, no import cycles,
# Streamlit only in the dashboard, the rooms' imports.
"$PY" tools/check_architecture.py
NO_MKDOCS_2_WARNING=1 "$PY" -m mkdocs build --strict --site-dir "$(mktemp -d)"  # the manual, docs/: a broken link fails
# The Dockerfile cannot be built here (no Docker engine): run its own install and start
# commands in a fresh virtualenv of their own and probe the health endpoint instead.
if [ "${CALIB_SKIP_DOCKER_CHECK:-0}" != 1 ]; then
  bash .ci/check_docker.sh
fi
"$PY" -m pytest "$@"
