// FaultInjection.swift: the one deliberately broken build, which proves that
// the liveness tests fail (naming what was not released) instead of hanging.
//
// `make liveness-proof` builds with `-Xswiftc -DMAINLOOP_FAULT_NO_RELEASE`:
// every place that releases a blocked caller (a finished `postAndWait`, an
// admitted or refused room waiter, a finished `perform`, a terminated loop's
// joiners, a timer's `cancel()` waiting for its running handler) then skips
// the release. In every other build the constant is
// false and the checks fold away.
enum FaultInjection {
    #if MAINLOOP_FAULT_NO_RELEASE
        static let dropsReleases = true
    #else
        static let dropsReleases = false
    #endif
}
