// Invocation.swift: a checked call waiting to be made. `MethodCall` is the
// selector and arguments checked against a type's method table; an
// `Invocation` is one bound to a Sendable target: the analogue of an
// NSInvocation that has had `retainArguments` called.

// MARK: - MethodCall

// A call checked against a type's method table, not yet
// bound to a target. An `Invocation` is one bound to a Sendable target; a
// LoopBound core (MainLoop) binds it on its loop's thread, the only thread
// that may touch the target, so the target never crosses threads.
/// A selector and its arguments, checked against `Target.methods`.
package struct MethodCall: Sendable {
    /// The method's name.
    package let selector: Selector
    /// The arguments, in order, checked against the signature.
    package let arguments: [(any Sendable)?]
    let entry: MethodEntry
    /// The type the table belongs to: `invoke(on:)` checks its target against it.
    private let targetType: ObjectIdentifier

    /// Checks `selector` and `arguments` against `Target.methods`.
    /// - Throws: ``InvocationError``, as ``Invocation/init(target:selector:arguments:)``.
    package init<Target: Invocable>(
        on _: Target.Type, selector: Selector, arguments: [(any Sendable)?]
    ) throws(InvocationError) {
        let table = Target.methods
        guard let entry = table.entry(for: selector) else {
            throw .unrecognizedSelector(selector, targetType: String(describing: Target.self), answers: table.selectors)
        }
        if let error = entry.signature.check(arguments) { throw error }
        self.selector = selector
        self.arguments = arguments
        self.entry = entry
        self.targetType = ObjectIdentifier(Target.self)
    }

    /// The method's signature.
    package var signature: MethodSignature { entry.signature }
    /// Where the method may run.
    package var isolation: MethodIsolation { entry.isolation }
    /// `Type.selector`, as a C string that lives as long as the process:
    /// what names the call in slow-job and stall reports.
    package var label: UnsafePointer<CChar> { entry.label }

    /// Checks that the method returns `R` (`Void` for `()`).
    package func checkReturnType<R>(_: R.Type) throws(InvocationError) {
        guard entry.signature.returnType == R.self else {
            throw .returnTypeMismatch(
                selector, expected: entry.signature.returnTypeName, actual: String(describing: R.self))
        }
    }

    /// Calls the method on `target`, which must be of the table's type (a
    /// programming error otherwise: it traps, naming both types).
    package func invoke(on target: AnyObject) throws -> (any Sendable)? {
        precondition(
            ObjectIdentifier(type(of: target)) == targetType,
            "MethodCall '\(selector)': the target is a \(type(of: target)), not the type whose table checked the call")
        return try entry.call(target, arguments)
    }
}

// MARK: - Invocation

// A checked call waiting to be made: the analogue of an
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
