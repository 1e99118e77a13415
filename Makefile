# The two commands of the README's quick start: `make run` and `make test`.
# Both install what the package needs from Debian/Ubuntu when it is missing.

SWIFT ?= swift
APT_PACKAGES := libevent-dev liblua5.1-0-dev lua-cjson-dev lua-bitop-dev pkg-config redis-tools redis-server tcl nutcracker valgrind chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Every step of `make test` is bounded: a hang becomes a failure naming the
# step (timeout exits 124; KILL follows TERM after 10 s).
BOUND = timeout -k 10

.PHONY: deps run demo test test-fast lint docs docs-render hostile test-tsan test-asan test-kvd test-leaks fuzz fuzz-ci stress-long liveness-proof bench bench-kvd compat scale-out py-deps

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

## The main job: kvd, a Redis-protocol daemon (keyspace on the main thread's
## loop, I/O on worker loops) on 127.0.0.1:6380. Ctrl-C stops it gracefully.
run: deps
	$(SWIFT) run -c release kvd $(ARGS)

## A smaller example: worker threads hand work to EventLoop.main.
demo: deps
	$(SWIFT) run -c release mainloop-demo

## The whole proof, as CI runs it: every test; the proof that the liveness
## tests fail on a build that drops releases; kvd with the real redis-cli and
## redis-benchmark; a stress run under valgrind's leak check; every test again
## under the thread and the address sanitizer; each fuzzer for 30 seconds
## from its committed seed corpus; the DocC site rendered in headless Chromium.
test: deps test-fast liveness-proof docs docs-render test-kvd test-leaks test-tsan test-asan fuzz-ci

# The build must be warning-free (a fresh clone compiles every file, so CI sees them all).
test-fast:
	@mkdir -p .build
	@$(BOUND) 900 $(SWIFT) build --build-tests > .build/build.log 2>&1 || { cat .build/build.log; echo "test-fast: the build failed or took over 15 minutes"; exit 1; }
	@if grep "warning:" .build/build.log; then echo "the build has warnings (see above)"; exit 1; fi
	bash tools/check-readme.sh
	$(BOUND) 600 bash tools/check-doc-listings.sh
	$(BOUND) 600 bash tools/check-isolation.sh
	$(MAKE) --no-print-directory lint
	$(BOUND) 600 $(SWIFT) test || { echo "test-fast: swift test failed or took over 10 minutes"; exit 1; }

## The DocC site, offline, into .build/docs/MainLoop/: symbol graphs from
## swift build, then the toolchain's docc. Any warning fails, and so does a
## public symbol that no topic group curates.
docs:
	$(BOUND) 900 bash tools/build-docs.sh

# The built site in headless Chromium: the root, the landing pages, every
# article and the EventLoop page render, with no script error (about 20 s).
docs-render:
	$(BOUND) 300 bash tools/check-docs-render.sh

# The toolchain's swift-format, with the house configuration (.swift-format),
# and the layout rule: only PerformSelector/ joins Invocations to the loop.
lint:
	$(BOUND) 300 $(SWIFT) format lint --strict --recursive Package.swift Sources Tests Fuzz
	@stray=$$(grep -rl "import Invocations" Sources/MainLoop | grep -v "^Sources/MainLoop/PerformSelector/" || true); \
	if [ -n "$$stray" ]; then echo "lint: import Invocations outside Sources/MainLoop/PerformSelector/: $$stray"; exit 1; fi

# kvd with software nobody here wrote: redis-cli and redis-benchmark (the
# smoke), redis-py 8 with its defaults (RESP3), redis-cli's help, --stat and
# --memkeys side by side with redis-server, dump.rdb moved between kvd and
# redis-server 7.0.15 both ways (tools/rdb-interop.py), HyperLogLogs and GEO
# searches byte for byte with redis-server's (tools/hll-differential.py,
# tools/geo-differential.py), the change count (rdb_changes_since_last_save,
# what save points compare) after every command as redis-server's
# (tools/changes-differential.py), the keyspace notifications each command
# publishes, as redis-server's (tools/notifications-differential.py),
# hashes through their listpack and
# hashtable forms, DUMP and RESTORE both ways (tools/hash-differential.py),
# INFO's used_memory against what was stored and freed
# (tools/used-memory-check.py), maxmemory's eight policies as Redis's
# unit/maxmemory checks them, side by side with redis-server
# (tools/eviction-check.py),
# the append-only
# file moved both ways too (tools/aof-interop.py), kill -9 under a write load with the AOF
# on (tools/aof-kill.py: 0 acknowledged writes lost), Redis 7.0.15's own suite
# against kvd and redis-server (make compat, on the debug build), and
# nutcracker sharding over three kvd processes. Then the allocation goals,
# on the release build (what users run): kvd's, 0 heap allocations per GET,
# INCR, PEXPIRE, SET (with or without PX, 1 KiB values too) and MSET
# request in steady state, as the README says; and MainLoop's per post
# (0 for a closure or LoopBound post that captures nothing, 1 for a
# capturing closure or an invocation posted, at most 1 for an invocation
# posted and run: its record, mostly refilled from the loop's pool).
test-kvd: py-deps
	$(BOUND) 600 $(SWIFT) build --product kvd
	$(BOUND) 300 bash tools/kvd-smoke.sh .build/debug/kvd
	$(BOUND) 300 bash tools/redis-py-check.sh .build/debug/kvd
	$(BOUND) 120 $(VENV)/bin/python tools/redis-cli-check.py .build/debug/kvd
	$(BOUND) 300 $(VENV)/bin/python tools/rdb-interop.py .build/debug/kvd
	$(BOUND) 300 $(VENV)/bin/python tools/hll-differential.py .build/debug/kvd
	$(BOUND) 300 $(VENV)/bin/python tools/geo-differential.py .build/debug/kvd
	$(BOUND) 300 $(VENV)/bin/python tools/changes-differential.py .build/debug/kvd
	$(BOUND) 300 $(VENV)/bin/python tools/notifications-differential.py .build/debug/kvd
	$(BOUND) 300 $(VENV)/bin/python tools/hash-differential.py .build/debug/kvd
	$(BOUND) 300 $(VENV)/bin/python tools/grammar-fuzz.py .build/debug/kvd
	$(BOUND) 120 $(VENV)/bin/python tools/used-memory-check.py .build/debug/kvd
	$(BOUND) 300 $(VENV)/bin/python tools/eviction-check.py .build/debug/kvd
	$(BOUND) 300 $(VENV)/bin/python tools/aof-interop.py .build/debug/kvd
	$(BOUND) 120 $(VENV)/bin/python tools/aof-kill.py .build/debug/kvd always 3
	$(BOUND) 120 $(VENV)/bin/python tools/aof-kill.py .build/debug/kvd everysec 3
	$(BOUND) 1500 bash tools/compat.sh .build/debug/kvd
	$(BOUND) 300 python3 tools/scale-out.py check .build/debug/kvd
	$(BOUND) 900 $(SWIFT) build -c release --product kvd-allocations
	$(BOUND) 120 .build/release/kvd-allocations --check
	$(BOUND) 900 $(SWIFT) build -c release --product kvd
	$(BOUND) 300 bash tools/kvd-server-allocations.sh .build/release/kvd --check
	$(BOUND) 900 $(SWIFT) build -c release --product mainloop-bench
	$(BOUND) 120 .build/release/mainloop-bench 1 allocations

# redis-py from PyPI, in a virtual environment of the build (not the system's).
VENV := .build/venv
py-deps:
	@[ -x $(VENV)/bin/python ] && $(VENV)/bin/python -c "import redis" 2>/dev/null || { \
		$(BOUND) 300 python3 -m venv $(VENV) && $(BOUND) 300 $(VENV)/bin/pip install -q "redis>=8,<9"; }

## Redis 7.0.15's own test suite (vendored in compat/) against kvd and a real
## redis-server in the same run: both pass counts, and kvd's failures.
compat: deps
	$(BOUND) 900 $(SWIFT) build -c release --product kvd
	COMPAT_OUT=bench/compat-latest.md $(BOUND) 1500 bash tools/compat.sh .build/release/kvd

## One kvd per core behind nutcracker, against one kvd, with redis-benchmark.
scale-out: deps
	$(BOUND) 900 $(SWIFT) build -c release --product kvd
	SCALE_OUT_OUT=bench/scale-out-latest.md $(BOUND) 900 python3 tools/scale-out.py bench .build/release/kvd

# Only definite leaks fail: "possibly lost" blocks are the Swift runtime's
# metadata caches, which hold interior pointers on purpose.
test-leaks:
	$(BOUND) 600 $(SWIFT) build --product mainloop-stress
	$(BOUND) 600 valgrind --quiet --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite --error-exitcode=3 .build/debug/mainloop-stress 500

# Swift's crash backtracer can spin forever in a sanitized process that traps
# on purpose (the exit tests' children, the trap scenarios), so it is off in
# the sanitizer runs; the traps are still checked.
# The two test targets run one after the other: kvd's tests block the
# cooperative pool's threads (two on two cores) for seconds at a time, which
# under a sanitizer starved MainLoop's async tests past their bounds.
test-tsan:
	MAINLOOP_SANITIZED=1 SWIFT_BACKTRACE=enable=no $(BOUND) 1200 $(SWIFT) test --sanitize=thread --filter MainLoopTests
	MAINLOOP_SANITIZED=1 SWIFT_BACKTRACE=enable=no $(BOUND) 1200 $(SWIFT) test --sanitize=thread --filter KVServerTests

test-asan:
	MAINLOOP_SANITIZED=1 SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 $(BOUND) 1200 $(SWIFT) test --sanitize=address --filter MainLoopTests
	MAINLOOP_SANITIZED=1 SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 $(BOUND) 1200 $(SWIFT) test --sanitize=address --filter KVServerTests

## libFuzzer on the RESP parser and the invocation checker, 5 minutes each (FUZZ_SECONDS=...).
fuzz:
	bash Fuzz/fuzz.sh

fuzz-ci:
	FUZZ_SECONDS=30 $(BOUND) 600 bash Fuzz/fuzz.sh

## The stress tests at 20x their CI size (minutes).
stress-long:
	STRESS=long $(SWIFT) test --filter StressTests

## Proof that the liveness tests fail, not hang, when a release is broken:
## builds MainLoop with every release of a blocked caller dropped
## (Sources/MainLoop/FaultInjection.swift) in a build directory of its own
## (the test bundle and what it needs only: no benchmarks, no demos),
## runs LivenessTests (each release bounded at 2 s, not 10: none will come),
## and succeeds only if every one of them fails in time.
liveness-proof:
	@$(BOUND) 900 $(SWIFT) build --product MainLoopPackageTests -Xswiftc -DMAINLOOP_FAULT_NO_RELEASE --scratch-path .build/broken > .build/broken.log 2>&1 || { cat .build/broken.log; exit 1; }
	@status=0; LIVENESS_RELEASE_BOUND_MS=2000 $(BOUND) 300 $(SWIFT) test --skip-build -Xswiftc -DMAINLOOP_FAULT_NO_RELEASE --scratch-path .build/broken --filter LivenessTests > .build/liveness-proof.log 2>&1 || status=$$?; \
	grep -E "^. Test .*(failed after|passed after)|not released|did not resume" .build/liveness-proof.log; \
	if [ $$status = 124 ] || [ $$status = 137 ]; then echo "liveness-proof: the broken build HUNG"; exit 1; fi; \
	passed=$$(grep -cE "^. Test [A-Za-z]+\(\).*passed after" .build/liveness-proof.log || true); \
	failed=$$(grep -cE "^. Test [A-Za-z]+\(\).*failed after" .build/liveness-proof.log || true); \
	echo "liveness-proof: $$failed liveness tests failed in time, $$passed passed (the one that needs no release)"; \
	[ $$failed -ge 8 ]

## The peer benchmark: mainloop-bench and the C/Swift peers in the same rounds (not in CI).
bench: deps
	bash bench/run.sh

## kvd and a real redis-server under the same hostile probes, side by side (not in CI).
hostile: deps py-deps
	python3 tools/hostile.py
	$(BOUND) 900 $(VENV)/bin/python tools/aof-kill.py .build/release/kvd always 40
	$(BOUND) 900 $(VENV)/bin/python tools/aof-kill.py .build/release/kvd everysec 40

## kvd against a real redis-server, same run (not in CI).
bench-kvd: deps py-deps
	bash bench/kvd-vs-redis.sh
