// An array holding the core, returned through withValue.
import MainLoop

final class Core { var n = 0 }

let bound = LoopBound(Core(), on: EventLoop.main)
let timer = try EventLoop.main.schedule(after: .seconds(1)) {
    let cores = bound.withValue { [$0] }  // expected-error: as a 'sending' result
    _ = cores
}
