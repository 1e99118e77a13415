// LoopErrorReport.swift: an error that nobody waits for (a fire-and-forget
// closure, a timer or watcher handler, an invocation not waited on), and
// where it goes: the loop's `errorHandler`, or one line on standard error.

/// An error thrown by work that nobody waits for, as handed to
/// ``EventLoop/errorHandler``.
public struct LoopErrorReport: Sendable, CustomStringConvertible {
    /// The loop the work ran on.
    public let loop: EventLoop
    /// What the work threw.
    public let error: any Error
    /// What the work was: for an invocation its target type and selector
    /// (`Counter.add:`); for a closure, a timer or a watcher, where it was
    /// posted or registered from (`Module/File.swift:42`).
    public let label: String

    public var description: String { "loop '\(loop.name)': \(label) threw: \(error)" }
}

extension EventLoop {
    /// Loop thread: hands an error nobody waits for to the handler, or to
    /// standard error when there is none. Never silently lost.
    func report(_ error: any Error, label: String) {
        let report = LoopErrorReport(loop: self, error: error, label: label)
        if let handler = errorHandler {
            handler(report)
        } else {
            writeToStandardError("MainLoop: \(report)\n")
        }
    }

    /// `work` as a non-throwing closure that hands what it throws to
    /// `report`, labelled with where it was posted or registered from (the
    /// label is built only when there is an error to report).
    /// Unowned: the loop runs the closure, so the loop is alive when it does.
    private func reportingErrors(
        of work: @escaping @Sendable () throws -> Void, from file: StaticString, _ line: UInt
    ) -> @Sendable () -> Void {
        { [unowned self] in
            do { try work() } catch { self.report(error, label: "\(file):\(line)") }
        }
    }

    /// Like ``post(file:line:_:)-16vnh``, for work that can throw: what it throws goes to
    /// ``errorHandler`` (or one line on standard error), labelled with where
    /// it was posted from.
    public func post(
        file: StaticString = #fileID, line: UInt = #line, _ work: @escaping @Sendable () throws -> Void
    ) throws {
        try enqueue(.work(reportingErrors(of: work, from: file, line)), site: PostSite(file: file, line: line))
    }

    /// Like ``schedule(after:_:)``, for a handler that can throw (see ``errorHandler``).
    @discardableResult
    public func schedule(
        after delay: Duration, file: StaticString = #fileID, line: UInt = #line,
        _ work: @escaping @Sendable () throws -> Void
    ) throws -> Scheduled {
        try schedule(after: delay, reportingErrors(of: work, from: file, line))
    }

    /// Like ``schedule(every:_:)``, for a handler that can throw (see ``errorHandler``).
    @discardableResult
    public func schedule(
        every interval: Duration, file: StaticString = #fileID, line: UInt = #line,
        _ work: @escaping @Sendable () throws -> Void
    ) throws -> Scheduled {
        try schedule(every: interval, reportingErrors(of: work, from: file, line))
    }

    /// Like ``watch(fd:for:_:)``, for a handler that can throw (see ``errorHandler``).
    public func watch(
        fd: Int32, for events: IOEvents, file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (IOEvents) throws -> Void
    ) throws -> Watch {
        try watch(fd: fd, for: events) { [unowned self] ready in
            do { try handler(ready) } catch { self.report(error, label: "\(file):\(line)") }
        }
    }

    /// Like ``onSignal(_:_:)``, for a handler that can throw (see ``errorHandler``).
    public func onSignal(
        _ signal: Int32, file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable () throws -> Void
    ) throws -> Watch {
        try onSignal(signal, reportingErrors(of: handler, from: file, line))
    }
}
