// ThreadChurnTests.swift: the per-thread semaphore's life. A blocked caller
// sleeps on a semaphore made on its thread's first blocking post and freed
// when the thread exits (Waiting/ThreadSemaphore.swift): thousands of threads
// that post once and exit at once, and a blocking post made while a thread
// is exiting (from a thread-local destructor, after that semaphore was freed).
import Glibc
import TestKit
import Testing

@testable import MainLoop

/// What each thread-local destructor's blocking post returned, by thread
/// (-1: it threw). The destructors are C callbacks that capture nothing, so
/// they reach it through a global.
private let destructorResults = Locked<[Int: Int]>([:])

/// The loop the destructors post to (set before any thread with the key starts).
private let destructorLoop = Locked<EventLoop?>(nil)

/// A thread-local key whose destructor makes a blocking post with the
/// thread's value. Made after `ThreadSemaphore`'s key (the first blocking
/// post made it), so glibc runs this destructor after that one: the
/// semaphore is already freed when it posts.
private let postingKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key) { pointer in
        let index = Int(bitPattern: pointer)
        guard let loop = destructorLoop.current else { return }
        let result = (try? loop.postAndWait(timeout: .seconds(30)) { index * 2 }) ?? -1
        destructorResults.withValue { $0[index] = result }
    }
    precondition(rc == 0)
    return key
}()

@Suite(.timeLimit(.minutes(5))) struct ThreadChurnTests {
    @Test func thousandsOfThreadsThatPostOnceAndExitAtOnceAreEachReleasedWithTheirOwnResult() throws {
        try withSpawnedLoop("churn") { loop in
            let total = Stress.scaled(3_000), wave = 50
            let results = Locked([Int](repeating: -1, count: total))
            let failures = Locked<[String]>([])
            var start = 0
            while start < total {
                // A wave of threads at once: each one's first (and only)
                // blocking post makes its semaphore, and the thread exits as
                // soon as it is released, freeing it while the loop may still
                // be inside sem_post.
                let threads = (start..<min(start + wave, total)).map { index in
                    TestThread {
                        do {
                            let value = try loop.postAndWait(timeout: .seconds(30)) { index }
                            results.withValue { $0[index] = value }
                        } catch {
                            failures.withValue { $0.append("#\(index): \(error)") }
                        }
                    }
                }
                threads.join("a short-lived thread's blocking post")
                start += wave
            }
            #expect(failures.current.isEmpty, "\(failures.current.prefix(5))")
            let wrong = results.current.enumerated().filter { $0.element != $0.offset }
            #expect(wrong.isEmpty, "\(wrong.count) threads got another thread's result, first: \(wrong.prefix(5))")
            // Published when a batch ends, which may be after its last caller was released.
            #expect(eventually { loop.stats.executed >= UInt64(total) })
        }
    }

    @Test func aBlockingPostFromAThreadLocalDestructorIsReleasedWithItsResult() throws {
        try withSpawnedLoop("destructor") { loop in
            destructorLoop.set(loop)
            defer { destructorLoop.set(nil) }
            let total = 200
            let threads = (1...total).map { index in
                TestThread {
                    // A blocking post first: the thread's semaphore exists,
                    // and its key's destructor runs before `postingKey`'s.
                    _ = try? loop.postAndWait(timeout: .seconds(30)) { 0 }
                    pthread_setspecific(postingKey, UnsafeRawPointer(bitPattern: index))
                }
            }
            threads.join("a thread whose exit makes a blocking post")
            // The destructors run after the bodies returned, as the threads exit.
            let all = eventually {
                destructorResults.withValue { results in (1...total).allSatisfy { results[$0] != nil } }
            }
            #expect(all, "some exiting threads were never released from their blocking post")
            let wrong = destructorResults.withValue { results in
                (1...total).filter { results[$0] != $0 * 2 }.map { ($0, results[$0]) }
            }
            #expect(wrong.isEmpty, "\(wrong.count) destructors got a wrong result, first: \(wrong.prefix(3))")
            destructorResults.withValue { dictionary in for index in 1...total { dictionary[index] = nil } }
        }
    }
}
