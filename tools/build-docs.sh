#!/usr/bin/env bash
# Builds the DocC sites offline into .build/docs/MainLoop and
# .build/docs/Invocations: symbol graphs emitted by `swift build` (in a
# scratch directory of their own, so the normal build is not invalidated),
# then the toolchain's `docc convert`. Fails on any warning.
set -euo pipefail
cd "$(dirname "$0")/.."
# The graphs live in the scratch directory: an incremental build that
# recompiles nothing leaves the last (current) graphs in place.
graphs=.build/docs-build/symbol-graphs
rm -rf .build/docs "$graphs/MainLoop" "$graphs/Invocations"
mkdir -p "$graphs/all" .build/docs
swift build --scratch-path .build/docs-build --target MainLoop \
  -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs/all" \
  -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public > .build/docs-build.log 2>&1 \
  || { cat .build/docs-build.log; exit 1; }
status=0
for module in MainLoop Invocations; do
  mkdir -p "$graphs/$module"
  cp "$graphs/all/$module.symbols.json" "$graphs/$module/"
  log=.build/docs/$module.log
  docc convert "Sources/$module/$module.docc" \
    --additional-symbol-graph-dir "$graphs/$module" \
    --output-path ".build/docs/$module" \
    --transform-for-static-hosting --hosting-base-path "$module" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.mainloop.$module" \
    > "$log" 2>&1 || { cat "$log"; status=1; continue; }
  if grep -E "(warning|error):" "$log"; then
    echo "docs: $module has the warnings above"; status=1
  else
    echo "docs: $module built with no warnings: .build/docs/$module/documentation/$(echo "$module" | tr A-Z a-z)/index.html"
  fi
done
# DocC's own page at the hosting base path (and the served root) is its
# "page can't be found": send both to the landing page instead.
redirect() {
  printf '<!doctype html><meta charset="utf-8"><title>%s</title>\n<meta http-equiv="refresh" content="0; url=%s">\n<a href="%s">%s</a>\n' \
    "$3" "$2" "$2" "$3" > "$1"
}
redirect .build/docs/index.html MainLoop/documentation/mainloop/ MainLoop
for module in MainLoop Invocations; do
  redirect ".build/docs/$module/index.html" "documentation/$(echo "$module" | tr A-Z a-z)/" "$module"
done
exit $status
