// Deadline.swift: timeouts as absolute CLOCK_MONOTONIC nanoseconds, the
// form every bounded wait (semaphore, condition variable) takes.
import CLibevent

/// The monotonic deadline `timeout` from now, in nanoseconds; `nil` for no timeout.
func monotonicDeadline(after timeout: Duration?) -> UInt64? {
    guard let timeout else { return nil }
    let (seconds, attoseconds) = timeout.components
    if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return mainloop_monotonic_ns() }
    let nanos = UInt64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
    let total = nanos.partialValue.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
    if nanos.overflow || total.overflow { return UInt64.max / 2 }
    let sum = mainloop_monotonic_ns().addingReportingOverflow(total.partialValue)
    return sum.overflow ? UInt64.max / 2 : sum.partialValue
}
