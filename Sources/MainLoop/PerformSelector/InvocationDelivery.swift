// InvocationDelivery.swift: the one route by which an invocation reaches a
// loop. Whatever form of performSelector was called, the invocation is
// checked on the caller's thread, then delivered through the post API:
// `postAndWait` for a waiting call, `enqueue` of the invocation itself for
// one nobody waits for, `schedule(after:)` for a delayed one. So a
// performSelector has the same order, room, timeout and stop guarantees as
// the post it rides on.
import Invocations

/// How an invocation is delivered.
enum InvocationDelivery {
    /// Block until it ran (`timeout` bounds the wait for its start); its result is returned.
    case wait(timeout: Duration?)
    /// Nobody waits: queued with this room policy; an error goes to the loop's error handler.
    case post(RoomPolicy)
}

/// An invocation nobody waits for is its own mailbox record: posting one
/// allocates nothing beyond the invocation.
extension Invocation: MailboxRecord, CrashDescribable, LabelledRecord {
    var crashDescription: String { "performing \(type(of: target)).\(selector)" }
    /// How a slow-job report names it.
    var label: String { "\(type(of: target)).\(selector)" }

    /// Loop thread (a record only runs on its own loop, inside `run()`).
    @usableFromInline func run() {
        guard let loop = EventLoop.current else {
            preconditionFailure("MainLoop: an invocation record ran off its loop's thread")
        }
        loop.performReportingErrors(self)
    }

    /// Nobody waits: there is nobody to tell.
    @usableFromInline func abandon(_ error: EventLoopError) {}
}

extension EventLoop {
    /// Any thread: checks where `invocation` may run, then delivers it.
    /// Returns its result for `.wait`, nil for `.post`.
    func deliver(_ invocation: Invocation, _ delivery: InvocationDelivery) throws -> Any? {
        try checkIsolation(of: invocation)
        switch delivery {
        case .wait(let timeout):
            return try postAndWait(timeout: timeout) {
                try CrashReport.whileRunning(invocation) { try invocation.invoke() }
            }
        case .post(let policy):
            try enqueue(.record(invocation), policy: policy)
            return nil
        }
    }

    /// Any thread: delivers `invocation` once `delay` has passed, unless
    /// ``Invocable/cancelPreviousPerformRequests(withTarget:selector:)`` withdraws it.
    func deliver(_ invocation: Invocation, after delay: Duration) throws -> Scheduled {
        try checkIsolation(of: invocation)
        return try DelayedPerformRequests.schedule(invocation, on: self, after: delay)
    }

    /// Refuses a MainActor-isolated method anywhere but on the main loop:
    /// Swift's own isolation check would trap inside the method.
    private func checkIsolation(of invocation: Invocation) throws(InvocationError) {
        if invocation.isolation == .mainActor && self !== EventLoop.main {
            throw .mainActorIsolated(
                invocation.selector, targetType: String(describing: type(of: invocation.target)), loop: name)
        }
    }

    /// Loop thread: performs an invocation nobody waits for, handing an error
    /// it throws to ``errorHandler`` (or the deprecated invocation handler).
    func performReportingErrors(_ invocation: Invocation) {
        do {
            _ = try CrashReport.whileRunning(invocation) { try invocation.invoke() }
        } catch {
            if let legacy = legacyInvocationErrorHandler {
                legacy(self, invocation, error)
            } else {
                report(error, label: "\(type(of: invocation.target)).\(invocation.selector)")
            }
        }
    }
}
