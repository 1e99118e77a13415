// MethodTable.swift: which methods answer which selectors, for one type,
// with each method's signature (the analogue of NSMethodSignature) and the
// check of an argument list against it; and the calls checked against a
// table: `MethodCall` (not yet bound to a target) and `Invocation` (bound
// to a Sendable target: the analogue of an NSInvocation that has had
// `retainArguments` called). The table is data, built once: adding a
// method is one `.method(...)` line.

// MARK: - MethodTable

// Which methods answer which selectors, for one type.
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
///
/// Build the table once, in a `static let` where the type allows it (a
/// generic type computes it): what a registration makes lives as long as
/// the process, as an Objective-C class's method list does, so a posted
/// call refers to it without counting references; a method registered again
/// (a table built anew) gets the entry made the first time.
public protocol Invocable: AnyObject {
    /// The selectors this type answers and the methods behind them.
    static var methods: MethodTable<Self> { get }
}

/// Where a type's methods may run.
public enum MethodIsolation: Sendable, Hashable {
    /// Any thread (the caller says which loop performs them).
    case nonisolated
    /// Only the main actor: the methods of a `@MainActor` class. Swift checks
    /// that at run time and traps elsewhere, so performing them anywhere but
    /// on the main thread is refused before anything is posted.
    case mainActor
}

/// The selectors a type answers, each with its ``MethodSignature`` and the
/// method to call. Immutable and `Sendable`; ``method(_:_:)`` returns a new table.
public struct MethodTable<Target: AnyObject>: Sendable {
    /// The entries, interned and kept for the process's life, so a copy of
    /// the table (every call makes one, through the `methods` getter)
    /// counts no reference (MethodTableStorage.swift).
    @usableFromInline var storage: Unmanaged<MethodTableStorage>

    /// Where the methods may run: say `.mainActor` for a `@MainActor` class.
    public let isolation: MethodIsolation

    /// An empty table whose methods run where they are performed.
    public init() {
        isolation = .nonisolated
        storage = Unmanaged.passUnretained(MethodRegistry.emptyStorage)
    }

    /// An empty table for methods with the given isolation. A `@MainActor`
    /// class declares its table as
    /// `nonisolated static let methods = MethodTable<Counter>(isolation: .mainActor)`.
    public init(isolation: MethodIsolation) {
        self.isolation = isolation
        storage = Unmanaged.passUnretained(MethodRegistry.emptyStorage)
    }

    /// Returns a table that also answers `selector` with `method`, an
    /// unapplied method reference such as `Counter.add` (of type
    /// `(Counter) -> (Int, Int) -> Int`). Throwing and `Void` methods register
    /// the same way.
    ///
    /// The parameter and result types are `Sendable`: the arguments travel
    /// from the caller's thread to the loop's, and the result back. A method
    /// that takes or returns a type that is not `Sendable` cannot be
    /// registered (the compiler names the type).
    ///
    /// A selector whose number of colons differs from the method's number of
    /// parameters, or one registered twice, is a programmer error: it traps
    /// with a message that names the selector and the method's type.
    ///
    /// Inlinable, so that the registering module specialises the call
    /// wrapper for the method's own types: unspecialised, each call paid
    /// for generic metadata lookups of the argument pack.
    @inlinable
    public func method<each Argument: Sendable, Result: Sendable>(
        _ selector: Selector,
        _ method: @escaping @Sendable (Target) -> (repeat each Argument) throws -> Result
    ) -> MethodTable {
        adding(selector, arguments: (repeat (each Argument).self), result: Result.self) { target, arguments, cursor in
            try method(target)(repeat takeArgument(arguments, cursor, as: (each Argument).self))
        }
    }

    /// The registration: the signature from the types, the checks, and the
    /// entry (the one made before, when the same method is registered again).
    /// `call` runs the method with the arguments taken from `arguments`
    /// through `cursor`. A closure of its own, apart from the entry's, so
    /// that the method reference's application to the target (a closure
    /// that does not outlive the call) is allocated on the stack: inside the
    /// entry's closure it was a heap allocation per call.
    @inlinable
    func adding<each Argument: Sendable, Result: Sendable>(
        _ selector: Selector, arguments: (repeat (each Argument).Type), result: Result.Type,
        call:
            @escaping @Sendable (Target, UnsafeMutablePointer<(any Sendable)?>, UnsafeMutablePointer<Int>) throws ->
            Result
    ) -> MethodTable {
        var argumentTypes: [ArgumentType] = []
        for type in repeat (each Argument).self { argumentTypes.append(.of(type)) }
        let methodType = "(\(argumentTypes.map(\.name).joined(separator: ", "))) -> \(Result.self)"
        precondition(
            selector.argumentCount == argumentTypes.count,
            "MethodTable<\(Target.self)>: selector '\(selector)' has \(selector.argumentCount) colon(s) but the method \(methodType) takes \(argumentTypes.count) argument(s)"
        )
        precondition(
            entry(for: selector) == nil,
            "MethodTable<\(Target.self)>: selector '\(selector)' is registered twice")
        let signature = MethodSignature(selector: selector, argumentTypes: argumentTypes, returnType: Result.self)
        var table = self
        // A method registered before (a table built anew) keeps its entry.
        let key = MethodRegistry.Key(
            type: ObjectIdentifier(Target.self), selector: selector, methodType: methodType, isolation: isolation)
        let entry =
            MethodRegistry.entry(for: key)
            ?? MethodEntry(
                signature: signature, targetType: Target.self, isolation: isolation,
                label: MethodRegistry.intern("\(Target.self).\(selector)"), key: key
            ) { object, arguments in
                // Invocation pairs an entry only with the table's own Target type.
                let target = unsafeDowncast(object, to: Target.self)
                // A cursor on the stack, not a captured `var` (which would be
                // boxed on the heap on every call).
                var index = 0
                let result = try withUnsafeMutablePointer(to: &index) { cursor in
                    try call(target, arguments, cursor)
                }
                if Result.self == Void.self { return nil }
                // A method returning an Optional answers nil, not Optional(nil).
                // (A non-nil one stays boxed as `Optional(value)`: `as? Wrapped`
                // unwraps it, and there is no checked way to re-box the wrapped
                // value, which is only known as `Any`, as `any Sendable`.)
                if let optional = result as? any OptionalValue, optional.wrappedValue == nil { return nil }
                return result
            }
        table.storage = MethodRegistry.storage(extending: storage, with: Unmanaged.passUnretained(entry))
        return table
    }

    /// The signature of the method that answers `selector`, or nil when the
    /// type does not answer it (the analogue of `methodSignatureForSelector:`).
    public func signature(for selector: Selector) -> MethodSignature? {
        entry(for: selector)?.takeUnretainedValue().signature
    }

    /// Every selector the table answers, sorted by spelling.
    public var selectors: [Selector] {
        storage._withUnsafeGuaranteedRef { $0.bySelector.keys.sorted { $0.name < $1.name } }
    }

    /// The entry that answers `selector`, unretained (entries are never freed).
    @usableFromInline
    func entry(for selector: Selector) -> Unmanaged<MethodEntry>? {
        storage._withUnsafeGuaranteedRef { $0.entry(for: selector) }
    }
}

/// One row of a method table: the signature and the type-erased call.
/// A class, so an invocation holds it with one reference instead of copying
/// the signature's arrays and strings.
@usableFromInline
final class MethodEntry: Sendable {
    let signature: MethodSignature
    /// The signature's selector, kept beside it: a lookup compares it
    /// without copying the signature (its arrays and strings retained).
    let selector: Selector
    /// The type whose table holds the entry: a call's target must be one.
    let targetType: AnyObject.Type
    let isolation: MethodIsolation
    /// `Type.selector`, interned (see `MethodRegistry`). `nonisolated(unsafe)`:
    /// the pointer never changes, and the bytes it points to are never
    /// written or freed after interning.
    nonisolated(unsafe) let label: UnsafePointer<CChar>
    /// Calls the method on `target` (the table's `Target`) with arguments
    /// already checked against `signature`. Type-erased once, at
    /// registration, so an invocation allocates no closure of its own. The
    /// arguments are moved out of wherever the caller keeps them (the tail
    /// of a loop's invocation record, or a copy of an array), leaving that
    /// memory uninitialized: taking a value costs a move, where copying an
    /// existential out costs a call through the runtime's value witnesses.
    let call: @Sendable (AnyObject, UnsafeMutablePointer<(any Sendable)?>) throws -> (any Sendable)?

    @usableFromInline
    init(
        signature: MethodSignature, targetType: AnyObject.Type, isolation: MethodIsolation,
        label: UnsafePointer<CChar>, key: MethodRegistry.Key,
        call: @escaping @Sendable (AnyObject, UnsafeMutablePointer<(any Sendable)?>) throws -> (any Sendable)?
    ) {
        self.signature = signature
        self.selector = signature.selector
        self.targetType = targetType
        self.isolation = isolation
        self.label = label
        self.call = call
        MethodRegistry.keep(self, as: key)
    }
}

extension MethodEntry {
    /// Checks `arguments` against the signature, borrowing it in place.
    func check(_ arguments: UnsafeBufferPointer<(any Sendable)?>) -> InvocationError? {
        signature.check(arguments)
    }
}

/// The next argument, moved out and cast to its parameter's type (checked
/// against the signature before the invocation was made, so the cast cannot
/// fail).
@inline(__always)
@inlinable
func takeArgument<T>(
    _ arguments: UnsafeMutablePointer<(any Sendable)?>, _ cursor: UnsafeMutablePointer<Int>, as: T.Type
) -> T {
    defer { cursor.pointee += 1 }
    let slot = arguments + cursor.pointee
    // A plain value (no references, `Int`, `Double`, a small struct of
    // them) of exactly the parameter's type lies in the container's own
    // words, and owns nothing: read, it is taken. Opening the existential
    // instead copied it and destroyed the original through its type's
    // value witnesses.
    if _isPOD(T.self), MemoryLayout<T>.size <= ArgumentSlot.typeWordOffset,
        MemoryLayout<T>.alignment <= MemoryLayout<UnsafeRawPointer>.alignment,
        ArgumentSlot.storedType(slot) == ArgumentSlot.metadata(of: T.self)
    {
        return UnsafeRawPointer(slot).load(as: T.self)
    }
    // A nil argument is only checked in for an Optional parameter.
    guard let value = slot.move() else { return Optional<Any>.none as! T }
    return cast(value, to: T.self)
}

/// `value` as `T`, with the existential opened first (`U` is its dynamic
/// type). When the two are the same type, which the signature check makes
/// the usual case, the value is reinterpreted without asking the runtime's
/// dynamic cast (hundreds of instructions); otherwise (a subclass, a
/// protocol parameter, a value wrapped into an `Optional` parameter) the
/// runtime casts it.
@inlinable
func cast<U, T>(_ value: U, to _: T.Type) -> T {
    if U.self == T.self { return unsafeBitCast(value, to: T.self) }
    return value as! T
}

// MARK: - MethodSignature

// The argument and return types a method answers
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
    /// The dynamic types accepted without a cast: the parameter's own and,
    /// for an `Optional` parameter, its wrapped type. A value of any other
    /// type is checked with a dynamic cast (a subclass, a protocol
    /// parameter), which costs hundreds of instructions: most arguments
    /// are of exactly the parameter's type.
    private let exactType: ObjectIdentifier
    private let wrappedType: Any.Type?
    private let accepts: @Sendable (Any?) -> Bool

    @inlinable
    static func of<T>(_ type: T.Type) -> ArgumentType {
        ArgumentType(
            type: type, name: String(describing: type), acceptsNil: (nil as Any?) is T,
            wrappedType: (type as? any OptionalValue.Type)?.wrappedType, accepts: { $0 is T })
    }

    @usableFromInline
    init(
        type: Any.Type, name: String, acceptsNil: Bool, wrappedType: Any.Type?,
        accepts: @escaping @Sendable (Any?) -> Bool
    ) {
        self.type = type
        self.name = name
        self.acceptsNil = acceptsNil
        self.exactType = ObjectIdentifier(type)
        self.wrappedType = wrappedType
        self.accepts = accepts
    }

    /// The exact types, for the check's fast path.
    var exact: ExactArgumentType {
        ExactArgumentType(
            type: ArgumentSlot.metadata(of: type), wrappedType: wrappedType.map(ArgumentSlot.metadata(of:)) ?? 0,
            acceptsNil: acceptsNil)
    }

    /// True when `value` can be passed for this parameter.
    public func accepts(_ value: Any?) -> Bool {
        if let value {
            let dynamicType = ObjectIdentifier(Swift.type(of: value))
            if dynamicType == exactType || dynamicType == wrappedType.map(ObjectIdentifier.init) { return true }
        }
        return accepts(value)
    }

    public var description: String { name }
}

/// A parameter's exact types as plain words (no reference to retain): the
/// metadata an argument's type word holds when it is of exactly that type.
struct ExactArgumentType {
    let type: UInt
    /// 0 when the parameter is not an `Optional` (no type's metadata is at 0).
    let wrappedType: UInt
    let acceptsNil: Bool

    /// True when the argument in `slot` is stored as exactly the parameter's
    /// type (or, for an `Optional` parameter, its wrapped type), or is nil
    /// where nil is accepted: the check of almost every argument, reading
    /// one word in place (see `ArgumentSlot`), without converting the value
    /// to `Any` or asking the runtime's dynamic cast. False sends the
    /// argument to ``ArgumentType/accepts(_:)``, which also casts.
    @inline(__always)
    func accepts(_ slot: UnsafePointer<(any Sendable)?>) -> Bool {
        let stored = ArgumentSlot.storedType(slot)
        if stored == 0 { return acceptsNil }
        return stored == type || stored == wrappedType
    }
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
    /// Each parameter's exact types, as plain words: what the check of a
    /// call compares first, without copying an `ArgumentType` (a string and
    /// a closure to retain and release) per argument.
    private let exactTypes: [ExactArgumentType]

    /// The number of arguments the method takes (unlike `NSMethodSignature`,
    /// no hidden `self` and `_cmd`: index 0 is the first real argument).
    public var numberOfArguments: Int { argumentTypes.count }

    @usableFromInline
    init(selector: Selector, argumentTypes: [ArgumentType], returnType: Any.Type) {
        self.selector = selector
        self.argumentTypes = argumentTypes
        self.returnType = returnType
        self.returnTypeName = String(describing: returnType)
        // Evaluated in every build (a `precondition` is not under
        // -Ounchecked): the in-place reads rely on it.
        if !ArgumentSlot.layoutVerified { fatalError("Invocations: argument layout not verified") }
        self.exactTypes = argumentTypes.map(\.exact)
    }

    /// Checks `arguments` against the signature: the count first, then each
    /// argument in order, so the lowest offending index is the one reported.
    /// Returns nil when the call is well-typed.
    public func check(_ arguments: [(any Sendable)?]) -> InvocationError? {
        arguments.withUnsafeBufferPointer { check($0) }
    }

    /// As ``check(_:)-([(any Sendable)?])``, on arguments kept anywhere.
    package func check(_ arguments: UnsafeBufferPointer<(any Sendable)?>) -> InvocationError? {
        guard arguments.count == argumentTypes.count else {
            return .argumentCountMismatch(selector, expected: argumentTypes.count, got: arguments.count)
        }
        let allExact = exactTypes.withUnsafeBufferPointer { types in
            for index in 0..<arguments.count where !types[index].accepts(arguments.baseAddress! + index) {
                return false
            }
            return true
        }
        if allExact { return nil }
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

/// Lets code holding an `Any` see whether it is an `Optional`, and unwrap
/// it; and code holding a type, which type an `Optional` wraps.
@usableFromInline
protocol OptionalValue {
    var wrappedValue: Any? { get }
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalValue {
    @usableFromInline var wrappedValue: Any? { map { $0 } }
    @usableFromInline static var wrappedType: Any.Type { Wrapped.self }
}

// MARK: - ResolvedMethod

// A selector found in a type's method table with an argument list checked
// against its signature, not yet bound to a target or to where the
// arguments are kept: a `MethodCall` keeps them in an array, a loop's
// invocation record (MainLoop) in its own tail, so that posting one costs
// one allocation.
/// A selector resolved against `Target.methods`, its arguments checked.
package struct ResolvedMethod: Sendable {
    /// One word, not retained: entries live as long as the process
    /// (`MethodRegistry`), and a posted call carries it.
    unowned(unsafe) let entry: MethodEntry

    /// Finds `selector` in `Target.methods` and checks `arguments` against
    /// its signature.
    /// - Throws: ``InvocationError``, as ``Invocation/init(target:selector:arguments:)``.
    package init<Target: Invocable>(
        on _: Target.Type, selector: borrowing Selector, arguments: UnsafeBufferPointer<(any Sendable)?>
    ) throws(InvocationError) {
        // `selector` is borrowed: an initializer's parameters are otherwise
        // passed retained (a selector spelled at run time, longer than 15
        // bytes, is a string on the heap: a retain and a release per call).
        let table = Target.methods
        guard let entry = table.entry(for: selector) else {
            throw .unrecognizedSelector(
                copy selector, targetType: String(describing: Target.self), answers: table.selectors)
        }
        if let error = entry._withUnsafeGuaranteedRef({ $0.check(arguments) }) { throw error }
        self.entry = entry.takeUnretainedValue()
    }

    /// The method's name.
    package var selector: Selector { entry.selector }
    /// The type whose table the method is in: a call's target is one.
    package var targetType: AnyObject.Type { entry.targetType }
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
    /// programming error otherwise: it traps, naming both types), with the
    /// arguments that were checked, moving them out: `arguments` is left
    /// uninitialized, whether the method returns or throws.
    package func invoke(on target: AnyObject, consuming arguments: UnsafeMutablePointer<(any Sendable)?>) throws
        -> (any Sendable)?
    {
        precondition(
            ObjectIdentifier(type(of: target)) == ObjectIdentifier(entry.targetType),
            "call '\(selector)': the target is a \(type(of: target)), not the type whose table checked the call")
        // Borrowed: the entry, and so its closure, lives as long as the
        // process; through the unowned(unsafe) field the closure's context
        // was retained and released around every call.
        return try Unmanaged.passUnretained(entry)._withUnsafeGuaranteedRef { try $0.call(target, arguments) }
    }

    /// As ``invoke(on:consuming:)``, with copies of `arguments`, which stay
    /// as they are (in a buffer on the stack).
    package func invoke(on target: AnyObject, copying arguments: UnsafeBufferPointer<(any Sendable)?>) throws
        -> (any Sendable)?
    {
        try withUnsafeTemporaryAllocation(of: (any Sendable)?.self, capacity: max(arguments.count, 1)) { copies in
            let base = copies.baseAddress!
            if let source = arguments.baseAddress { base.initialize(from: source, count: arguments.count) }
            return try invoke(on: target, consuming: base)
        }
    }
}

// MARK: - MethodCall

// A checked call that keeps its arguments, not yet bound to a target. An
// `Invocation` is one bound to a Sendable target.
/// A selector and its arguments, checked against `Target.methods`.
package struct MethodCall: Sendable {
    /// The method and the check of `arguments` against it.
    package let method: ResolvedMethod
    /// The arguments, in order, checked against the signature.
    package let arguments: [(any Sendable)?]

    /// Checks `selector` and `arguments` against `Target.methods`.
    /// - Throws: ``InvocationError``, as ``Invocation/init(target:selector:arguments:)``.
    package init<Target: Invocable>(
        on _: Target.Type, selector: Selector, arguments: [(any Sendable)?]
    ) throws(InvocationError) {
        self.method = try arguments.withUnsafeBufferPointer { arguments throws(InvocationError) in
            try ResolvedMethod(on: Target.self, selector: selector, arguments: arguments)
        }
        self.arguments = arguments
    }

    /// A call already checked: `arguments` are the ones `method` was checked with.
    package init(_ method: ResolvedMethod, arguments: [(any Sendable)?]) {
        self.method = method
        self.arguments = arguments
    }

    /// The method's name.
    package var selector: Selector { method.selector }
    /// The method's signature.
    package var signature: MethodSignature { method.signature }
    /// Where the method may run.
    package var isolation: MethodIsolation { method.isolation }
    /// `Type.selector`, interned.
    package var label: UnsafePointer<CChar> { method.label }

    /// Checks that the method returns `R` (`Void` for `()`).
    package func checkReturnType<R>(_: R.Type) throws(InvocationError) {
        try method.checkReturnType(R.self)
    }

    /// Calls the method on `target`, which must be of the table's type.
    package func invoke(on target: AnyObject) throws -> (any Sendable)? {
        try arguments.withUnsafeBufferPointer { try method.invoke(on: target, copying: $0) }
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
    /// `Type.selector`, interned: what names the call in slow-job and stall reports.
    package var label: UnsafePointer<CChar> { call.label }

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

    /// An invocation of a call already checked against `target`'s type.
    package init(target: any AnyObject & Sendable, call: MethodCall) {
        self.call = call
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
