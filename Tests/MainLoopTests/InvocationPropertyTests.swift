// InvocationPropertyTests.swift: thousands of random selectors and argument
// lists against one target. Each call either runs with exactly the right
// arguments or throws exactly the InvocationError an independent model
// predicts; nothing crashes. Seeded, so a failure reproduces.
import Testing

@testable import MainLoop

/// SplitMix64: small, fast, reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

final class Badge: CustomStringConvertible, Sendable {
    let id: Int
    init(id: Int) { self.id = id }
    var description: String { "badge\(id)" }
}

/// Renders an argument the same way in the target and in the model.
func render(_ value: Any?) -> String {
    guard let value else { return "nil" }
    return "\(value)"
}

final class Probe: Invocable, @unchecked Sendable {
    static let methods = MethodTable<Probe>()
        .method("ping", Probe.ping)
        .method("one:", Probe.one)
        .method("two:and:", Probe.two)
        .method("three:and:and:", Probe.three)
        .method("four:and:and:and:", Probe.four)
    func ping() -> [String] { [] }
    func one(_ a: Int) -> [String] { [render(a)] }
    func two(_ a: String?, _ b: Double) -> [String] { [render(a), render(b)] }
    func three(_ a: Int?, _ b: Bool, _ c: Badge) -> [String] { [render(a), render(b), render(c)] }
    func four(_ a: Int, _ b: Int, _ c: String, _ d: Int?) -> [String] { [render(a), render(b), render(c), render(d)] }
}

/// The model: what each parameter accepts, spelled independently of the library.
enum Kind: CaseIterable {
    case int, double, string, bool, badge, none
    var typeName: String {
        switch self {
        case .int: "Int"
        case .double: "Double"
        case .string: "String"
        case .bool: "Bool"
        case .badge: "Badge"
        case .none: "nil"
        }
    }
}

struct Parameter {
    let kind: Kind; let optional: Bool
    var name: String { optional ? "Optional<\(kind.typeName)>" : kind.typeName }
    func accepts(_ value: Kind) -> Bool { value == kind || (value == .none && optional) }
}

let model: [Selector: [Parameter]] = [
    "ping": [],
    "one:": [Parameter(kind: .int, optional: false)],
    "two:and:": [Parameter(kind: .string, optional: true), Parameter(kind: .double, optional: false)],
    "three:and:and:": [
        Parameter(kind: .int, optional: true), Parameter(kind: .bool, optional: false),
        Parameter(kind: .badge, optional: false),
    ],
    "four:and:and:and:": [
        Parameter(kind: .int, optional: false), Parameter(kind: .int, optional: false),
        Parameter(kind: .string, optional: false), Parameter(kind: .int, optional: true),
    ],
]

func randomValue(_ kind: Kind, _ rng: inout SeededGenerator) -> (any Sendable)? {
    switch kind {
    case .int: Int.random(in: -1000...1000, using: &rng)
    case .double: Double(Int.random(in: -1000...1000, using: &rng)) / 4
    case .string: ["", "a", "hello", "ünï", "x y"].randomElement(using: &rng)!
    case .bool: Bool.random(using: &rng)
    case .badge: Badge(id: Int.random(in: 0...99, using: &rng))
    case .none: nil
    }
}

func expectedOutcome(
    _ selector: Selector, _ kinds: [Kind], _ values: [(any Sendable)?]
) -> Result<[String], InvocationError> {
    guard let parameters = model[selector] else {
        return .failure(.unrecognizedSelector(selector, targetType: "Probe", answers: Probe.methods.selectors))
    }
    guard parameters.count == kinds.count else {
        return .failure(.argumentCountMismatch(selector, expected: parameters.count, got: kinds.count))
    }
    for (index, (parameter, kind)) in zip(parameters, kinds).enumerated() where !parameter.accepts(kind) {
        return .failure(
            kind == .none
                ? .nilForNonOptional(selector, index: index, expected: parameter.name)
                : .argumentTypeMismatch(selector, index: index, expected: parameter.name, actual: kind.typeName))
    }
    return .success(values.map(render))
}

@Suite(.timeLimit(.minutes(5))) struct InvocationPropertyTests {
    static let selectors: [Selector] = Array(model.keys) + ["pong", "one", "one:two:", "", ":", "two:and"]

    /// One random call: a selector, and mostly well-typed arguments with random faults.
    static func randomCall(_ rng: inout SeededGenerator) -> (Selector, [Kind], [(any Sendable)?]) {
        let selector = selectors.randomElement(using: &rng)!
        var count = model[selector]?.count ?? selector.argumentCount
        if Int.random(in: 0..<5, using: &rng) == 0 { count = Int.random(in: 0...5, using: &rng) }
        let kinds: [Kind] = (0..<count).map { index in
            if let parameters = model[selector], index < parameters.count, Int.random(in: 0..<4, using: &rng) != 0 {
                let parameter = parameters[index]
                return parameter.optional && Bool.random(using: &rng) ? .none : parameter.kind
            }
            return Kind.allCases.randomElement(using: &rng)!
        }
        return (selector, kinds, kinds.map { randomValue($0, &rng) })
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomCallsRunWithTheRightArgumentsOrThrowTheRightError(seed: UInt64) throws {
        var rng = SeededGenerator(state: seed)
        var ran = 0, refused = 0
        for _ in 0..<2_500 {
            let (selector, kinds, values) = Self.randomCall(&rng)
            let expected = expectedOutcome(selector, kinds, values)
            let actual: Result<[String], InvocationError>
            do {
                let invocation = try Invocation(target: Probe(), selector: selector, arguments: values)
                actual = .success(try invocation.invoke() as! [String])
            } catch let error as InvocationError {
                actual = .failure(error)
            }
            #expect(actual == expected, "seed \(seed): \(selector) \(kinds)")
            if case .success = actual { ran += 1 } else { refused += 1 }
        }
        // The generator must exercise both outcomes, or the test proves little.
        #expect(ran > 500 && refused > 500, "ran \(ran), refused \(refused)")
    }

    @Test func randomCallsThroughALoopMatchTheModel() throws {
        try withSpawnedLoop("property") { loop in
            var rng = SeededGenerator(state: 99)
            let probe = Probe()
            for _ in 0..<500 {
                let (selector, kinds, values) = Self.randomCall(&rng)
                let expected = expectedOutcome(selector, kinds, values)
                do {
                    let result = try probe.performSelector(
                        selector, on: loop, waitUntilDone: true, withArguments: values)
                    #expect(expected == .success(result as! [String]))
                } catch let error as InvocationError {
                    #expect(expected == .failure(error))
                }
            }
        }
    }
}
