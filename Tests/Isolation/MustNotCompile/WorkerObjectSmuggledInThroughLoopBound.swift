// The same through LoopBound.postAndWait, whose closure is `sending` too.
import MainLoop

final class Child { var x = 0 }
final class Core { var children: [Child] = [] }

let bound = LoopBound(Core(), on: EventLoop.main)
let worker = try EventLoop.spawn(name: "worker")
try worker.post {
    let mine = Child()
    try? bound.postAndWait { $0.children.append(mine) }  // expected-error: risks causing data races
    mine.x += 1
}
