// ActiveExpiry.swift: when the databases' expired keys are removed without
// anybody asking for them. A chain of one-shot ticks on the core loop, so
// that the period follows the keyspace: every 10 ms while some key has an
// expiry (Redis runs a fast cycle before every sleep, at most every 2 ms),
// so keys with short TTLs leave within 10 ms of their deadline, and a tick
// with nothing due compares one deadline per database; every 100 ms while
// none has (Redis's `hz 10`), so idle ticks come 10 times a second, not
// 100 (the save points' check, ServerSnapshots.swift, is a timer of its
// own at another phase), and a first TTL waits at most 100 ms for its
// first tick.
//
// Each tick runs one slice (`Databases.expireCycle`, at most 2 ms). While
// expired keys keep turning up, the next slice is posted to the core loop,
// so it runs after the I/O and timers that are due: an expiry storm takes
// the core's spare time, never a stall. A tick does not start a second
// chain of slices while one runs.
import MainLoop

/// Active expiry's schedule for one set of databases. Core loop only, with
/// the databases that own it.
final class ActiveExpiry {
    /// A slice is posted to the core loop and has not run yet.
    private var sliceQueued = false
    /// The next tick.
    private var tick: Scheduled?
    /// No more ticks: the server is shutting down.
    private var stopped = false

    /// Core loop: starts the ticks over `databases`. The databases cannot be
    /// reached from a timer on their own: `handle` is their owner's, on the
    /// core loop, and `pick` finds them in it.
    static func start<Owner>(
        _ databases: Databases, through handle: LoopBound<Owner>,
        _ pick: @escaping @Sendable (Owner) -> Databases
    ) {
        scheduleTick(databases, through: handle, pick)
    }

    /// Core loop: no more ticks (a chain of slices that runs finishes).
    func stop() {
        stopped = true
        tick?.cancel()
    }

    private static func scheduleTick<Owner>(
        _ databases: Databases, through handle: LoopBound<Owner>,
        _ pick: @escaping @Sendable (Owner) -> Databases
    ) {
        let expiry = databases.activeExpiry
        guard !expiry.stopped else { return }
        let period = Duration.milliseconds(databases.hasKeysWithExpiry ? 10 : 100)
        expiry.tick = try? handle.loop.schedule(after: period) {
            handle.withValue { owner in
                let databases = pick(owner)
                expireSlice(databases, through: handle, pick)
                scheduleTick(databases, through: handle, pick)
            }
        }
    }

    private static func expireSlice<Owner>(
        _ databases: Databases, through handle: LoopBound<Owner>,
        _ pick: @escaping @Sendable (Owner) -> Databases
    ) {
        let expiry = databases.activeExpiry
        guard !expiry.sliceQueued else { return }
        guard databases.expireCycle() else { return }
        expiry.sliceQueued = true
        do {
            try handle.post { owner in
                let databases = pick(owner)
                databases.activeExpiry.sliceQueued = false
                expireSlice(databases, through: handle, pick)
            }
        } catch {
            expiry.sliceQueued = false  // the core is stopping
        }
    }
}
