// ResourceLimitTests.swift: EMFILE at every descriptor a loop makes, and on
// `watch`, in a child process with a lowered fd limit
// (mainloop-test-helper fd-limits).
import Testing

@Suite(.timeLimit(.minutes(5))) struct ResourceLimitTests {
    // With 0 to 5 descriptors left, making a loop throws a system error that
    // names the call, and gives every descriptor it took back; with 6 it
    // works. (libevent itself exits the process when its signal socketpair
    // cannot be made: with 1 to 4 left, that ended the helper with exit(1)
    // before the loop checked for room.) A loop made earlier still takes
    // posts and watches a pipe with no descriptor left.
    @Test func atTheFdLimitMakingALoopThrowsAndLeaksNothingAndARunningLoopStillPostsAndWatches() throws {
        let (exit, output) = try runHelper("fd-limits")
        #expect(exit == .exited(0), "\(exit): \(output)")
        let expected = [
            "free=0 error call=eventfd errno=24 leaked=0",
            "free=1 error call=event_base_new errno=24 leaked=0",
            "free=2 error call=event_base_new errno=24 leaked=0",
            "free=3 error call=event_base_new errno=24 leaked=0",
            "free=4 error call=event_base_new errno=24 leaked=0",
            "free=5 error call=event_base_new errno=24 leaked=0",
            "free=6 made ran=1",
            "at_limit post=42 watch_reads=1",
            "OK",
        ]
        #expect(output.split(separator: "\n").map(String.init) == expected, "\(output)")
    }
}
