# The two commands of the README's quick start: `make demo` and `make test`.
# Both install what the package needs from Debian/Ubuntu when it is missing.

SWIFT ?= swift
APT_PACKAGES := libevent-dev pkg-config redis-tools
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps run demo test test-fast test-tsan test-kvd bench bench-kvd

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

## Every test, every test again under the thread sanitizer, and kvd with the real redis-cli and redis-benchmark.
test: deps test-fast test-tsan test-kvd

# The build must be warning-free (a fresh clone compiles every file, so CI sees them all).
test-fast:
	@mkdir -p .build
	@$(SWIFT) build --build-tests > .build/build.log 2>&1 || { cat .build/build.log; exit 1; }
	@if grep "warning:" .build/build.log; then echo "the build has warnings (see above)"; exit 1; fi
	$(SWIFT) test

test-tsan:
	$(SWIFT) test --sanitize=thread

test-kvd:
	$(SWIFT) build --product kvd
	bash tools/kvd-smoke.sh .build/debug/kvd

## The peer benchmark: mainloop-bench and the C/Swift peers in the same rounds (not in CI).
bench: deps
	bash bench/run.sh

## kvd against a real redis-server, same run (not in CI).
bench-kvd: deps
	bash bench/kvd-vs-redis.sh
