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

# The README's counted claims (and the kvd article's, where the README's kvd
# tables went), each compared with what it counts, so that none can drift: a
# claim whose sentence is gone or reworded fails too (change this check with
# it).
claims_text() { cat README.md Sources/MainLoop/MainLoop.docc/Kvd.md; }
claims=0
claim() { # what, the README's figure, the figure counted here
  if [ -z "$2" ] || [ "$2" != "$3" ]; then
    echo "README: $1 is '${2:-(claim not found)}', counted: $3"; status=1
  else claims=$((claims + 1)); fi
}
# One test per @Test function, as swift test counts them (a parameterized
# test is one test with several cases).
claim "the number of tests swift test runs" \
  "$(sed -n 's/^| `swift test` | \([0-9][0-9]*\) tests;.*/\1/p' README.md)" \
  "$(grep -rhE '^[[:space:]]*@Test\b' Tests | wc -l)"
claim "the seconds each fuzzer runs in make test" \
  "$(sed -n 's/^| `Fuzz\/fuzz.sh` | .*, \([0-9][0-9]*\) s each |$/\1/p' README.md)" \
  "$(sed -n 's/^.*FUZZ_SECONDS=\([0-9][0-9]*\) .*fuzz.sh$/\1/p' Makefile)"
# kvd-allocations --check fails over each row's limit: the README's figure
# must be the largest limit of the requests it names.
allocation_limit() { sed -n "s/^ *(\"$1\", .*, \([0-9][0-9]*\)),\$/\1/p" Sources/kvd-allocations/main.swift; }
largest=0
for request in GET INCR SET "SET 1KiB" "MSET 10 keys"; do
  limit=$(allocation_limit "$request")
  if [ -z "$limit" ]; then largest="(no row for $request)"; break; fi
  [ "$limit" -gt "$largest" ] && largest=$limit
done
claim "the heap allocations per GET, INCR, SET, 1 KiB SET and MSET that kvd-allocations --check allows" \
  "$(claims_text | sed -n 's/^kvd makes \([0-9][0-9]*\) heap allocations per GET, INCR, SET, 1 KiB SET and MSET request$/\1/p')" \
  "$largest"
# Redis's own suite: the pass counts of the last recorded run (make compat:
# bench/compat-latest.md), the totals of the kvd article's table, and the
# failures it explains.
compat_count() { sed -n "s/^| $1 | \([0-9][0-9]*\) | .*/\1/p" bench/compat-latest.md; }
redis_passed=$(compat_count "redis-server 7.0.15")
kvd_passed=$(compat_count kvd)
claim "redis-server's pass count in Redis's suite" \
  "$(claims_text | sed -n 's/^| redis-server 7.0.15 | .* | \([0-9][0-9]*\) |$/\1/p')" "$redis_passed"
claim "kvd's pass count in Redis's suite" \
  "$(claims_text | sed -n 's/^| kvd | .* | \([0-9][0-9]*\) ([0-9.]*%) |$/\1/p')" "$kvd_passed"
claim "the number of Redis tests kvd does not pass" \
  "$(claims_text | sed -n 's/^Of the \([0-9][0-9]*\) tests kvd does not pass.*/\1/p')" \
  "$((redis_passed - kvd_passed))"
[ "$status" = 0 ] && echo "README claims: $claims counted figures match what they count"
exit $status
