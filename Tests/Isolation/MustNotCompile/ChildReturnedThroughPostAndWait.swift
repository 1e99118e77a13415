// A child object returned by EventLoop.postAndWait: the result must be Sendable.
import MainLoop

final class Child { var x = 0 }
final class Core { var child = Child() }

let bound = LoopBound(Core(), on: EventLoop.main)
let worker = try EventLoop.spawn(name: "worker")
try worker.post {
    let child = try? EventLoop.main.postAndWait { () -> Child in  // expected-error: Sendable
        var out = Child()
        bound.withValue { out = $0.child }
        return out
    }
    child?.x += 1
}
