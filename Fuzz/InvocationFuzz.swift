// InvocationFuzz.swift: libFuzzer target for the invocation checker. Built
// by fuzz.sh together with the Invocations module's sources.
//
// The input chooses a selector (known, or arbitrary bytes) and an argument
// list of random types, lengths and nils. Every call must either be refused
// with an InvocationError or run and see exactly the arguments it was given.

final class FuzzTarget: Invocable, Sendable {
    static let methods = MethodTable<FuzzTarget>()
        .method("ping", FuzzTarget.ping)
        .method("one:", FuzzTarget.one)
        .method("two:and:", FuzzTarget.two)
        .method("three:and:and:", FuzzTarget.three)
        .method("mixed:and:and:and:", FuzzTarget.mixed)
    func ping() -> [String] { [] }
    func one(_ a: Int) -> [String] { [render(a)] }
    func two(_ a: String?, _ b: Double) -> [String] { [render(a), render(b)] }
    func three(_ a: Int?, _ b: Bool, _ c: [Int]) -> [String] { [render(a), render(b), render(c)] }
    func mixed(_ a: Int, _ b: Int, _ c: String, _ d: FuzzTarget?) throws -> [String] {
        if a == 13 { throw FuzzError.unlucky }
        return [render(a), render(b), render(c), render(d)]
    }
}

enum FuzzError: Error { case unlucky }

private func render(_ value: Any?) -> String {
    guard let value else { return "nil" }
    return value is FuzzTarget ? "target" : "\(value)"
}

private let knownSelectors: [Selector] = ["ping", "one:", "two:and:", "three:and:and:", "mixed:and:and:and:"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInvocation(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = Array(UnsafeRawBufferPointer(start: data, count: count))[...]
    func next() -> UInt8 { input.popFirst() ?? 0 }

    let choice = next()
    let selector: Selector
    if choice < 200 {
        selector = knownSelectors[Int(choice) % knownSelectors.count]
    } else {
        let length = Int(next() % 24)
        selector = Selector(String(decoding: (0..<length).map { _ in next() }, as: UTF8.self))
    }
    let argumentCount = Int(next() % 6)
    var arguments: [(any Sendable)?] = []
    for _ in 0..<argumentCount {
        switch next() % 9 {
        case 0: arguments.append(nil)
        case 1: arguments.append(Int(Int8(bitPattern: next())))
        case 2: arguments.append(Double(next()) / 4)
        case 3: arguments.append(String(decoding: (0..<Int(next() % 8)).map { _ in next() }, as: UTF8.self))
        case 4: arguments.append(next() % 2 == 0)
        case 5: arguments.append([Int(next()), Int(next())])
        case 6: arguments.append(FuzzTarget())
        case 7: arguments.append(Optional<Int>.some(Int(next())))
        default: arguments.append(UInt8(next()))
        }
    }
    do {
        let invocation = try Invocation(target: FuzzTarget(), selector: selector, arguments: arguments)
        precondition(invocation.signature.numberOfArguments == arguments.count)
        do {
            let result = try invocation.invoke() as! [String]
            precondition(result == arguments.map(render), "the method saw other arguments than it was given")
        } catch FuzzError.unlucky {
            // A method's own error is rethrown, as promised.
        }
    } catch let error as InvocationError {
        precondition(!error.description.isEmpty)
    } catch {
        preconditionFailure("Invocation threw something other than InvocationError: \(error)")
    }
    return 0
}
