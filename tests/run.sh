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
#   4. ruff, the architecture check (tools/check_architecture.py), the manual's strict build
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
