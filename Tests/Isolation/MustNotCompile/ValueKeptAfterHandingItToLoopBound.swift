// LoopBound's initializer takes the value as `sending`: the caller may not
// keep using it.
import MainLoop

final class Core { var n = 0 }

func leak(_ loop: EventLoop) -> LoopBound<Core> {
    let core = Core()
    let bound = LoopBound(core, on: loop)  // expected-error: risks causing data races
    core.n += 1
    return bound
}
