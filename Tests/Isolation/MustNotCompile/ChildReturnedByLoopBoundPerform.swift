// LoopBound.perform returning a child object to a task.
import MainLoop

final class Child { var x = 0 }
final class Core { var child = Child() }

func leak(_ bound: LoopBound<Core>) async throws {
    let child = try await bound.perform { $0.child }  // expected-error: Sendable
    child.x += 1
}
