// MethodCall.swift: a call checked against a type's method table, not yet
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
