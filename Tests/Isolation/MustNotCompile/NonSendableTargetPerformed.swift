// performSelector on a mutable, non-Sendable Invocable from another thread:
// the target itself would cross threads. A LoopBound value has the family.
import MainLoop

final class Counter: Invocable {
    static let methods = MethodTable<Counter>().method("bump", Counter.bump)
    var n = 0
    func bump() { n += 1 }
}

let counter = Counter()
let io = try EventLoop.spawn(name: "io")
try counter.performSelector("bump", on: io, waitUntilDone: false)  // expected-error: Sendable
counter.bump()
