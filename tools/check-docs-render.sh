#!/usr/bin/env bash
# The DocC site as a browser shows it: the served root, /MainLoop/, the
# landing pages, every article and the EventLoop page, each loaded in
# headless Chromium (Debian's `chromium`) from a local server. A page fails
# when it renders blank (its title is not on it), shows DocC's "page can't
# be found", or logs a script error. Needs `make docs` first (.build/docs).
set -euo pipefail
cd "$(dirname "$0")/.."
site=.build/docs
[ -f "$site/MainLoop/index.html" ] || { echo "check-docs-render: run make docs first"; exit 1; }
command -v chromium >/dev/null || { echo "check-docs-render: needs chromium (apt-get install chromium)"; exit 1; }
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
# A server on a free port; it writes the port once it listens.
# It logs every request that fails (a picture, a script, a page's data) as
# "STATUS PATH" to $work/failed.
python3 - "$site" "$work/port" "$work/failed" > /dev/null 2>&1 <<'PY' &
import functools, http.server, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    def log_request(self, code="-", size="-"):
        # Optional: DocC asks for theme-settings.json on every page, the
        # browser for /favicon.ico at the root (a redirect, not DocC's).
        optional = self.path.endswith("/theme-settings.json") or self.path == "/favicon.ico"
        if str(code) >= "400" and not optional:
            with open(sys.argv[3], "a") as failed:
                failed.write(f"{code} {self.path}\n")
handler = functools.partial(Handler, directory=sys.argv[1])
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
open(sys.argv[2], "w").write(str(httpd.server_address[1]))
httpd.serve_forever()
PY
server=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
base="http://127.0.0.1:$(cat "$work/port")"
# URL path, then the title the page must show.
pages=("/|MainLoop" "/MainLoop/|MainLoop" "/MainLoop/documentation/mainloop/|MainLoop"
  "/MainLoop/documentation/mainloop/eventloop|EventLoop")
for article in Sources/MainLoop/MainLoop.docc/*.md; do
  name=$(basename "$article" .md)
  [ "$name" = MainLoop ] && continue
  pages+=("/MainLoop/documentation/mainloop/$(echo "$name" | tr A-Z a-z)|$(sed -n '1s/^# //p' "$article")")
done
status=0
for page in "${pages[@]}"; do
  path=${page%%|*} title=${page#*|}
  : > "$work/failed"
  out=$work/page.html log=$work/page.log
  if ! timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
      --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
      --virtual-time-budget=5000 --dump-dom "$base$path" > "$out" 2> "$log"; then
    echo "check-docs-render: $path: chromium failed"; tail -5 "$log"; status=1; continue
  fi
  if grep -q "can.t be found" "$out"; then
    echo "check-docs-render: $path: DocC's \"page can't be found\""; status=1
  elif ! python3 - "$out" "$title" <<'PY'; then
import html, re, sys
dom, title = open(sys.argv[1]).read(), sys.argv[2]
h1 = re.search(r'<h1[^>]*class="title"[^>]*>(.*?)</h1>', dom, re.S)
text = html.unescape(re.sub(r"<[^>]+>", "", h1.group(1))).strip() if h1 else ""
sys.exit(0 if text == title else 1)
PY
    echo "check-docs-render: $path: blank, or not the page titled \"$title\""; status=1
  elif grep -E "CONSOLE.*(Uncaught|Error)" "$log"; then
    echo "check-docs-render: $path: a script error (above)"; status=1
  elif [ -s "$work/failed" ]; then
    echo "check-docs-render: $path: requests that failed:"; cat "$work/failed"; status=1
  fi
done
[ "$status" = 0 ] && echo "docs render: all ${#pages[@]} pages in headless Chromium"
exit $status
