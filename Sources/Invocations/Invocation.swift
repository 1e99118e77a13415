// Invocation.swift: a checked call waiting to be made: the analogue of an
// NSInvocation that has had `retainArguments` called.

/// A method call on a target by selector, checked in full when it is made
/// and performed later, on any thread, with ``invoke()``.
///
/// The record holds strong references to the target and to every argument
/// until it is released, so a call made now and run later on another loop
/// never sees a deallocated argument (`NSInvocation.retainArguments`).
///
/// `@unchecked Sendable`: an invocation is made on one thread and performed
/// on another, as `performSelectorOnMainThread:` does. Its fields never
/// change; handing the target and the arguments to the thread that performs
/// it is the point of the type, so, as with a `Sendable` closure that captures
/// them, do not mutate them concurrently from elsewhere.
public final class Invocation: @unchecked Sendable, CustomStringConvertible {
    /// The object whose method is called.
    public let target: AnyObject
    /// The method's name.
    public let selector: Selector
    /// The arguments, in order, checked against ``signature``.
    public let arguments: [Any?]
    private let entry: MethodEntry

    /// The method's signature.
    public var signature: MethodSignature { entry.signature }
    /// Where the method may run (from its type's ``MethodTable``).
    public var isolation: MethodIsolation { entry.isolation }

    /// Checks that the method returns `R` (`Void` for `()`), before anything
    /// runs: a caller asking for a typed result learns a mismatch at once.
    public func checkReturnType<R>(_: R.Type) throws(InvocationError) {
        guard entry.signature.returnType == R.self else {
            throw .returnTypeMismatch(
                selector, expected: entry.signature.returnTypeName, actual: String(describing: R.self))
        }
    }

    /// Makes an invocation of `selector` on `target` with `arguments`,
    /// checking everything before returning.
    ///
    /// `nil` is accepted exactly where the parameter is an `Optional`; values
    /// are never converted (an `Int` is not a `Double`).
    /// - Throws: ``InvocationError``: the target does not answer the
    ///   selector, the argument count is wrong, or an argument (the lowest
    ///   offending index) has the wrong type or is nil for a non-optional.
    public init<Target: Invocable>(target: Target, selector: Selector, arguments: [Any?]) throws(InvocationError) {
        let table = Target.methods
        guard let entry = table.entry(for: selector) else {
            throw .unrecognizedSelector(selector, targetType: String(describing: Target.self), answers: table.selectors)
        }
        if let error = entry.signature.check(arguments) { throw error }
        self.target = target
        self.selector = selector
        self.arguments = arguments
        self.entry = entry
    }

    /// Calls the method and returns its result: `nil` for a method that
    /// returns nothing (or returned `nil`). Rethrows what the method throws.
    /// Runs on the calling thread; an invocation may be invoked more than once.
    public func invoke() throws -> Any? {
        try entry.call(target, arguments)
    }

    public var description: String {
        "Invocation(\(type(of: target)).\(selector), \(arguments.count) argument\(arguments.count == 1 ? "" : "s"))"
    }
}
