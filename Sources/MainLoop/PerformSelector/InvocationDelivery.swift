// InvocationDelivery.swift: the one route by which an invocation reaches a
// loop. Whatever form of performSelector was called, the call is checked on
// the caller's thread, then delivered through the post API: `postAndWait`
// for a waiting call, `enqueue` of the invocation itself for one nobody
// waits for, `schedule(after:)` for a delayed one. So a performSelector has
// the same order, room, timeout and stop guarantees as the post it rides on.
import Invocations

/// How an invocation is delivered.
enum InvocationDelivery {
    /// Block until it ran (`timeout` bounds the wait for its start); its result is returned.
    case wait(timeout: Duration?)
    /// Nobody waits: queued with this room policy; an error goes to the loop's error handler.
    case post(RoomPolicy)
}

/// A checked call a loop can perform: an ``Invocation`` (a `Sendable`
/// target), or a `LoopBound` value's call, whose target is read on the
/// loop's thread only. Each is its own mailbox record, so posting one
/// allocates nothing beyond it.
protocol LoopInvocation: MailboxRecord, CrashDescribable, LabelledRecord {
    /// The checked selector and arguments.
    var call: MethodCall { get }
    /// The target's type, for messages.
    var targetType: Any.Type { get }
    /// Loop thread: performs the call.
    func invoke() throws -> (any Sendable)?
}

extension LoopInvocation {
    var crashDescription: String { "performing \(label)" }
    /// How a slow-job report names it.
    var label: String { "\(targetType).\(call.selector)" }

    /// Loop thread, as a mailbox record (a record only runs on its own
    /// loop, inside `run()`); nobody waits, so an error goes to the loop's
    /// handler.
    func runAsRecord() {
        guard let loop = EventLoop.current else {
            preconditionFailure("MainLoop: an invocation record ran off its loop's thread")
        }
        loop.performReportingErrors(self)
    }
}

extension Invocation: LoopInvocation {
    var call: MethodCall { methodCall }
    var targetType: Any.Type { type(of: target) }
    @usableFromInline func run() { runAsRecord() }
    /// Nobody waits: there is nobody to tell.
    @usableFromInline func abandon(_ error: EventLoopError) {}
}

extension EventLoop {
    /// Any thread: checks where `invocation` may run, then delivers it.
    /// Returns its result for `.wait`, nil for `.post`.
    func deliver(_ invocation: some LoopInvocation, _ delivery: InvocationDelivery) throws -> (any Sendable)? {
        try checkIsolation(of: invocation)
        switch delivery {
        case .wait(let timeout):
            // Named `Type.selector` in slow-job and stall reports: the
            // interned label, as a post site with no line.
            let site = PostSite(bits: UInt(bitPattern: invocation.call.label) & 0xFFFF_FFFF_FFFF)
            return try postAndWait(timeout: timeout, site: site) {
                try CrashReport.whileRunning(invocation) { try invocation.invoke() }
            }
        case .post(let policy):
            try enqueue(.record(invocation), policy: policy)
            return nil
        }
    }

    /// Any thread: delivers `invocation` once `delay` has passed, unless
    /// ``Invocable/cancelPreviousPerformRequests(withTarget:selector:)`` (or
    /// `LoopBound`'s) withdraws it. `key` names the target for that.
    func deliver(_ invocation: some LoopInvocation, key: ObjectIdentifier, after delay: Duration) throws -> Scheduled {
        try checkIsolation(of: invocation)
        return try DelayedPerformRequests.schedule(invocation, key: key, on: self, after: delay)
    }

    /// Refuses a MainActor-isolated method anywhere but on the main loop:
    /// Swift's own isolation check would trap inside the method.
    private func checkIsolation(of invocation: some LoopInvocation) throws(InvocationError) {
        if invocation.call.isolation == .mainActor && self !== EventLoop.main {
            throw .mainActorIsolated(
                invocation.call.selector, targetType: String(describing: invocation.targetType), loop: name)
        }
    }

    /// Loop thread: performs an invocation nobody waits for, handing an error
    /// it throws to ``errorHandler`` (or the deprecated invocation handler).
    func performReportingErrors(_ invocation: some LoopInvocation) {
        do {
            _ = try CrashReport.whileRunning(invocation) { try invocation.invoke() }
        } catch {
            if let legacy = legacyInvocationErrorHandler, let invocation = invocation as? Invocation {
                legacy(self, invocation, error)
            } else {
                report(error, label: invocation.label)
            }
        }
    }
}
