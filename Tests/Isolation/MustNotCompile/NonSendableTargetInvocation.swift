// An Invocation is Sendable, so its target must be.
import MainLoop

final class Counter: Invocable {
    static let methods = MethodTable<Counter>().method("bump", Counter.bump)
    var n = 0
    func bump() { n += 1 }
}

let invocation = try Invocation(target: Counter(), selector: "bump", arguments: [])  // expected-error: Sendable
_ = invocation
