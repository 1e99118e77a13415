// MethodSignature.swift: the argument and return types a method answers
// with, and the up-front check of an argument list against them.

/// One parameter's type, with what is needed to check a value against it at
/// run time.
public struct ArgumentType: Sendable, CustomStringConvertible {
    /// The parameter's type.
    public let type: Any.Type
    /// Its name as Swift spells it (`Int`, `Optional<String>`).
    public let name: String
    /// True when the parameter is an `Optional`, so `nil` is accepted.
    public let acceptsNil: Bool
    private let accepts: @Sendable (Any?) -> Bool

    static func of<T>(_ type: T.Type) -> ArgumentType {
        ArgumentType(type: type, name: String(describing: type), acceptsNil: (nil as Any?) is T, accepts: { $0 is T })
    }

    private init(type: Any.Type, name: String, acceptsNil: Bool, accepts: @escaping @Sendable (Any?) -> Bool) {
        self.type = type
        self.name = name
        self.acceptsNil = acceptsNil
        self.accepts = accepts
    }

    /// True when `value` can be passed for this parameter.
    public func accepts(_ value: Any?) -> Bool { accepts(value) }

    public var description: String { name }
}

/// What a method takes and returns: the analogue of `NSMethodSignature`,
/// answered by ``MethodTable/signature(for:)``.
public struct MethodSignature: Sendable, CustomStringConvertible {
    /// The selector the method answers.
    public let selector: Selector
    /// The parameters' types, in order.
    public let argumentTypes: [ArgumentType]
    /// The return type (`()` for a method that returns nothing).
    public let returnType: Any.Type
    /// The return type's name as Swift spells it.
    public let returnTypeName: String

    /// The number of arguments the method takes (unlike `NSMethodSignature`,
    /// no hidden `self` and `_cmd`: index 0 is the first real argument).
    public var numberOfArguments: Int { argumentTypes.count }

    init(selector: Selector, argumentTypes: [ArgumentType], returnType: Any.Type) {
        self.selector = selector
        self.argumentTypes = argumentTypes
        self.returnType = returnType
        self.returnTypeName = String(describing: returnType)
    }

    /// Checks `arguments` against the signature: the count first, then each
    /// argument in order, so the lowest offending index is the one reported.
    /// Returns nil when the call is well-typed.
    public func check(_ arguments: [(any Sendable)?]) -> InvocationError? {
        guard arguments.count == argumentTypes.count else {
            return .argumentCountMismatch(selector, expected: argumentTypes.count, got: arguments.count)
        }
        for index in arguments.indices where !argumentTypes[index].accepts(arguments[index]) {
            let expected = argumentTypes[index].name
            guard let value = arguments[index] else {
                return .nilForNonOptional(selector, index: index, expected: expected)
            }
            return .argumentTypeMismatch(selector, index: index, expected: expected, actual: dynamicTypeName(of: value))
        }
        return nil
    }

    public var description: String {
        "\(selector): (\(argumentTypes.map(\.name).joined(separator: ", "))) -> \(returnTypeName)"
    }
}

/// The name of the type a value really has, looking through the `Any` box
/// and through a non-nil `Optional` wrapped in it.
func dynamicTypeName(of value: Any) -> String {
    if let optional = value as? any OptionalValue, let wrapped = optional.wrappedValue {
        return "Optional<\(dynamicTypeName(of: wrapped))>"
    }
    return String(describing: type(of: value))
}

/// Lets code holding an `Any` see whether it is an `Optional`, and unwrap it.
protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    var wrappedValue: Any? { map { $0 } }
}
