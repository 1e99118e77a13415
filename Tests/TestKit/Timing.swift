// Timing.swift: the one factor by which the tests' wall-clock thresholds
// grow under a sanitizer. Shared by both test targets.
import Glibc

/// Wall-clock thresholds (slow-job and stall limits, CPU-time budgets, the
/// time a child process may take) are multiplied by this: 5 when
/// `MAINLOOP_SANITIZED` is set (`make test-tsan` and `make test-asan` set
/// it; code there runs 2-15 times slower, and a job that is fast natively
/// can cross a 20 ms line), 1 otherwise. Counts are never scaled.
public let sanitizerFactor: Int = getenv("MAINLOOP_SANITIZED") == nil ? 1 : 5

extension Duration {
    /// This duration times `sanitizerFactor`.
    public var scaledForSanitizers: Duration { self * sanitizerFactor }
}
