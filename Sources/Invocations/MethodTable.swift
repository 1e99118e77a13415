// MethodTable.swift: which methods answer which selectors, for one type.
// The table is data, built once: adding a method is one `.method(...)` line.

/// A type whose methods can be invoked by selector.
///
/// Conformers are final classes (a requirement on `Self` in a static
/// property can only be met by a final class), and say which methods answer
/// which selectors:
///
/// ```swift
/// final class Counter: Invocable {
///     static let methods = MethodTable<Counter>()
///         .method("add:times:", Counter.add)
///         .method("reset", Counter.reset)
///     func add(_ value: Int, _ times: Int) -> Int { ... }
///     func reset() { ... }
/// }
/// ```
public protocol Invocable: AnyObject {
    /// The selectors this type answers and the methods behind them.
    static var methods: MethodTable<Self> { get }
}

/// The selectors a type answers, each with its ``MethodSignature`` and the
/// method to call. Immutable and `Sendable`; ``method(_:_:)`` returns a new table.
public struct MethodTable<Target: AnyObject>: Sendable {
    struct Entry: Sendable {
        let signature: MethodSignature
        /// Calls the method on `target` with arguments already checked against `signature`.
        let call: @Sendable (Target, [Any?]) throws -> Any?
    }

    private var entries: [Selector: Entry] = [:]

    /// An empty table.
    public init() {}

    /// Returns a table that also answers `selector` with `method`, an
    /// unapplied method reference such as `Counter.add` (of type
    /// `(Counter) -> (Int, Int) -> Int`). Throwing and `Void` methods register
    /// the same way.
    ///
    /// A selector whose number of colons differs from the method's number of
    /// parameters, or one registered twice, is a programmer error: it traps
    /// with a message that names the selector and the method's type.
    public func method<each Argument, Result>(
        _ selector: Selector,
        _ method: @escaping @Sendable (Target) -> (repeat each Argument) throws -> Result
    ) -> MethodTable {
        var argumentTypes: [ArgumentType] = []
        for type in repeat (each Argument).self { argumentTypes.append(.of(type)) }
        let methodType = "(\(argumentTypes.map(\.name).joined(separator: ", "))) -> \(Result.self)"
        precondition(
            selector.argumentCount == argumentTypes.count,
            "MethodTable<\(Target.self)>: selector '\(selector)' has \(selector.argumentCount) colon(s) but the method \(methodType) takes \(argumentTypes.count) argument(s)")
        precondition(
            entries[selector] == nil,
            "MethodTable<\(Target.self)>: selector '\(selector)' is registered twice")
        let signature = MethodSignature(selector: selector, argumentTypes: argumentTypes, returnType: Result.self)
        var table = self
        table.entries[selector] = Entry(signature: signature) { target, arguments in
            var index = 0
            func next<T>(_: T.Type) -> T {
                defer { index += 1 }
                // Checked against the signature before the invocation was made.
                return arguments[index] as! T
            }
            let result = try method(target)(repeat next((each Argument).self))
            if Result.self == Void.self { return nil }
            // A method returning an Optional answers nil, not Optional(nil).
            if let optional = result as? any OptionalValue { return optional.wrappedValue }
            return result
        }
        return table
    }

    /// The signature of the method that answers `selector`, or nil when the
    /// type does not answer it (the analogue of `methodSignatureForSelector:`).
    public func signature(for selector: Selector) -> MethodSignature? {
        entries[selector]?.signature
    }

    /// Every selector the table answers, sorted by spelling.
    public var selectors: [Selector] {
        entries.keys.sorted { $0.name < $1.name }
    }

    func entry(for selector: Selector) -> Entry? {
        entries[selector]
    }
}
