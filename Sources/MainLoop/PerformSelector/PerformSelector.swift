// PerformSelector.swift: the performSelector family on every Sendable
// Invocable, and the one route by which any invocation reaches a loop. The
// call is checked on the caller's thread (Invocations), then delivered
// through the post API: `postAndWait` for a waiting call, `enqueue` of the
// invocation itself for one nobody waits for, `schedule(after:)` for a
// delayed one; so a performSelector has the same order, room, timeout and
// stop guarantees as the post it rides on. A mutable core that is not
// Sendable has the same family through its LoopBound
// (LoopBoundPerformSelector.swift).
import Invocations

// MARK: - PerformSelector

// The performSelector family on every Sendable
// Invocable (a mutable single-threaded core has it through LoopBound,
// LoopBoundPerformSelector.swift). The invocation is checked on the caller's
// thread, then delivered through the post API (the delivery section below):
// same order, room, timeout and stop guarantees as a post.
/// The performSelector family on an object that may be reached from any
/// thread: `Sendable` (immutable, internally locked, or `@MainActor`). A
/// mutable object that is not `Sendable` is handed to its loop with
/// ``LoopBound``, which has the same family (``LoopBound/performSelector(_:waitUntilDone:withObjects:timeout:)``).
///
/// Arguments are `(any Sendable)?` and typed results `Sendable`: what
/// travels between the caller's thread and the loop's cannot be shared with
/// either side (the compiler names a type that is not `Sendable`).
extension Invocable where Self: Sendable {
    /// Performs `selector` on the main thread (``EventLoop/main``) with
    /// `arguments`, like Objective-C's
    /// `performSelectorOnMainThread:waitUntilDone:withObjects:`.
    ///
    /// See ``performSelector(_:on:waitUntilDone:withObjects:timeout:)``.
    @discardableResult
    public func performSelector(
        onMainThread selector: Selector, waitUntilDone wait: Bool, withObjects arguments: (any Sendable)?...,
        timeout: Duration? = nil
    ) throws -> (any Sendable)? {
        try perform(selector, on: .main, waitUntilDone: wait, arguments: arguments, timeout: timeout)
    }

    /// Performs `selector` on `loop`'s thread with `arguments`.
    ///
    /// The call is checked on the calling thread before anything is posted:
    /// an unknown selector or a wrong argument throws ``InvocationError``
    /// here. The target and every argument are kept alive until the method
    /// has run.
    ///
    /// - `waitUntilDone: true` blocks until the method ran and returns its
    ///   result (`nil` for `Void`), rethrowing what it throws. On the loop's
    ///   own thread it runs inline, like Apple's.
    /// - `waitUntilDone: false` returns `nil` at once. If the method throws
    ///   later, the error goes to ``EventLoop/errorHandler`` (or,
    ///   when that is nil, one line on standard error): never silently lost.
    ///
    /// It rides on the post API: `waitUntilDone: true` is a
    /// ``EventLoop/postAndWait(timeout:file:line:_:)`` and `false` a ``EventLoop/post(timeout:file:line:_:)``,
    /// with their order, back-pressure and stop guarantees.
    /// - Parameters:
    ///   - selector: the method to perform, as registered in the class's `MethodTable`.
    ///   - loop: the loop whose thread performs it.
    ///   - wait: whether to block until the method has run.
    ///   - arguments: the method's arguments, in order; `nil` only where the
    ///     parameter is `Optional`.
    ///   - timeout: with `waitUntilDone: true`, bounds the wait for the loop
    ///     to start the call; with `false`, bounds the wait for room in a
    ///     full bounded mailbox. `nil` waits as long as it takes. See
    ///     ``tryPerformSelector(_:on:withObjects:)`` for a call that never waits.
    /// - Throws: ``InvocationError``; ``EventLoopError/shutDown`` once the
    ///   loop is stopped; ``EventLoopError/timedOut``; with
    ///   `waitUntilDone: true`, what the method throws and the errors of
    ///   ``EventLoop/postAndWait(timeout:file:line:_:)``.
    @discardableResult
    public func performSelector(
        _ selector: Selector, on loop: EventLoop, waitUntilDone wait: Bool, withObjects arguments: (any Sendable)?...,
        timeout: Duration? = nil
    ) throws -> (any Sendable)? {
        try perform(selector, on: loop, waitUntilDone: wait, arguments: arguments, timeout: timeout)
    }

    /// As ``performSelector(_:on:waitUntilDone:withObjects:timeout:)``, with the
    /// arguments in an array: for forwarding an argument list built at run time.
    @discardableResult
    public func performSelector(
        _ selector: Selector, on loop: EventLoop, waitUntilDone wait: Bool, withArguments arguments: [(any Sendable)?],
        timeout: Duration? = nil
    ) throws -> (any Sendable)? {
        try perform(selector, on: loop, waitUntilDone: wait, arguments: arguments, timeout: timeout)
    }

    /// Performs `selector` on `loop`'s thread with `arguments`, nobody
    /// waiting, and never waits itself: a full bounded mailbox refuses the
    /// call (as ``EventLoop/tryPost(file:line:_:)`` does).
    /// - Throws: ``InvocationError``; ``EventLoopError/full`` (nothing was
    ///   queued); ``EventLoopError/shutDown``.
    public func tryPerformSelector(
        _ selector: Selector, on loop: EventLoop, withObjects arguments: (any Sendable)?...
    ) throws {
        _ = try loop.deliver(try record(selector, arguments, pool: loop.recordPool), .post(.refuse))
    }

    /// As ``tryPerformSelector(_:on:withObjects:)``, on the main thread (``EventLoop/main``).
    public func tryPerformSelector(onMainThread selector: Selector, withObjects arguments: (any Sendable)?...) throws {
        _ = try EventLoop.main.deliver(
            try record(selector, arguments, pool: EventLoop.main.recordPool), .post(.refuse))
    }

    /// Performs `selector` with `arguments` on the calling thread's loop
    /// (``EventLoop/current``) once `delay` has passed, as Apple's
    /// `performSelector:withObject:afterDelay:` does on the current run loop.
    ///
    /// Errors the method throws go to ``EventLoop/errorHandler``.
    /// ``cancelPreviousPerformRequests(withTarget:selector:)`` or the returned
    /// ``Scheduled`` withdraws it.
    /// - Throws: ``InvocationError``; ``EventLoopError/noCurrentLoop`` when
    ///   the caller is not on a loop; ``EventLoopError/shutDown``.
    @discardableResult
    public func performSelector(
        _ selector: Selector, afterDelay delay: Duration, withObjects arguments: (any Sendable)?...
    ) throws -> Scheduled {
        let invocation = try record(selector, arguments, pool: nil)
        guard let loop = EventLoop.current else { throw EventLoopError.noCurrentLoop }
        return try loop.deliver(invocation, key: ObjectIdentifier(self), after: delay)
    }

    /// Withdraws the delayed perform requests (``performSelector(_:afterDelay:withObjects:)``)
    /// for `target` that have not started yet, on every loop: all of them, or
    /// only those for `selector`.
    public static func cancelPreviousPerformRequests(withTarget target: Self, selector: Selector? = nil) {
        DelayedPerformRequests.cancel(key: ObjectIdentifier(target), selector: selector)
    }

    /// Performs `selector` on the main thread (``EventLoop/main``), waits for
    /// it, and returns its result as `R`:
    /// `let total: Int = try counter.performSelector(onMainThread: "add:", withObjects: 5, returning: Int.self)`.
    ///
    /// See ``performSelector(_:on:withObjects:returning:timeout:)``.
    public func performSelector<R: Sendable>(
        onMainThread selector: Selector, withObjects arguments: (any Sendable)?..., returning: R.Type,
        timeout: Duration? = nil
    ) throws -> R {
        try perform(selector, on: .main, arguments: arguments, returning: R.self, timeout: timeout)
    }

    /// Performs `selector` on `loop`'s thread, waits for it, and returns its
    /// result as `R` (`Void.self` for a method that returns nothing).
    ///
    /// Everything is checked on the calling thread before anything is
    /// posted, the result type included.
    /// - Parameters:
    ///   - selector: the method to perform, as registered in the class's `MethodTable`.
    ///   - loop: the loop whose thread performs it.
    ///   - arguments: the method's arguments, in order; `nil` only where the
    ///     parameter is `Optional`.
    ///   - returning: the method's result type (`Void.self` for none).
    ///   - timeout: bounds the wait for the loop to start the call, as in
    ///     ``EventLoop/postAndWait(timeout:file:line:_:)``.
    /// - Throws: ``InvocationError`` (``InvocationError/returnTypeMismatch(_:expected:actual:)``
    ///   when the method does not return `R`); what the method throws; the
    ///   errors of ``EventLoop/postAndWait(timeout:file:line:_:)``.
    public func performSelector<R: Sendable>(
        _ selector: Selector, on loop: EventLoop, withObjects arguments: (any Sendable)?..., returning: R.Type,
        timeout: Duration? = nil
    ) throws -> R {
        try perform(selector, on: loop, arguments: arguments, returning: R.self, timeout: timeout)
    }

    private func perform<R: Sendable>(
        _ selector: Selector, on loop: EventLoop, arguments: [(any Sendable)?], returning: R.Type, timeout: Duration?
    ) throws -> R {
        let invocation = try record(selector, arguments, pool: nil)
        try invocation.checkReturnType(R.self)
        return typedResult(try loop.deliver(invocation, .wait(timeout: timeout)), as: R.self)
    }

    private func perform(
        _ selector: Selector, on loop: EventLoop, waitUntilDone wait: Bool, arguments: [(any Sendable)?],
        timeout: Duration?
    ) throws -> (any Sendable)? {
        let invocation = try record(selector, arguments, pool: wait ? nil : loop.recordPool)
        if wait { return try loop.deliver(invocation, .wait(timeout: timeout)) }
        return try loop.deliver(invocation, .post(.wait(until: monotonicDeadline(after: timeout))))
    }
}

extension Invocable where Self: Sendable {
    /// The checked call, as the record a loop performs. The arguments are
    /// copied into it, not kept: the list a variadic call built can stay on
    /// the caller's stack. `pool`: the loop's, for a record that is posted
    /// (and so run as a mailbox record, which hands it back); nil for one
    /// that is waited for or delayed, which is run another way.
    fileprivate func record(
        _ selector: Selector, _ arguments: [(any Sendable)?], pool: InvocationRecordPool?
    ) throws(InvocationError) -> InvocationRecord {
        try arguments.withUnsafeBufferPointer { arguments throws(InvocationError) in
            try InvocationRecord.make(on: self, selector: selector, arguments: arguments, pool: pool)
        }
    }
}

/// A waiting call's result as the type its signature was checked to return:
/// `nil` is what a Void method (or an Optional one that returned nil) answers.
func typedResult<R>(_ result: (any Sendable)?, as _: R.Type) -> R {
    if R.self == Void.self { return () as! R }
    return result as! R
}

// MARK: - InvocationDelivery

// The one route by which an invocation reaches a
// loop. Whatever form of performSelector was called, the call is checked on
// the caller's thread, then delivered through the post API: `postAndWait`
// for a waiting call, `enqueue` of the invocation itself for one nobody
// waits for, `schedule(after:)` for a delayed one. So a performSelector has
// the same order, room, timeout and stop guarantees as the post it rides on.
/// How an invocation is delivered.
enum InvocationDelivery {
    /// Block until it ran (`timeout` bounds the wait for its start); its result is returned.
    case wait(timeout: Duration?)
    /// Nobody waits: queued with this room policy; an error goes to the loop's error handler.
    case post(RoomPolicy)
}

/// A checked call a loop can perform (an ``InvocationRecord``): on a
/// `Sendable` target, or on a `LoopBound` value, which is read on the
/// loop's thread only. It is its own mailbox record, so posting one
/// allocates nothing beyond it.
// Each field is its own requirement, not a copy of the whole checked call
// (whose copy retains and releases its target): a post reads them on its
// hot path.
protocol LoopInvocation: MailboxRecord {
    /// The checked selector.
    var selector: Selector { get }
    /// Where the method may run.
    var isolation: MethodIsolation { get }
    /// Its one name, `Type.selector` (interned when the method was
    /// registered): its post site, and the label of an error it throws.
    var name: UnsafePointer<CChar> { get }
    /// The target's type, for messages.
    var targetType: Any.Type { get }
    /// Loop thread: performs the call.
    func invoke() throws -> (any Sendable)?
    /// The call as an ``Invocation``, for the deprecated
    /// ``EventLoop/invocationErrorHandler``: nil for a `LoopBound` value's.
    var invocation: Invocation? { get }
}

extension LoopInvocation {
    /// Loop thread, as a mailbox record (a record only runs on its own
    /// loop, inside `run()`); nobody waits, so an error goes to the loop's
    /// handler.
    func runAsRecord() {
        guard let loop = EventLoop.currentUnretained else {
            preconditionFailure("MainLoop: an invocation record ran off its loop's thread")
        }
        // The loop is running this record, so it is alive: no reference of
        // our own. (An EventLoop's count lives in a side table, for the fork
        // handler's weak reference: a retain and release of it cost two
        // atomic updates through that table, a tenth of the loop's share of
        // an invocation.)
        loop._withUnsafeGuaranteedRef { $0.performReportingErrors(self) }
    }
}

extension EventLoop {
    /// Any thread: checks where `invocation` may run, then delivers it.
    /// Returns its result for `.wait`, nil for `.post`.
    func deliver(_ invocation: consuming some LoopInvocation, _ delivery: InvocationDelivery) throws -> (any Sendable)?
    {
        try checkIsolation(of: invocation)
        switch delivery {
        case .wait(let timeout):
            // Named `Type.selector` in slow-job and stall reports.
            return try postAndWait(timeout: timeout, site: PostSite(name: invocation.name)) {
                try whileRunning(named: invocation.name) { try invocation.invoke() }
            }
        case .post(let policy):
            // Moved into the job, not copied (a retain and a release); the
            // unbounded mailbox's lane moves the job on, a bounded one's
            // offer copies it under its lock.
            let site = PostSite(name: invocation.name)
            try enqueue(.record(consume invocation), site: site, policy: policy)
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
        if invocation.isolation == .mainActor && self !== EventLoop.main {
            throw .mainActorIsolated(
                invocation.selector, targetType: String(describing: invocation.targetType), loop: name)
        }
    }

    /// Loop thread: performs an invocation nobody waits for, handing an error
    /// it throws to ``errorHandler`` (or the deprecated invocation handler).
    func performReportingErrors(_ invocation: some LoopInvocation) {
        // The call takes the record's arguments: the deprecated handler's
        // Invocation is made (with copies) before, and only while one is set
        // (every call, then, allocates it and its arguments' array). A
        // handler set during the call sees nothing of it: the error goes to
        // `errorHandler`.
        let forLegacyHandler = hasLegacyInvocationHandler.load(ordering: .relaxed) ? invocation.invocation : nil
        do {
            // The result nobody reads (nil, usually) is dropped in place.
            try withUnsafeTemporaryAllocation(of: (any Sendable)?.self, capacity: 1) { result in
                let slot = result.baseAddress!
                slot.initialize(to: try whileRunning(named: invocation.name) { try invocation.invoke() })
                ArgumentSlot.deinitialize(slot)
            }
        } catch {
            if let legacy = legacyInvocationErrorHandler, let invocation = forLegacyHandler {
                legacy(self, invocation, error)
            } else {
                report(error, label: String(cString: invocation.name))
            }
        }
    }
}

// MARK: - Naming a crash

extension EventLoop {
    /// Loop thread: runs `body`, recording that the invocation named `name`
    /// (interned: a C string that lives as long as the process) is what this
    /// thread performs, for the crash line (Loop/CrashReport.swift).
    func whileRunning<R>(named name: UnsafePointer<CChar>, _ body: () throws -> R) rethrows -> R {
        let outer = invocationBeingPerformed
        invocationBeingPerformed = name
        defer { invocationBeingPerformed = outer }
        return try body()
    }
}
