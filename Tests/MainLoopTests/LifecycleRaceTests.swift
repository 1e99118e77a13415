// LifecycleRaceTests.swift: one lifecycle. From the moment stop() takes
// effect, posts, executor jobs and registrations are all refused: a thread
// that sees one of them refused never sees a later one accepted.
import Glibc
import TestKit
import Testing

@testable import MainLoop

@Suite(.timeLimit(.minutes(5))) struct LifecycleRaceTests {
    /// What one call answered, in the order the racing thread made them.
    enum Answer: Equatable { case accepted, refused }

    // While another thread calls stop(), a thread registers a one-hour timer
    // and posts, back to back, until both are refused. With two states
    // under two locks (the lifecycle for registrations, the mailbox for
    // posts), a registration was refused while a post right after it was
    // still accepted.
    @Test(arguments: [false, true])
    func aRefusalIsFinalForPostsAndRegistrationsAlike(running: Bool) throws {
        var violations: [String] = []
        var straddled = 0
        // A loop that runs stops through its final drain; one that never ran
        // stops at once, discarding what it holds: both paths are raced.
        for round in 0..<(running ? 800 : 4_000) {
            let loop = running ? try EventLoop.spawn(name: "race") : try EventLoop(name: "race-idle")
            let answers = Locked<[(String, Answer)]>([])
            let racer = TestThread {
                var refusedBoth = false
                while !refusedBoth {
                    let timer: Answer
                    do {
                        _ = try loop.schedule(after: .seconds(3_600)) {}
                        timer = .accepted
                    } catch { timer = .refused }
                    let post: Answer
                    do {
                        try loop.post {}
                        post = .accepted
                    } catch { post = .refused }
                    answers.withValue { $0 += [("timer", timer), ("post", post)] }
                    refusedBoth = timer == .refused && post == .refused
                }
            }
            // Stop once the racer is under way, at a varying point.
            let warmUp = 2 + 2 * (round % 4)
            while answers.current.count < warmUp { sched_yield() }
            loop.stop()
            racer.join("the racing thread")
            try loop.join(timeout: .seconds(20))
            let seen = answers.current
            if let firstRefusal = seen.firstIndex(where: { $0.1 == .refused }) {
                // stop() took effect between a registration and the post
                // right after it: the window the old code had open.
                if firstRefusal % 2 == 1 { straddled += 1 }
                if let late = seen[firstRefusal...].first(where: { $0.1 == .accepted }) {
                    violations.append("round \(round): \(late.0) accepted after a refusal: \(seen.suffix(6))")
                }
            }
        }
        #expect(violations.isEmpty, "\(violations.count) violations, first: \(violations.first ?? "")")
        // The race must have been run where it matters, not only around it:
        // in some rounds stop() fell between a registration and its post.
        #expect(straddled > 0, "stop() never fell between a registration and the post after it")
    }
}
