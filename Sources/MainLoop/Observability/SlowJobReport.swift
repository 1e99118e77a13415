// SlowJobReport.swift: what `onSlowJob` and `watchdog` tell their handlers.

/// A job that ran longer than the threshold given to
/// ``EventLoop/onSlowJob(threshold:_:)``.
public struct SlowJobReport: Sendable, Equatable {
    /// What the job was: `File.swift:42` for a closure posted there (the
    /// poster's `#fileID:#line`), the selector and target type for an
    /// invocation, the executor's name for a Swift concurrency job of an
    /// actor or task that uses ``EventLoop/executor(named:)``, or else the
    /// kind of job ("a Swift concurrency job").
    public var label: String
    /// How long it ran.
    public var runTime: Duration
}

/// A loop that has been inside one job, or away from its event loop, for
/// longer than the timeout given to ``EventLoop/watchdog(timeout:_:)``.
public struct StallReport: Sendable, Equatable {
    /// What the loop is running: as ``SlowJobReport/label``, or the kind of
    /// callback (a timer, a watch, a signal handler).
    public var label: String
    /// How long it has been stuck in it so far (measured by the watchdog's
    /// checks, so within a quarter of the timeout of the truth).
    public var blockedFor: Duration
}

/// A job kind, published for the watchdog and used in labels.
enum JobKind: UInt8 {
    case closure = 0, record, bound, concurrency, timer, watch, signal

    var name: String {
        switch self {
        case .closure: "a posted closure"
        case .record: "a posted job"
        case .bound: "a LoopBound post"
        case .concurrency: "a Swift concurrency job"
        case .timer: "a timer callback"
        case .watch: "a file-descriptor watch callback"
        case .signal: "a signal handler"
        }
    }
}

extension Job {
    var kind: JobKind {
        switch self {
        case .work: .closure
        case .record: .record
        case .bound: .bound
        case .executorJob, .mainExecutorJob: .concurrency
        }
    }
}

/// A job's label: the one name it was given when posted (its post site: a
/// `File.swift:42`, an invocation's `Type.selector`, an executor's name),
/// or else its kind. Built only when a report is made.
func jobLabel(site: PostSite, kind: JobKind) -> String {
    site.description ?? kind.name
}
