// Invocation.swift: a checked call waiting to be made: the analogue of an
// NSInvocation that has had `retainArguments` called.

/// A method call on a target by selector, checked in full when it is made
/// and performed later, on any thread, with ``invoke()``.
///
/// The record holds strong references to the target and to every argument
/// until it is released, so a call made now and run later on another loop
/// never sees a deallocated argument (`NSInvocation.retainArguments`).
///
/// `Sendable`, checked by the compiler: the target and every argument are
/// `Sendable`, so an invocation made on one thread can be performed on
/// another. A target that is not `Sendable` (a mutable single-threaded core)
/// is performed through its loop instead: `LoopBound`'s `performSelector`.
public final class Invocation: Sendable, CustomStringConvertible {
    /// The object whose method is called.
    public let target: any AnyObject & Sendable
    private let call: MethodCall
    /// The checked call, for a loop that performs it.
    package var methodCall: MethodCall { call }

    /// The method's name.
    public var selector: Selector { call.selector }
    /// The arguments, in order, checked against ``signature``.
    public var arguments: [(any Sendable)?] { call.arguments }
    /// The method's signature.
    public var signature: MethodSignature { call.signature }
    /// Where the method may run (from its type's ``MethodTable``).
    public var isolation: MethodIsolation { call.isolation }

    /// Checks that the method returns `R` (`Void` for `()`), before anything
    /// runs: a caller asking for a typed result learns a mismatch at once.
    public func checkReturnType<R>(_: R.Type) throws(InvocationError) {
        try call.checkReturnType(R.self)
    }

    /// Makes an invocation of `selector` on `target` with `arguments`,
    /// checking everything before returning.
    ///
    /// `nil` is accepted exactly where the parameter is an `Optional`; values
    /// are never converted (an `Int` is not a `Double`). The target and the
    /// arguments are `Sendable`: a value that is not cannot be handed to
    /// another thread this way (the compiler says so, naming its type).
    /// - Throws: ``InvocationError``: the target does not answer the
    ///   selector, the argument count is wrong, or an argument (the lowest
    ///   offending index) has the wrong type or is nil for a non-optional.
    public init<Target: Invocable & Sendable>(
        target: Target, selector: Selector, arguments: [(any Sendable)?]
    ) throws(InvocationError) {
        self.call = try MethodCall(on: Target.self, selector: selector, arguments: arguments)
        self.target = target
    }

    /// Calls the method and returns its result: `nil` for a method that
    /// returns nothing (or returned `nil`). Rethrows what the method throws.
    /// Runs on the calling thread; an invocation may be invoked more than once.
    public func invoke() throws -> (any Sendable)? {
        try call.invoke(on: target)
    }

    public var description: String {
        "Invocation(\(type(of: target)).\(selector), \(arguments.count) argument\(arguments.count == 1 ? "" : "s"))"
    }
}
