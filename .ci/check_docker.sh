#!/usr/bin/env bash
# Checks the Dockerfile without a Docker engine (CI machines have only the client).
#
# It reads the Dockerfile and runs *its own* commands, so the check cannot drift from it:
#   1. static checks: python 3.11 slim base, non-root USER, EXPOSE 8501, a VOLUME for
#      CALIB_DATA_DIR, a HEALTHCHECK on /_stcore/health, CMD "streamlit run app.py ..." with
#      --server.address=0.0.0.0 (the repository's config.toml binds 127.0.0.1);
#   2. copies the build context (honouring .dockerignore) to a temporary /app;
#   3. creates a fresh virtualenv and runs the Dockerfile's `RUN pip install ...` line(s) in it,
#      with the Dockerfile's ENV (timed);
#   4. starts the CMD (port moved to a free one, address to 127.0.0.1) with the Dockerfile's
#      ENV and the data dir in the temporary folder, and probes /_stcore/health until 200;
#   5. runs the Dockerfile's HEALTHCHECK command itself against that server;
#   6. checks that server.allowedHosts is in force (WebSocket with a foreign Host refused);
#   7. runs app.py once with the virtualenv's packages only (AppTest), so a module missing from
#      requirements.txt fails here, not in production;
#   8. stops the server. Exit status 0 only if every step passed.
#
# Usage: .ci/check_docker.sh            (env: CHECK_DOCKER_TIMEOUT=seconds for the health probe, default 90;
#                                            CHECK_DOCKER_KEEP=1 keeps the temporary folder)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
TIMEOUT="${CHECK_DOCKER_TIMEOUT:-90}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/calib-docker-check.XXXXXX")"
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  if [ "${CHECK_DOCKER_KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

say() { printf '[check_docker] %s\n' "$*"; }
fail() { printf '[check_docker] FAIL: %s\n' "$*" >&2; exit 1; }
now() { "$PY" -c 'import time; print(f"{time.monotonic():.3f}")'; }
elapsed() { "$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }

# ---------------------------------------------------------------- 1. parse + static checks
"$PY" - "$ROOT/Dockerfile" "$WORK/plan.json" <<'PYEOF' || fail "Dockerfile checks"
import json, re, shlex, sys

text = open(sys.argv[1], encoding="utf-8").read()
lines, buf = [], ""
for raw in text.splitlines():
    s = raw.strip()
    if not buf and (not s or s.startswith("#")):
        continue
    if s.startswith("#"):
        continue
    if s.endswith("\\"):
        buf += s[:-1] + " "
        continue
    lines.append(buf + s)
    buf = ""
plan = {"env": {}, "pip": [], "cmd": None, "healthcheck": None, "user": None, "expose": [], "volume": [],
        "from": None, "workdir": None}
problems = []
for line in lines:
    word, _, rest = line.partition(" ")
    word, rest = word.upper(), rest.strip()
    if word == "FROM":
        plan["from"] = rest.split()[0]
    elif word == "ENV":
        for tok in shlex.split(rest):
            if "=" not in tok:
                problems.append(f"ENV without '=': {tok}")
            k, _, v = tok.partition("=")
            plan["env"][k] = v
    elif word == "WORKDIR":
        plan["workdir"] = rest
    elif word == "RUN" and re.search(r"\bpip\b.*\binstall\b", rest):
        if not rest.startswith("pip install "):
            problems.append(f"keep the install line plain ('RUN pip install ...'): {rest}")
        plan["pip"].append(shlex.split(rest))
    elif word == "USER":
        plan["user"] = rest
    elif word == "EXPOSE":
        plan["expose"] += rest.split()
    elif word == "VOLUME":
        plan["volume"] += json.loads(rest) if rest.startswith("[") else rest.split()
    elif word == "CMD":
        if not rest.startswith("["):
            problems.append("CMD must be in exec form (a JSON array)")
        else:
            plan["cmd"] = json.loads(rest)
    elif word == "HEALTHCHECK":
        m = re.search(r"\bCMD\s+(\[.*\])\s*$", rest)
        if not m:
            problems.append("HEALTHCHECK must use CMD in exec form (a JSON array)")
        else:
            plan["healthcheck"] = json.loads(m.group(1))

base = plan["from"] or ""
if not re.fullmatch(r"python:3\.11[\w.-]*-slim[\w.-]*(@sha256:[0-9a-f]{64})?", base):
    problems.append(f"base image should be python:3.11-slim*, got {base!r}")
if plan["user"] in (None, "", "root", "0") or (plan["user"] or "").startswith("0:"):
    problems.append(f"the image must switch to a non-root USER, got {plan['user']!r}")
if "8501" not in plan["expose"]:
    problems.append("EXPOSE 8501 missing")
data_dir = plan["env"].get("CALIB_DATA_DIR")
if not data_dir or data_dir not in plan["volume"]:
    problems.append(f"CALIB_DATA_DIR ({data_dir!r}) must be a VOLUME ({plan['volume']})")
if not plan["pip"]:
    problems.append("no 'RUN pip install' line")
if not plan["cmd"] or plan["cmd"][:3] != ["streamlit", "run", "app.py"]:
    problems.append(f"CMD should start with streamlit run app.py, got {plan['cmd']}")
elif "--server.address=0.0.0.0" not in plan["cmd"]:
    # .streamlit/config.toml binds 127.0.0.1: without this the published port reaches nothing
    problems.append(f"CMD must bind --server.address=0.0.0.0 explicitly, got {plan['cmd']}")
if not plan["healthcheck"] or "/_stcore/health" not in " ".join(plan["healthcheck"]):
    problems.append("HEALTHCHECK must probe /_stcore/health")
if problems:
    print("\n".join("  - " + p for p in problems), file=sys.stderr)
    sys.exit(1)
json.dump(plan, open(sys.argv[2], "w"))
print(f"[check_docker] Dockerfile: base {base}, user {plan['user']}, volume {plan['volume']}, "
      f"{len(plan['pip'])} pip line(s), CMD {' '.join(plan['cmd'])}")
PYEOF

# ---------------------------------------------------------------- 2. build context
"$PY" - "$ROOT" "$WORK/app" <<'PYEOF' || fail "copying the build context"
import fnmatch, os, shutil, sys
from pathlib import Path

root, dest = Path(sys.argv[1]), Path(sys.argv[2])
patterns = []
ignore_file = root / ".dockerignore"
if ignore_file.exists():
    for line in ignore_file.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("!"):
            sys.exit(f".dockerignore: negated patterns are not supported by this check: {line}")
        patterns.append(line.strip("/"))

def ignored(rel: str) -> bool:
    parts = rel.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pat in patterns:
        if pat.startswith("**/"):
            if any(fnmatch.fnmatchcase(p, pat[3:]) for p in parts):
                return True
        elif any(fnmatch.fnmatchcase(p, pat) for p in prefixes):
            return True
    return False

count = 0
for dirpath, dirnames, filenames in os.walk(root):
    rel_dir = os.path.relpath(dirpath, root)
    rel_dir = "" if rel_dir == "." else rel_dir
    dirnames[:] = [d for d in dirnames if not ignored(f"{rel_dir}/{d}".lstrip("/"))]
    for f in filenames:
        rel = f"{rel_dir}/{f}".lstrip("/")
        if ignored(rel):
            continue
        (dest / rel_dir).mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, dest / rel)
        count += 1
print(f"[check_docker] build context: {count} files copied (after .dockerignore)")
for secret in (".streamlit/secrets.toml", ".calib-data"):
    if (dest / secret).exists():
        sys.exit(f"{secret} would be baked into the image; add it to .dockerignore")
PYEOF

APP_DIR="$WORK/app"
if [ ! -f "$APP_DIR/app.py" ]; then
  say "NOTE: app.py does not exist yet; using a throwaway one-line app.py in the temporary copy"
  printf 'import streamlit as st\nst.write("calib placeholder")\n' > "$APP_DIR/app.py"
fi

# Environment of the container: the Dockerfile's ENV, a clean PATH, the data dir and HOME
# moved into the temporary folder.
ENV_ARGS=()
while IFS= read -r kv; do ENV_ARGS+=("$kv"); done < <("$PY" -c '
import json, sys
plan = json.load(open(sys.argv[1]))
for k, v in plan["env"].items():
    if k not in ("CALIB_DATA_DIR", "HOME", "PATH"):
        print(f"{k}={v}")
' "$WORK/plan.json")
VENV="$WORK/venv"
mkdir -p "$WORK/data" "$WORK/home"
BASE_ENV=(env -i "PATH=$VENV/bin:/usr/local/bin:/usr/bin:/bin" "HOME=$WORK/home" "LANG=C.UTF-8"
          "CALIB_DATA_DIR=$WORK/data" "${ENV_ARGS[@]}")
# The machine's pip configuration (mirrors, certificates) still applies to the install.
for v in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_CERT PIP_CONSTRAINT PIP_DEFAULT_TIMEOUT \
         PIP_CONFIG_FILE HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy SSL_CERT_FILE; do
  if [ -n "${!v:-}" ]; then BASE_ENV+=("$v=${!v}"); fi
done

# ---------------------------------------------------------------- 3. venv + install
T0=$(now)
"$PY" -m venv "$VENV" || fail "python -m venv"
T1=$(now)
say "fresh virtualenv: $(elapsed "$T0" "$T1") s ($("$VENV/bin/python" --version))"
while IFS= read -r line; do
  say "RUN $line"
  if ! (cd "$APP_DIR" && "${BASE_ENV[@]}" bash -c "python -m $line") >>"$WORK/pip.log" 2>&1; then
    tail -n 60 "$WORK/pip.log" >&2
    fail "pip install failed: $line"
  fi
done < <("$PY" -c '
import json, shlex, sys
for argv in json.load(open(sys.argv[1]))["pip"]:
    print(shlex.join(argv))
' "$WORK/plan.json")
T2=$(now)
say "pip install into the fresh virtualenv: $(elapsed "$T1" "$T2") s"

# ---------------------------------------------------------------- 4. start + probe
PORT="$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
CMD=()
while IFS= read -r arg; do CMD+=("$arg"); done < <("$PY" -c '
import json, sys
port = sys.argv[2]
for a in json.load(open(sys.argv[1]))["cmd"]:
    if a.startswith("--server.port="):
        a = "--server.port=" + port
    elif a.startswith("--server.address="):
        a = "--server.address=127.0.0.1"
    print(a)
' "$WORK/plan.json" "$PORT")
if [[ " ${CMD[*]} " != *" --server.port="* ]]; then CMD+=("--server.port=$PORT"); fi
if [[ " ${CMD[*]} " != *" --server.address="* ]]; then CMD+=("--server.address=127.0.0.1"); fi
say "start: ${CMD[*]}  (in a copy of the build context, port $PORT)"
T3=$(now)
(cd "$APP_DIR" && exec "${BASE_ENV[@]}" "${CMD[@]}") >"$WORK/server.log" 2>&1 &
SERVER_PID=$!

"$PY" - "$PORT" "$TIMEOUT" "$SERVER_PID" <<'PYEOF' || { cat "$WORK/server.log" >&2; fail "no healthy server"; }
import os, sys, time, urllib.request
port, timeout, pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + timeout
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit("the server exited")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            if r.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.25)
sys.exit(f"/_stcore/health did not answer 200 within {timeout:g} s")
PYEOF
T4=$(now)
say "server healthy after $(elapsed "$T3" "$T4") s"

# ---------------------------------------------------------------- 5. the image's HEALTHCHECK
HC=()
while IFS= read -r arg; do HC+=("$arg"); done < <("$PY" -c '
import json, sys
port = sys.argv[2]
for a in json.load(open(sys.argv[1]))["healthcheck"]:
    print(a.replace("8501", port))
' "$WORK/plan.json" "$PORT")
(cd "$APP_DIR" && "${BASE_ENV[@]}" "${HC[@]}") || fail "the Dockerfile's HEALTHCHECK command failed"
say "HEALTHCHECK command: ok"

# ---------------------------------------------------------------- 6. allowedHosts in force
"$VENV/bin/python" - "$PORT" <<'PYEOF' || fail "server.allowedHosts is not enforced"
import base64, os, socket, sys
port = int(sys.argv[1])

def handshake(host: str) -> str:
    key = base64.b64encode(os.urandom(16)).decode()
    req = (f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
           f"Origin: http://{host}:{port}\r\nSec-WebSocket-Protocol: streamlit\r\n\r\n")
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(req.encode())
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(1024)
            if not chunk:
                break
            data += chunk
    return data.split(b"\r\n", 1)[0].decode(errors="replace")

ok, evil = handshake("localhost"), handshake("evil.example.net")
print(f"[check_docker] WebSocket Host localhost -> {ok!r}; Host evil.example.net -> {evil!r}")
sys.exit(0 if " 101 " in ok + " " and " 101 " not in evil + " " else 1)
PYEOF

# ---------------------------------------------------------------- 7. app.py with the venv only
(cd "$APP_DIR" && "${BASE_ENV[@]}" python - <<'PYEOF') || fail "app.py does not run with only the pinned requirements"
import sys
from streamlit.testing.v1 import AppTest

at = AppTest.from_file("app.py", default_timeout=120).run()
if at.exception:
    print("[check_docker] app.py raised:", *(e.value for e in at.exception), sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"[check_docker] app.py ran with the virtualenv's packages only ({len(at.main)} elements)")
PYEOF

# ---------------------------------------------------------------- 8. stop
kill "$SERVER_PID"
for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$SERVER_PID" 2>/dev/null; then fail "the server did not stop on SIGTERM"; fi
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
if grep -q "Traceback" "$WORK/server.log"; then cat "$WORK/server.log" >&2; fail "the server logged a traceback"; fi
say "OK: venv $(elapsed "$T0" "$T1") s, pip install $(elapsed "$T1" "$T2") s, start to healthy $(elapsed "$T3" "$T4") s"
