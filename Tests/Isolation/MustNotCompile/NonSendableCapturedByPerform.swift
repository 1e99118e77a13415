// EventLoop.perform's closure is @Sendable: a task resumes on any thread.
import MainLoop

final class Child { var x = 0 }

func leak(_ loop: EventLoop) async throws {
    let mine = Child()
    try await loop.perform { mine.x += 1 }  // expected-error: non-Sendable
    mine.x += 1
}
