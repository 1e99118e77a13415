// A fire-and-forget LoopBound post cannot capture a non-Sendable object:
// its closure is @Sendable (the worker goes on at once).
import MainLoop

final class Child { var x = 0 }
final class Core { var children: [Child] = [] }

func leak(_ bound: LoopBound<Core>) throws {
    let mine = Child()
    try bound.post { $0.children.append(mine) }  // expected-error: non-Sendable
    mine.x += 1
}
