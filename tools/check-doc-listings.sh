#!/usr/bin/env bash
# Every Swift listing in the DocC articles must compile (Swift 6 mode,
# warning-free) against the package's modules:
# - a listing marked `<!-- compiled: PATH -->` must equal PATH, a file the
#   package builds (as the README's tour);
# - every other listing is type-checked on its own, as a main.swift.
# Needs `swift build` first (it reads .build/debug/Modules).
set -euo pipefail
cd "$(dirname "$0")/.."
modules=.build/debug/Modules
[ -d "$modules" ] || { echo "check-doc-listings: run swift build first"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0 checked=0
for article in Sources/*/*.docc/*.md; do
  python3 - "$article" "$work" <<'PY'
import os, re, sys
article, work = sys.argv[1], sys.argv[2]
text = open(article).read()
base = os.path.basename(article)[:-3]
for n, m in enumerate(re.finditer(r"(<!-- compiled: (\S+) -->\n)?```swift\n(.*?)```", text, re.S)):
    marker, path, body = m.group(1), m.group(2), m.group(3)
    name = f"{work}/{base}-{n}"
    if marker:
        open(name + ".compiled", "w").write(path + "\n" + body)
    else:
        os.makedirs(name, exist_ok=True)
        open(name + "/main.swift", "w").write(body)
PY
done
for listing in "$work"/*; do
  checked=$((checked + 1))
  if [ -f "$listing" ]; then
    path=$(head -1 "$listing")
    if ! diff -u <(tail -n +2 "$listing") "$path"; then
      echo "check-doc-listings: $(basename "$listing") differs from $path"; status=1
    fi
  elif ! out=$(swiftc -typecheck -swift-version 6 -I "$modules" \
      -Xcc -fmodule-map-file=Sources/CLibevent/module.modulemap "$listing/main.swift" 2>&1) || [ -n "$out" ]; then
    echo "check-doc-listings: $(basename "$listing") does not compile cleanly:"; echo "$out"; status=1
  fi
done
[ "$status" = 0 ] && echo "doc listings: all $checked compile"
exit $status
