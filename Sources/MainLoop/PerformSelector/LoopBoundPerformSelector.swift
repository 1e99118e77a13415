// LoopBoundPerformSelector.swift: the performSelector family on a mutable,
// non-Sendable Invocable core, through the LoopBound that owns it. The call
// is checked on the caller's thread against the type's method table (no
// target needed for that); the target is read on the owning loop's thread
// only, so the core never crosses threads and needs no `@unchecked`.
import Invocations

extension LoopBound where Value: Invocable {
    /// Performs `selector` with `arguments` on the value, on its loop's thread,
    /// like Objective-C's `performSelector:onThread:withObject:waitUntilDone:`
    /// on the thread that owns the object.
    ///
    /// As ``Invocable/performSelector(_:on:waitUntilDone:withObjects:timeout:)``
    /// (the call is checked on the calling thread first; an unknown selector
    /// or a wrong argument throws ``InvocationError`` there), for a value that
    /// is not `Sendable`: a mutable single-threaded core, declared without
    /// `@unchecked`. The result is `nil` for a method that returns nothing.
    /// - `waitUntilDone: true` blocks until the method ran and returns its
    ///   result, rethrowing what it throws (inline on the loop's own thread).
    /// - `waitUntilDone: false` returns `nil` at once; an error the method
    ///   throws later goes to the loop's ``EventLoop/errorHandler``,
    ///   labelled `Type.selector`.
    /// - Parameters:
    ///   - selector: the method to perform, as registered in `Value`'s `MethodTable`.
    ///   - wait: whether to block until the method has run.
    ///   - arguments: the method's arguments, in order; `nil` only where the
    ///     parameter is `Optional`.
    ///   - timeout: with `waitUntilDone: true`, bounds the wait for the loop
    ///     to start the call; with `false`, bounds the wait for room in a full
    ///     bounded mailbox. `nil` waits as long as it takes.
    /// - Throws: ``InvocationError``; the errors of ``postAndWait(timeout:file:line:_:)``
    ///   and of `post`.
    @discardableResult
    public func performSelector(
        _ selector: Selector, waitUntilDone wait: Bool, withObjects arguments: (any Sendable)?...,
        timeout: Duration? = nil
    ) throws -> (any Sendable)? {
        try perform(selector, waitUntilDone: wait, arguments: arguments, timeout: timeout)
    }

    /// As ``performSelector(_:waitUntilDone:withObjects:timeout:)``, with the
    /// arguments in an array built at run time.
    @discardableResult
    public func performSelector(
        _ selector: Selector, waitUntilDone wait: Bool, withArguments arguments: [(any Sendable)?],
        timeout: Duration? = nil
    ) throws -> (any Sendable)? {
        try perform(selector, waitUntilDone: wait, arguments: arguments, timeout: timeout)
    }

    /// Performs `selector` on the value, waits for it, and returns its
    /// result as `R` (`Void.self` for a method that returns nothing),
    /// checked before anything is posted.
    /// - Throws: ``InvocationError`` (``InvocationError/returnTypeMismatch(_:expected:actual:)``
    ///   when the method does not return `R`); what the method throws; the
    ///   errors of ``postAndWait(timeout:file:line:_:)``.
    public func performSelector<R: Sendable>(
        _ selector: Selector, withObjects arguments: (any Sendable)?..., returning: R.Type, timeout: Duration? = nil
    ) throws -> R {
        let invocation = try checked(selector, arguments, pool: nil)
        try invocation.checkReturnType(R.self)
        return typedResult(try loop.deliver(invocation, .wait(timeout: timeout)), as: R.self)
    }

    /// Performs `selector` on the value, nobody waiting, and never waits
    /// itself: a full bounded mailbox refuses the call.
    /// - Throws: ``InvocationError``; ``EventLoopError/full`` (nothing was
    ///   queued); ``EventLoopError/shutDown``.
    public func tryPerformSelector(_ selector: Selector, withObjects arguments: (any Sendable)?...) throws {
        _ = try loop.deliver(try checked(selector, arguments, pool: loop.recordPool), .post(.refuse))
    }

    /// Performs `selector` on the value once `delay` has passed, on the
    /// owning loop (from any thread), as Apple's
    /// `performSelector:withObject:afterDelay:` does on the object's run loop.
    ///
    /// Errors the method throws go to the loop's ``EventLoop/errorHandler``.
    /// ``cancelPreviousPerformRequests(selector:)`` or the returned
    /// ``Scheduled`` withdraws it.
    /// - Throws: ``InvocationError``; ``EventLoopError/shutDown``.
    @discardableResult
    public func performSelector(
        _ selector: Selector, afterDelay delay: Duration, withObjects arguments: (any Sendable)?...
    ) throws -> Scheduled {
        try loop.deliver(
            try checked(selector, arguments, pool: nil), key: ObjectIdentifier(owner.storage), after: delay)
    }

    /// Withdraws this value's delayed perform requests
    /// (``performSelector(_:afterDelay:withObjects:)``) that have not started
    /// yet: all of them, or only those for `selector`.
    public func cancelPreviousPerformRequests(selector: Selector? = nil) {
        DelayedPerformRequests.cancel(key: ObjectIdentifier(owner.storage), selector: selector)
    }

    /// The checked call, as the record the loop performs (see
    /// ``InvocationRecord``); `pool` as in `Invocable.record`: the loop's for
    /// a posted call, nil for one that is waited for or delayed.
    private func checked(
        _ selector: Selector, _ arguments: [(any Sendable)?], pool: InvocationRecordPool?
    ) throws(InvocationError) -> InvocationRecord {
        try arguments.withUnsafeBufferPointer { arguments throws(InvocationError) in
            try InvocationRecord.make(onValueOf: owner, selector: selector, arguments: arguments, pool: pool)
        }
    }

    private func perform(
        _ selector: Selector, waitUntilDone wait: Bool, arguments: [(any Sendable)?], timeout: Duration?
    ) throws -> (any Sendable)? {
        let invocation = try checked(selector, arguments, pool: wait ? nil : loop.recordPool)
        if wait { return try loop.deliver(invocation, .wait(timeout: timeout)) }
        return try loop.deliver(invocation, .post(.wait(until: monotonicDeadline(after: timeout))))
    }
}
