// A worker's own object handed into the core through EventLoop.postAndWait,
// and then still mutated by the worker.
import MainLoop

final class Child { var x = 0 }
final class Core { var children: [Child] = [] }

let bound = LoopBound(Core(), on: EventLoop.main)
let worker = try EventLoop.spawn(name: "worker")
try worker.post {
    let mine = Child()
    // expected-error: risks causing data races
    try? EventLoop.main.postAndWait { bound.withValue { $0.children.append(mine) } }
    mine.x += 1
}
