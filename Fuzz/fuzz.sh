#!/usr/bin/env bash
# Builds the libFuzzer targets (swiftc -sanitize=fuzzer,address) and runs each
# for FUZZ_SECONDS (default 300; CI uses 30). Each run starts from the seeds
# committed in Fuzz/corpus/<target>/ (read only) and what earlier runs found
# in .build/fuzz/corpus-<target>/ (where new inputs are written).
# A crash leaves its input in .build/fuzz/crash-* and fails the run: turn it
# into a regression test before fixing it.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-300}
OUT=.build/fuzz
mkdir -p "$OUT"
# A failed build fails the run: the old binary is removed first, so a stale
# one is never fuzzed, and swiftc's own status is checked (grep only filters
# a linker note that every build prints).
build() { local name=$1; shift
  rm -f "$OUT/$name"
  local status=0
  swiftc -swift-version 6 -O -sanitize=fuzzer,address -parse-as-library -module-name "${name//-/_}" "$@" -o "$OUT/$name" \
    > "$OUT/$name.build.log" 2>&1 || status=$?
  grep -v "Cannot export local symbol" "$OUT/$name.build.log" || true
  if [ "$status" != 0 ] || [ ! -x "$OUT/$name" ]; then echo "fuzz: building $name failed (swiftc exit $status)"; exit 1; fi
}
build resp-parser Fuzz/RESPParserFuzz.swift Sources/KVServer/Protocol/RESPParser.swift Sources/KVServer/Protocol/RequestBatch.swift Sources/KVServer/Sessions/TransactionShadow.swift Sources/KVServer/Commands/Glob.swift
build invocation -package-name MainLoop Fuzz/InvocationFuzz.swift Sources/Invocations/*.swift
status=0
for target in resp-parser invocation; do
  mkdir -p "$OUT/corpus-$target"
  [ -n "$(ls Fuzz/corpus/$target)" ] || { echo "fuzz: no seed corpus in Fuzz/corpus/$target"; exit 1; }
  echo "fuzz: $target for ${SECONDS_EACH}s"
  # SWIFT_BACKTRACE off: Swift's crash handler reads freed memory while it
  # reports, and ASan then reports that instead of the real failure.
  if ! SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "$OUT/$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$OUT/crash-$target-" "$OUT/corpus-$target" "Fuzz/corpus/$target" > "$OUT/$target.log" 2>&1; then
    echo "fuzz: $target FAILED; input saved as $OUT/crash-$target-*"; tail -30 "$OUT/$target.log"; status=1
  fi
  grep -E "^Done [0-9]+ runs" "$OUT/$target.log" | sed "s/^/fuzz: $target: /" || true
done
exit $status
