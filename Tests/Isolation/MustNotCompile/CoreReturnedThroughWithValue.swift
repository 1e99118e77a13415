// The core itself, returned through withValue and EventLoop.postAndWait to a
// worker thread, which then mutates it beside the loop (issue 25's program).
import MainLoop

final class Core {
    var n = 0
    func bump() { n += 1 }
}

let bound = LoopBound(Core(), on: EventLoop.main)
let worker = try EventLoop.spawn(name: "worker")
try worker.post {
    // expected-error: Sendable
    guard let leaked: Core = try? EventLoop.main.postAndWait({ bound.withValue { $0 } }) else { return }
    for _ in 0..<1_000 { leaked.bump() }
}
