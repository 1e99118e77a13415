// Core.swift: the one hop between the I/O loops and the core. A worker
// submits a batch of requests; the core executes it against the dispatcher
// (which it owns, as a LoopBound: no lock, no `@unchecked`), and posts the
// replies back to the worker's loop.
import MainLoop

/// The core loop and the dispatcher that lives on it.
public struct Core: Sendable {
    /// The loop that owns the dispatcher and its keyspace.
    public let loop: EventLoop
    /// The dispatcher, reachable from any thread only through its loop.
    public let dispatcher: LoopBound<Dispatcher>
    /// The dispatcher's figures, readable from any thread.
    public let counters: DispatcherCounters

    /// A core on `loop` with a new dispatcher.
    public init(on loop: EventLoop, serverInfo: @escaping @Sendable () -> [(section: String, lines: [String])]) {
        self.loop = loop
        let dispatcher = Dispatcher(serverInfo: serverInfo)
        self.counters = dispatcher.counters
        self.dispatcher = LoopBound(dispatcher, on: loop)
    }

    /// Any thread: executes `batch` on the core, then calls `deliver` with
    /// the replies on `replyLoop`, and with the requests the core did not
    /// run because the replies reached the dispatcher's byte budget (submit
    /// them again once the replies are written). If `replyLoop` has stopped
    /// by then, the replies are dropped: there is nobody left to answer.
    /// - Throws: ``EventLoopError/shutDown`` when the core has stopped: no
    ///   reply will come.
    public func submit(
        _ batch: RequestBatch, replyOn replyLoop: EventLoop,
        _ deliver: @escaping @Sendable (Replies, RequestBatch?) -> Void
    ) throws {
        try dispatcher.post { dispatcher in
            let (replies, rest) = dispatcher.execute(batch)
            try? replyLoop.post { deliver(replies, rest) }
        }
    }
}
