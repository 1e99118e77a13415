// InvocationError.swift: why an invocation was refused, before anything ran.

/// Why an ``Invocation`` could not be made. Thrown on the caller's thread,
/// before anything is posted: bad input is never logged and dropped.
public enum InvocationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The target's ``MethodTable`` has no method for the selector; `answers`
    /// lists the selectors it does have, sorted.
    case unrecognizedSelector(Selector, targetType: String, answers: [Selector])
    /// The argument list is too short or too long for the method.
    case argumentCountMismatch(Selector, expected: Int, got: Int)
    /// The argument at `index` (0 is the first) has the wrong type.
    case argumentTypeMismatch(Selector, index: Int, expected: String, actual: String)
    /// `nil` was passed at `index` for a parameter that is not `Optional`.
    case nilForNonOptional(Selector, index: Int, expected: String)
    /// The caller asked for a result of type `actual`, but the method
    /// returns `expected`.
    case returnTypeMismatch(Selector, expected: String, actual: String)
    /// The method is isolated to the main actor (its table says
    /// `isolation: .mainActor`), and was to be performed on loop `loop`,
    /// which is not the main thread's.
    case mainActorIsolated(Selector, targetType: String, loop: String)

    public var description: String {
        switch self {
        case .unrecognizedSelector(let selector, let targetType, let answers):
            let known = answers.isEmpty ? "none" : answers.map(\.name).joined(separator: ", ")
            return "\(targetType) does not recognize selector '\(selector)' (it answers: \(known))"
        case .argumentCountMismatch(let selector, let expected, let got):
            return "'\(selector)' takes \(expected) argument\(expected == 1 ? "" : "s"), got \(got)"
        case .argumentTypeMismatch(let selector, let index, let expected, let actual):
            return "'\(selector)' argument \(index) must be \(expected), got \(actual)"
        case .nilForNonOptional(let selector, let index, let expected):
            return "'\(selector)' argument \(index) must be \(expected), got nil (only Optional parameters take nil)"
        case .returnTypeMismatch(let selector, let expected, let actual):
            return "'\(selector)' returns \(expected), not \(actual)"
        case .mainActorIsolated(let selector, let targetType, let loop):
            return
                "\(targetType).\(selector) is MainActor-isolated: perform it on the main thread (EventLoop.main), not on loop '\(loop)'"
        }
    }
}
