#!/usr/bin/env bash
# The isolation claims, held to the compiler (Swift 6 language mode, a real
# build to an object file: region isolation is checked in SIL, after type
# checking, so `-typecheck` would let half of them through):
# - every program in Tests/Isolation/MustNotCompile must fail to build, with
#   an error on each line marked `// expected-error: TEXT` containing TEXT
#   (a marker alone on its line marks the next line), and no error anywhere
#   else (so it fails for the leak it is named after);
# - every program in Tests/Isolation/MustCompile must build with no error
#   and no warning.
# Needs `swift build` first (it reads .build/debug/Modules).
set -euo pipefail
cd "$(dirname "$0")/.."
modules=.build/debug/Modules
[ -d "$modules" ] || { echo "check-isolation: run swift build first"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build() {  # file, output log; exit status of swiftc
  local name
  name=$(basename "$1" .swift)
  swiftc -swift-version 6 -c -I "$modules" -Xcc -fmodule-map-file=Sources/CLibevent/module.modulemap \
    -module-name "$name" "$1" -o "$work/$name.o" >"$2" 2>&1
}

check_refused() {  # file
  local file=$1 log="$work/$(basename "$1").log" status=0
  build "$file" "$log" && { echo "check-isolation: $file COMPILED, but must not"; return 1; }
  mapfile -t markers < <(grep -n "// expected-error: " "$file" | cut -d: -f1)
  [ "${#markers[@]}" -gt 0 ] || { echo "check-isolation: $file marks no expected error"; return 1; }
  marked=()
  for marker in "${markers[@]}"; do
    line=$marker
    sed -n "${marker}p" "$file" | grep -qE '^\s*//' && line=$((marker + 1))
    marked+=("$line")
    text=$(sed -n "${marker}p" "$file" | sed 's/.*\/\/ expected-error: //')
    if ! grep -F "$file:$line:" "$log" | grep -F "error:" | grep -qF "$text"; then
      echo "check-isolation: $file:$line: expected an error containing '$text'; the compiler said:"
      cat "$log"; status=1
    fi
  done
  while IFS= read -r error; do
    line=$(echo "$error" | cut -d: -f2)
    if ! printf '%s\n' "${marked[@]}" | grep -qx "$line"; then
      echo "check-isolation: $file: an error on an unmarked line: $error"; status=1
    fi
  done < <(grep -E "^$file:[0-9]+:[0-9]+: error:" "$log" || true)
  return $status
}

check_accepted() {  # file
  local file=$1 log="$work/$(basename "$1").log"
  if ! build "$file" "$log" || grep -q "warning:" "$log"; then
    echo "check-isolation: $file must build cleanly:"; cat "$log"; return 1
  fi
}

status=0 refused=0 accepted=0
pids=()
for file in Tests/Isolation/MustNotCompile/*.swift; do
  (check_refused "$file") & pids+=($!)
  refused=$((refused + 1))
  # Two compilers at a time: the machines have two cores.
  if [ "${#pids[@]}" -ge 2 ]; then wait "${pids[0]}" || status=1; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for file in Tests/Isolation/MustCompile/*.swift; do
  check_accepted "$file" || status=1
  accepted=$((accepted + 1))
done
[ "$status" = 0 ] && echo "isolation: all $refused leaks refused by the compiler, $accepted must-compile programs build cleanly"
exit $status
