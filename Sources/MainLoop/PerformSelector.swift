// PerformSelector.swift: the performSelector family on every Invocable. The
// invocation is checked on the caller's thread, then travels through the
// loop's mailbox like any other post (same order, same stop guarantees).

extension Invocable {
    /// Performs `selector` on the main thread (``EventLoop/main``) with
    /// `arguments`, like Objective-C's
    /// `performSelectorOnMainThread:waitUntilDone:withObjects:`.
    ///
    /// See ``performSelector(_:on:waitUntilDone:withObjects:)``.
    @discardableResult
    public func performSelector(
        onMainThread selector: Selector, waitUntilDone wait: Bool, withObjects arguments: Any?...
    ) throws -> Any? {
        try perform(selector, on: .main, waitUntilDone: wait, arguments: arguments)
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
    /// - Throws: ``InvocationError``; ``EventLoopError/shutDown`` once the
    ///   loop is stopped; with `waitUntilDone: true`, what the method throws
    ///   and the errors of ``EventLoop/postAndWait(timeout:_:)``.
    @discardableResult
    public func performSelector(
        _ selector: Selector, on loop: EventLoop, waitUntilDone wait: Bool, withObjects arguments: Any?...
    ) throws -> Any? {
        try perform(selector, on: loop, waitUntilDone: wait, arguments: arguments)
    }

    /// As ``performSelector(_:on:waitUntilDone:withObjects:)``, with the
    /// arguments in an array: for forwarding an argument list built at run time.
    @discardableResult
    public func performSelector(
        _ selector: Selector, on loop: EventLoop, waitUntilDone wait: Bool, withArguments arguments: [Any?]
    ) throws -> Any? {
        try perform(selector, on: loop, waitUntilDone: wait, arguments: arguments)
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
        _ selector: Selector, afterDelay delay: Duration, withObjects arguments: Any?...
    ) throws -> Scheduled {
        let invocation = try Invocation(target: self, selector: selector, arguments: arguments)
        guard let loop = EventLoop.current else { throw EventLoopError.noCurrentLoop }
        try loop.checkIsolation(of: invocation)
        return try DelayedPerformRequests.schedule(invocation, on: loop, after: delay)
    }

    /// Withdraws the delayed perform requests (``performSelector(_:afterDelay:withObjects:)``)
    /// for `target` that have not started yet, on every loop: all of them, or
    /// only those for `selector`.
    public static func cancelPreviousPerformRequests(withTarget target: Self, selector: Selector? = nil) {
        DelayedPerformRequests.cancel(target: target, selector: selector)
    }

    /// Performs `selector` on the main thread (``EventLoop/main``), waits for
    /// it, and returns its result as `R`:
    /// `let total: Int = try counter.performSelector(onMainThread: "add:", withObjects: 5, returning: Int.self)`.
    ///
    /// See ``performSelector(_:on:withObjects:returning:timeout:)``.
    public func performSelector<R>(
        onMainThread selector: Selector, withObjects arguments: Any?..., returning: R.Type, timeout: Duration? = nil
    ) throws -> R {
        try perform(selector, on: .main, arguments: arguments, returning: R.self, timeout: timeout)
    }

    /// Performs `selector` on `loop`'s thread, waits for it, and returns its
    /// result as `R` (`Void.self` for a method that returns nothing).
    ///
    /// Everything is checked on the calling thread before anything is
    /// posted, the result type included.
    /// - Parameter timeout: bounds the wait for the loop to start the call,
    ///   as in ``EventLoop/postAndWait(timeout:_:)``.
    /// - Throws: ``InvocationError`` (``InvocationError/returnTypeMismatch(_:expected:actual:)``
    ///   when the method does not return `R`); what the method throws; the
    ///   errors of ``EventLoop/postAndWait(timeout:_:)``.
    public func performSelector<R>(
        _ selector: Selector, on loop: EventLoop, withObjects arguments: Any?..., returning: R.Type,
        timeout: Duration? = nil
    ) throws -> R {
        try perform(selector, on: loop, arguments: arguments, returning: R.self, timeout: timeout)
    }

    private func perform<R>(
        _ selector: Selector, on loop: EventLoop, arguments: [Any?], returning: R.Type, timeout: Duration?
    ) throws -> R {
        let invocation = try Invocation(target: self, selector: selector, arguments: arguments)
        try invocation.checkReturnType(R.self)
        try loop.checkIsolation(of: invocation)
        let result = try loop.performAndWait(invocation, timeout: timeout)
        // The signature says the method returns R; `nil` is what a Void method
        // (or an Optional one that returned nil) answers.
        if R.self == Void.self { return () as! R }
        return result as! R
    }

    private func perform(_ selector: Selector, on loop: EventLoop, waitUntilDone wait: Bool, arguments: [Any?]) throws -> Any? {
        let invocation = try Invocation(target: self, selector: selector, arguments: arguments)
        try loop.checkIsolation(of: invocation)
        if wait {
            return try loop.performAndWait(invocation, timeout: nil)
        }
        try loop.post(invocation)
        return nil
    }
}

extension EventLoop {
    /// Refuses a MainActor-isolated method anywhere but on the main loop:
    /// Swift's own isolation check would trap inside the method.
    func checkIsolation(of invocation: Invocation) throws(InvocationError) {
        if invocation.isolation == .mainActor && self !== EventLoop.main {
            throw .mainActorIsolated(
                invocation.selector, targetType: String(describing: type(of: invocation.target)), loop: name)
        }
    }

    /// Any thread: performs `invocation` on this loop and returns its result
    /// (inline on the loop's own thread, as `postAndWait` does).
    func performAndWait(_ invocation: Invocation, timeout: Duration?) throws -> Any? {
        try postAndWait(timeout: timeout) { try performing(invocation) { try invocation.invoke() } }
    }

    /// Loop thread: performs an invocation nobody waits for, handing an error
    /// it throws to ``errorHandler`` (or the deprecated invocation handler).
    func invokeReportingErrors(_ invocation: Invocation) {
        do {
            _ = try performing(invocation) { try invocation.invoke() }
        } catch {
            if let legacy = legacyInvocationErrorHandler {
                legacy(self, invocation, error)
            } else {
                report(error, label: "\(type(of: invocation.target)).\(invocation.selector)")
            }
        }
    }
}
