#!/usr/bin/env bash
# Every Swift listing in the DocC articles is checked against the package's
# modules (Swift 6 mode, warning-free), and no line of any listing is wider
# than the rendered page shows without scrolling (76 characters).
# - A listing is a complete program unless the line before it says
#   `<!-- fragment -->`: it is built and linked as a main.swift, run (at
#   most 30 s), must exit 0, and what it prints on standard output must be
#   what the article states: the ```text block that follows it (before any
#   other listing), where `…` stands for any run of characters within a
#   line. A program with no such block must print nothing, and the line
#   before it says so: `<!-- prints nothing -->`.
# - A fragment is compiled (not only type-checked: `sending` is checked
#   after type checking), never run.
# - A listing marked `<!-- compiled: PATH -->` must also equal PATH, a file
#   the package builds (as the README's tour).
# - A listing marked `<!-- manifest -->` is a package user's Package.swift
#   (Getting started): it is built, as written, with the article's next
#   program as its Sources/App/main.swift, against a copy of this package in
#   a directory named MainLoop beside it, and run (about 15 s).
# Needs `swift build` first (it reads .build/debug/Modules and the objects).
set -euo pipefail
cd "$(dirname "$0")/.."
modules=.build/debug/Modules
[ -d "$modules" ] || { echo "check-doc-listings: run swift build first"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0 checked=0 ran=0
python3 - "$work" Sources/*/*.docc/*.md <<'PY' || status=1
import os, re, sys
work, articles = sys.argv[1], sys.argv[2:]
width, status = 76, 0
fence = re.compile(r"^((?:<!-- [^\n]* -->\n)*)```(\w*)\n(.*?)^```$", re.S | re.M)
for article in articles:
    text = open(article).read()
    base = os.path.basename(article)[:-3]
    blocks = list(fence.finditer(text))
    for n, m in enumerate(blocks):
        markers, language, body = m.group(1), m.group(2), m.group(3)
        if language != "swift":
            continue
        line_no = text.count("\n", 0, m.start(3)) + 1
        for i, line in enumerate(body.splitlines()):
            if len(line) > width:
                print(f"check-doc-listings: {article}:{line_no + i}: {len(line)} characters, "
                      f"wider than the page's {width}: {line.strip()[:40]}…")
                status = 1
        if "<!-- manifest -->" in markers:
            os.makedirs(f"{work}/app/Sources/App", exist_ok=True)
            open(f"{work}/app/Package.swift", "w").write(body)
            open(f"{work}/app/where", "w").write(f"{article}:{line_no}\n")
            continue
        name = f"{work}/{base}-{n}"
        os.makedirs(name)
        open(name + "/main.swift", "w").write(body)
        open(name + "/where", "w").write(f"{article}:{line_no}\n")
        compiled = re.search(r"<!-- compiled: (\S+) -->", markers)
        if compiled:
            open(name + "/compiled", "w").write(compiled.group(1))
        if "<!-- fragment -->" in markers:
            open(name + "/fragment", "w").write("")
            continue
        app = f"{work}/app"
        if os.path.exists(app + "/Package.swift") and not os.path.exists(app + "/program"):
            os.symlink(name, app + "/program")  # the manifest's program
        following = blocks[n + 1] if n + 1 < len(blocks) else None
        if following and following.group(2) == "text":
            open(name + "/expected", "w").write(following.group(3))
        elif "<!-- prints nothing -->" in markers:
            open(name + "/expected", "w").write("")
        else:
            print(f"check-doc-listings: {article}:{line_no}: a program with no stated output: "
                  "follow it with a ```text block of what it prints, or mark it "
                  "<!-- prints nothing --> (and say why), or <!-- fragment -->")
            status = 1
sys.exit(status)
PY
# What a program printed, against what its article states (`…`: any run).
matches() {
  python3 - "$1" "$2" <<'PY'
import re, sys
expected = open(sys.argv[1]).read().splitlines()
actual = open(sys.argv[2]).read().splitlines()
ok = len(expected) == len(actual) and all(
    re.fullmatch(".*".join(map(re.escape, e.split("…"))), a) for e, a in zip(expected, actual))
sys.exit(0 if ok else 1)
PY
}
# The objects of the sources that exist now (a build directory can keep
# objects of files since deleted, which would not link).
objects=()
for target in MainLoop Invocations; do
  while IFS= read -r source; do
    objects+=(".build/debug/$target.build/$(basename "$source").o")
  done < <(find "Sources/$target" -name '*.swift')
done
flags=(-swift-version 6 -module-name Listing -I "$modules" -Xcc -fmodule-map-file=Sources/CLibevent/module.modulemap)
for listing in "$work"/*/; do
  listing=${listing%/}
  [ "$listing" = "$work/app" ] && continue
  checked=$((checked + 1))
  where=$(cat "$listing/where")
  if [ -f "$listing/compiled" ] && ! diff -u "$listing/main.swift" "$(cat "$listing/compiled")"; then
    echo "check-doc-listings: $where differs from $(cat "$listing/compiled")"; status=1
  fi
  if [ -f "$listing/fragment" ]; then
    out=$(swiftc "${flags[@]}" -c "$listing/main.swift" -o "$listing/main.o" 2>&1) || out="$out (failed)"
  else
    out=$(swiftc "${flags[@]}" "$listing/main.swift" "${objects[@]}" -o "$listing/program" 2>&1) \
      || out="$out (failed)"
  fi
  if [ -n "$out" ]; then
    echo "check-doc-listings: $where does not compile cleanly:"; echo "$out"; status=1; continue
  fi
  [ -f "$listing/fragment" ] || [ ! -f "$listing/expected" ] && continue
  ran=$((ran + 1))
  code=0
  (cd "$listing" && timeout -k 5 30 ./program < /dev/null > stdout 2> stderr) || code=$?
  if [ "$code" != 0 ]; then
    echo "check-doc-listings: $where exited with status $code$([ "$code" = 124 ] && echo ' (timed out)'):"
    cat "$listing/stdout" "$listing/stderr"; status=1
  elif ! matches "$listing/expected" "$listing/stdout"; then
    echo "check-doc-listings: $where printed what its article does not say:"
    diff -u --label "stated" --label "printed" "$listing/expected" "$listing/stdout" || true
    status=1
  fi
done
# The package user's manifest, built as written with its program.
if [ -f "$work/app/Package.swift" ]; then
  app=$work/app
  mkdir -p "$work/MainLoop"
  git ls-files -z Package.swift Sources Tests | tar --null -T - -c | tar -x -C "$work/MainLoop"
  cp "$app/program/main.swift" "$app/Sources/App/main.swift"
  if ! (cd "$app" && timeout -k 5 300 swift build > build.log 2>&1); then
    echo "check-doc-listings: the manifest at $(cat "$app/where") does not build:"
    cat "$app/build.log"; status=1
  elif ! (cd "$app" && timeout -k 5 30 .build/debug/App < /dev/null > stdout) \
    || ! matches "$app/program/expected" "$app/stdout"; then
    echo "check-doc-listings: the manifest's program at $(cat "$app/where") does not print what it says"
    cat "$app/stdout"; status=1
  else
    echo "doc listings: the manifest at $(cat "$app/where") builds and its program runs"
  fi
fi
[ "$status" = 0 ] && echo "doc listings: all $checked compile; the $ran programs print what their articles say"
exit $status
