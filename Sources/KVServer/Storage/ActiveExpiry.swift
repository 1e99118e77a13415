// ActiveExpiry.swift: how the databases' expired keys are removed without
// anybody asking for them. The core's ticks (Server/ServerCron.swift) run
// one slice each (`Databases.expireCycle`, at most 2 ms). While expired
// keys keep turning up, the next slice is posted to the core loop, so it
// runs after the I/O and timers that are due: an expiry storm takes the
// core's spare time, never a stall. A tick does not start a second chain
// of slices while one runs. Each slice's time is handed to the caller, for
// the latency monitor's "expire-cycle" event, as Redis's activeExpireCycle
// reports its own.
import MainLoop

/// Active expiry's chain of slices for one set of databases. Core loop
/// only, with the databases that own it.
final class ActiveExpiry {
    /// A slice is posted to the core loop and has not run yet.
    private var sliceQueued = false

    /// Core loop: runs a slice over the databases `pick` finds in `owner`,
    /// and posts the next while expired keys keep turning up, unless a
    /// chain of slices runs already. The databases cannot be reached from a
    /// posted job on their own: `handle` is their owner's, on the core
    /// loop. `finished` is told when each slice ends, with how long it ran
    /// (nanoseconds).
    static func runSlice<Owner>(
        _ owner: Owner, through handle: LoopBound<Owner>,
        _ pick: @escaping @Sendable (Owner) -> Databases,
        finished: @escaping @Sendable (Owner, UInt64) -> Void
    ) {
        let databases = pick(owner)
        let expiry = databases.activeExpiry
        guard !expiry.sliceQueued else { return }
        databases.shrinkSparseTables()
        // Only the expiry is timed, as Redis times activeExpireCycle alone
        // (its tables shrink in databasesCron).
        let start = monotonicNanoseconds()
        let busy = databases.expireCycle()
        finished(owner, monotonicNanoseconds() - start)
        guard busy else { return }
        expiry.sliceQueued = true
        do {
            try handle.post { owner in
                pick(owner).activeExpiry.sliceQueued = false
                runSlice(owner, through: handle, pick, finished: finished)
            }
        } catch {
            expiry.sliceQueued = false  // the core is stopping
        }
    }
}
