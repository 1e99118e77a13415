// ActiveExpiry.swift: how the databases' expired keys are removed without
// anybody asking for them. The core's ticks (Server/ServerCron.swift) run
// one slice each (`Databases.expireCycle`, at most 2 ms). While expired
// keys keep turning up, the next slice is posted to the core loop, so it
// runs after the I/O and timers that are due: an expiry storm takes the
// core's spare time, never a stall. A tick does not start a second chain
// of slices while one runs.
import MainLoop

/// Active expiry's chain of slices for one set of databases. Core loop
/// only, with the databases that own it.
final class ActiveExpiry {
    /// A slice is posted to the core loop and has not run yet.
    private var sliceQueued = false

    /// Core loop: runs a slice over `databases`, and posts the next while
    /// expired keys keep turning up, unless a chain of slices runs already.
    /// The databases cannot be reached from a posted job on their own:
    /// `handle` is their owner's, on the core loop, and `pick` finds them
    /// in it.
    static func runSlice<Owner>(
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
                runSlice(databases, through: handle, pick)
            }
        } catch {
            expiry.sliceQueued = false  // the core is stopping
        }
    }
}
