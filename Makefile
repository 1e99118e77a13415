# The two commands of the README's quick start: `make run` and `make test`.
# Both install what the package needs from Debian/Ubuntu when it is missing.

SWIFT ?= swift
APT_PACKAGES := libevent-dev pkg-config redis-tools valgrind
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps run demo test test-fast test-tsan test-asan test-kvd test-leaks fuzz fuzz-ci stress-long bench bench-kvd

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

## The whole proof, as CI runs it: every test; kvd with the real redis-cli and
## redis-benchmark; a stress run under valgrind's leak check; every test again
## under the thread and the address sanitizer; each fuzzer for 30 seconds.
test: deps test-fast test-kvd test-leaks test-tsan test-asan fuzz-ci

# The build must be warning-free (a fresh clone compiles every file, so CI sees them all).
test-fast:
	@mkdir -p .build
	@$(SWIFT) build --build-tests > .build/build.log 2>&1 || { cat .build/build.log; exit 1; }
	@if grep "warning:" .build/build.log; then echo "the build has warnings (see above)"; exit 1; fi
	$(SWIFT) test

test-kvd:
	$(SWIFT) build --product kvd
	bash tools/kvd-smoke.sh .build/debug/kvd

# Only definite leaks fail: "possibly lost" blocks are the Swift runtime's
# metadata caches, which hold interior pointers on purpose.
test-leaks:
	$(SWIFT) build --product mainloop-stress
	valgrind --quiet --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite --error-exitcode=3 .build/debug/mainloop-stress 500

# Swift's crash backtracer can spin forever in a sanitized process that traps
# on purpose (the exit tests' children, the trap scenarios), so it is off in
# the sanitizer runs; the traps are still checked.
test-tsan:
	SWIFT_BACKTRACE=enable=no $(SWIFT) test --sanitize=thread

test-asan:
	SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --sanitize=address

## libFuzzer on the RESP parser and the invocation checker, 5 minutes each (FUZZ_SECONDS=...).
fuzz:
	bash Fuzz/fuzz.sh

fuzz-ci:
	FUZZ_SECONDS=30 bash Fuzz/fuzz.sh

## The stress tests at 20x their CI size (minutes).
stress-long:
	STRESS=long $(SWIFT) test --filter StressTests

## The peer benchmark: mainloop-bench and the C/Swift peers in the same rounds (not in CI).
bench: deps
	bash bench/run.sh

## kvd against a real redis-server, same run (not in CI).
bench-kvd: deps
	bash bench/kvd-vs-redis.sh
