// A child object the core keeps, returned through withValue on the loop.
import MainLoop

final class Child { var x = 0 }
final class Core { var child = Child() }

let bound = LoopBound(Core(), on: EventLoop.main)
let timer = try EventLoop.main.schedule(after: .seconds(1)) {
    let child = bound.withValue { $0.child }  // expected-error: returning task-isolated
    _ = child
}
