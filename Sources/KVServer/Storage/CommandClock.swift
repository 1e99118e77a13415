// CommandClock.swift: the time as kvd reads it: the instant a command runs
// at (fixed once per command, as Redis caches it per call), and the
// monotonic clocks for intervals and budgets.
import Glibc

/// Milliseconds on the monotonic clock: for intervals that must not jump
/// with the wall clock (uptime, how long a client has been over a limit).
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// Unix time in milliseconds: the clock of key deadlines, as in Redis.
func unixMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// The time a command runs at, in Unix milliseconds: fixed by the
/// dispatcher for each command (as Redis caches it per call), so a command
/// reads no clock of its own and sees one instant throughout. Unset (outside
/// a command), it reads the clock.
final class CommandClock {
    /// The current command's time, if one runs.
    @exclusivity(unchecked) var fixed: Int64?  // one thread: its dispatcher's

    /// The current command's time, or the clock's.
    var now: Int64 { fixed ?? unixMilliseconds() }
}

/// Nanoseconds on the monotonic clock, for time budgets.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
