#!/usr/bin/env bash
# Installs everything the tests need (pip packages, Debian's Chromium for the browser
# tests) and runs the whole suite. The README's quick start and .ci/run call this file.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -r requirements-dev.txt
python3 -m pip install -q --disable-pip-version-check --no-deps -e .

ruff check .
# The Dockerfile cannot be built here (no Docker engine): run its own install and start
# commands in a fresh virtualenv and probe the health endpoint instead.
if [ "${CALIB_SKIP_DOCKER_CHECK:-0}" != 1 ]; then
  bash .ci/check_docker.sh
fi
python3 -m pytest "$@"
