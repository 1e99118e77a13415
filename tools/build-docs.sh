#!/usr/bin/env bash
# Builds the DocC site offline into .build/docs/MainLoop: symbol graphs
# emitted by `swift build` (in a scratch directory of their own, so the
# normal build is not invalidated), then the toolchain's `docc convert`.
# MainLoop's graph holds the Invocations module's symbols too (MainLoop
# re-exports it), so they are documented once, in this site. Fails on any
# warning, and on any public symbol that no topic group curates.
set -euo pipefail
cd "$(dirname "$0")/.."
# The graphs live in the scratch directory: an incremental build that
# recompiles nothing leaves the last (current) graphs in place.
graphs=.build/docs-build/symbol-graphs
rm -rf .build/docs "$graphs/MainLoop" "$graphs/Invocations"
mkdir -p "$graphs/all" "$graphs/MainLoop" .build/docs
swift build --scratch-path .build/docs-build --target MainLoop \
  -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs/all" \
  -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public > .build/docs-build.log 2>&1 \
  || { cat .build/docs-build.log; exit 1; }
cp "$graphs/all/MainLoop.symbols.json" "$graphs/MainLoop/"
log=.build/docs/MainLoop.log
docc convert Sources/MainLoop/MainLoop.docc \
  --additional-symbol-graph-dir "$graphs/MainLoop" \
  --output-path .build/docs/MainLoop \
  --transform-for-static-hosting --hosting-base-path MainLoop \
  --fallback-display-name MainLoop --fallback-bundle-identifier org.mainloop.MainLoop \
  > "$log" 2>&1 || { cat "$log"; exit 1; }
if grep -E "(warning|error):" "$log"; then
  echo "docs: the warnings above"; exit 1
fi
# Every public symbol in a named topic group: DocC puts what no page
# curates into groups it makes itself ("Instance Methods", "Structures").
# The only ones allowed are the standard library's protocol implementations
# ("Default Implementations": ==, SetAlgebra's methods), which DocC does not
# let a catalog curate.
python3 - .build/docs/MainLoop/data/documentation <<'PY'
import glob, json, os, sys
root, stray = sys.argv[1], []
for path in sorted(glob.glob(f"{root}/**/*.json", recursive=True)):
    if "-implementations" in path:
        continue
    page = json.load(open(path))
    for section in page.get("topicSections", []):
        if section.get("generated") and section.get("title") != "Default Implementations":
            where = os.path.relpath(path, root)[:-5]
            stray.append(f"{where}: {section.get('title')} ({len(section['identifiers'])})")
if stray:
    print("docs: public symbols in DocC's default groups; curate them in a topic group:")
    print("\n".join(stray))
    sys.exit(1)
PY
# DocC's own page at the hosting base path (and the served root) is its
# "page can't be found": send both to the landing page instead.
redirect() {
  printf '<!doctype html><meta charset="utf-8"><title>MainLoop</title>\n<meta http-equiv="refresh" content="0; url=%s">\n<a href="%s">MainLoop</a>\n' \
    "$2" "$2" > "$1"
}
redirect .build/docs/index.html MainLoop/documentation/mainloop/
redirect .build/docs/MainLoop/index.html documentation/mainloop/
echo "docs: built with no warnings, every public symbol curated: .build/docs/MainLoop/documentation/mainloop/index.html"
