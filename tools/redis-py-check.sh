#!/usr/bin/env bash
# redis-py 8 (from .build/venv, see `make py-deps`) against a kvd of its own:
# tools/redis-py-check.py's scenarios, with redis-py's default settings.
# Usage: tools/redis-py-check.sh [path/to/kvd]
set -euo pipefail
KVD=${1:-.build/debug/kvd}
PYTHON=${PYTHON:-.build/venv/bin/python}
LOG=$(mktemp)
"$KVD" --port 0 --io-threads 2 --save "" --dir "${TMPDIR:-/tmp}" --dbfilename "kvd-py-$$.rdb" >"$LOG" 2>&1 &
PID=$!
disown "$PID"
trap 'kill -9 $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 100); do grep -q "serving on" "$LOG" && break; sleep 0.05; done
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$LOG" | head -1)
[ -n "$PORT" ] || { echo "kvd did not start:"; cat "$LOG"; exit 1; }
timeout 120 "$PYTHON" tools/redis-py-check.py "$PORT"
kill -0 "$PID" 2>/dev/null || { echo "FAIL: kvd exited during the redis-py scenarios:"; cat "$LOG"; exit 1; }
