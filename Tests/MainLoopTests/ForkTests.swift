// ForkTests.swift: fork() with live loops (Guarantees.md, "Processes that
// fork"), in a child process of its own (mainloop-test-helper), so that the
// test runner's threads are not the ones forked.
import Glibc
import Testing

/// The sanitizers' runtimes do not support a multithreaded process's fork
/// child that starts threads: under ThreadSanitizer a child now and then
/// hangs in Swift's runtime (a one-time initialisation another thread held
/// at the fork, seen with gdb), and under AddressSanitizer one hung too
/// (not investigated yet); neither happens without them (600 children in a
/// row). The fork tests run in every other build.
private let underSanitizer = dlsym(nil, "__tsan_init") != nil || dlsym(nil, "__asan_init") != nil

@Suite(
    .timeLimit(.minutes(5)), .disabled(if: underSanitizer, "fork children are not supported by the sanitizers"))
struct ForkTests {
    @Test func aForkedChildIsRefusedByItsParentsLoopsAtOnceAndRunsLoopsOfItsOwn() throws {
        let run = try runHelper("fork-with-live-loops")
        #expect(run.exit == .exited(0), "\(run.output)")
        #expect(run.output.contains("children=40 hung=0 failed=0\n"), "\(run.output)")
        // Every child cancelled the watcher: the parent's still fires.
        #expect(run.output.contains("watcher-reads=3 ticking=true\n"), "\(run.output)")
        #expect(run.output.contains("posts-exact=true "), "\(run.output)")
        #expect(run.output.hasSuffix("OK\n"), "\(run.output)")
    }

    @Test func aChildThatReturnsIntoItsParentsLoopStopsWithTheReason() throws {
        let run = try runHelper("fork-then-return-into-loop")
        #expect(run.exit == .exited(0), "\(run.output)")
        #expect(run.output.contains("child-signalled\n"), "\(run.output)")
        #expect(run.output.contains("a child of fork() returned into its parent's event loop"), "\(run.output)")
        #expect(run.output.hasSuffix("OK\n"), "\(run.output)")
    }
}
