// LoopBound.postAndWait returning the value itself.
import MainLoop

final class Core { var n = 0 }

let bound = LoopBound(Core(), on: EventLoop.main)
let worker = try EventLoop.spawn(name: "worker")
try worker.post {
    let core = try? bound.postAndWait { $0 }  // expected-error: Sendable
    core?.n += 1
}
