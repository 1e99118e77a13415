// ServerCron.swift: the core loop's one chain of ticks, as Redis's
// serverCron. Every tick runs a slice of active expiry
// (Storage/ActiveExpiry.swift), a latency monitor event ("expire-cycle")
// when it reaches the threshold, as in Redis; a tick 100 ms or more after
// the last check of the save points and the append-only file checks them
// again (while the server has a directory), and one a second or more
// after the last idle check closes the idle clients (while `timeout` is
// set). One chain,
// because a timer per duty woke an idle kvd once for each, at phases of
// their own: 20 times a second where Redis with `hz 10` wakes 10.
//
// Each tick is a one-shot scheduled by the one before, so the period
// follows the keyspace: every 10 ms while some key has an expiry (Redis
// runs a fast cycle before every sleep, at most every 2 ms), so keys with
// short TTLs leave within 10 ms of their deadline; every 100 ms while none
// has, so a first TTL waits at most 100 ms for its first tick. Duties due
// every 100 ms or every second run on the first tick at or past their due
// time: up to 10 ms late while ticks come every 10 ms, never early.
import MainLoop

/// The core loop's periodic work for one dispatcher. Core loop only, with
/// the dispatcher that owns it.
final class ServerCron {
    /// The next tick.
    private var tick: Scheduled?
    /// No more ticks: the server is shutting down.
    private var stopped = false
    /// The save points and the append-only file are checked (a server with
    /// a directory, until its final snapshot is taken).
    var checksPersistence = false
    /// When the save points, and when the idle clients, were last checked
    /// (monotonic milliseconds).
    private var lastPersistenceCheck: Int64 = 0
    private var lastIdleCheck: Int64 = 0

    /// Core loop: starts the ticks for `dispatcher`, which `owner` holds.
    static func start(_ dispatcher: Dispatcher, through owner: LoopBound<Dispatcher>) {
        let now = monotonicMilliseconds()
        dispatcher.cron.lastPersistenceCheck = now
        dispatcher.cron.lastIdleCheck = now
        scheduleTick(dispatcher, through: owner)
    }

    /// Core loop: no more ticks (a chain of expiry slices that runs finishes).
    func stop() {
        stopped = true
        tick?.cancel()
    }

    private static func scheduleTick(_ dispatcher: Dispatcher, through owner: LoopBound<Dispatcher>) {
        let cron = dispatcher.cron
        guard !cron.stopped else { return }
        let period = Duration.milliseconds(dispatcher.databases.hasKeysWithExpiry ? 10 : 100)
        cron.tick = try? owner.loop.schedule(after: period) {
            owner.withValue { dispatcher in
                dispatcher.cron.run(dispatcher, through: owner)
                scheduleTick(dispatcher, through: owner)
            }
        }
    }

    private func run(_ dispatcher: Dispatcher, through owner: LoopBound<Dispatcher>) {
        ActiveExpiry.runSlice(dispatcher, through: owner, { $0.databases }) { dispatcher, nanoseconds in
            dispatcher.stats.latencyMonitor.note("expire-cycle", nanoseconds: nanoseconds)
            // The keyspace notifications of the keys that expired.
            dispatcher.flushPushes()
        }
        let now = monotonicMilliseconds()
        if checksPersistence && now - lastPersistenceCheck >= 100 {
            lastPersistenceCheck = now
            dispatcher.persistence.tick(
                dispatcher.databases, owner: owner, rewriting: dispatcher.appendOnly.rewriteStarted != nil)
            dispatcher.appendOnlyTick()
        }
        if dispatcher.idleTimeout > 0 && now - lastIdleCheck >= 1000 {
            lastIdleCheck = now
            dispatcher.closeIdleClients()
        }
    }
}
