#!/usr/bin/env bash
# The README's Swift listings that are marked `<!-- compiled: PATH -->` must
# equal PATH, a file the package builds: so every such listing compiles in
# Swift 6 mode, warning-free, with the rest of the build.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
while IFS= read -r path; do
  listing=$(awk -v marker="<!-- compiled: $path -->" '
    $0 == marker { armed = 1; next }
    armed && /^```swift$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }' README.md)
  if ! diff -u <(printf '%s\n' "$listing") "$path" >/dev/null; then
    echo "README listing differs from $path:"; diff -u <(printf '%s\n' "$listing") "$path" || true
    status=1
  fi
done < <(sed -n 's/^<!-- compiled: \(.*\) -->$/\1/p' README.md)
[ "$status" = 0 ] && echo "README listings: every marked listing equals its compiled file"
exit $status
