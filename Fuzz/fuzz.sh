#!/usr/bin/env bash
# Builds the libFuzzer targets (swiftc -sanitize=fuzzer,address) and runs each
# for FUZZ_SECONDS (default 300; CI uses 30). Corpora live in .build/fuzz/.
# A crash leaves its input in .build/fuzz/crash-* and fails the run: turn it
# into a regression test before fixing it.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-300}
OUT=.build/fuzz
mkdir -p "$OUT"
build() { local name=$1; shift
  swiftc -swift-version 6 -O -sanitize=fuzzer,address -parse-as-library -module-name "${name//-/_}" "$@" -o "$OUT/$name" 2>&1 \
    | grep -v "Cannot export local symbol" || true
  [ -x "$OUT/$name" ] || { echo "fuzz: building $name failed"; exit 1; }
}
build resp-parser Fuzz/RESPParserFuzz.swift Sources/KVServer/Protocol/RESPParser.swift Sources/KVServer/Protocol/RequestBatch.swift Sources/KVServer/Commands/Glob.swift
build invocation Fuzz/InvocationFuzz.swift Sources/Invocations/*.swift
status=0
for target in resp-parser invocation; do
  mkdir -p "$OUT/corpus-$target"
  echo "fuzz: $target for ${SECONDS_EACH}s"
  # SWIFT_BACKTRACE off: Swift's crash handler reads freed memory while it
  # reports, and ASan then reports that instead of the real failure.
  if ! SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "$OUT/$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$OUT/crash-$target-" "$OUT/corpus-$target" > "$OUT/$target.log" 2>&1; then
    echo "fuzz: $target FAILED; input saved as $OUT/crash-$target-*"; tail -30 "$OUT/$target.log"; status=1
  fi
  grep -E "^Done [0-9]+ runs" "$OUT/$target.log" | sed "s/^/fuzz: $target: /" || true
done
exit $status
