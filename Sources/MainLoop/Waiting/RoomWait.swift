// RoomWait.swift: every post goes through `enqueue`, which acts on what the
// mailbox answers: wake the loop, or (a bounded mailbox that is full) wait
// for room, refuse, or admit anyway, as the post's policy says.

/// How a post behaves when a bounded mailbox is full.
@usableFromInline
enum RoomPolicy {
    /// Block until the loop makes room, or until the deadline (monotonic ns; nil: none).
    case wait(until: UInt64?)
    /// Throw `.full` at once.
    case refuse
    /// Never wait and never refuse for lack of room (Swift concurrency
    /// jobs and `perform`, which must not block a thread).
    case admit
}

extension EventLoop {
    /// Any thread: hands `job` to the mailbox, waking the loop when it sleeps.
    /// - Throws: the close reason (`.shutDown`) once the mailbox is closed;
    ///   with a bound, `.full`, `.timedOut` or `.deadlock` per `policy`.
    @usableFromInline
    func enqueue(_ job: Job, site: PostSite = .none, policy: RoomPolicy = .wait(until: nil)) throws(EventLoopError) {
        let offer: Mailbox.Offer
        if case .admit = policy {
            offer = try mailbox.admit(job, site: site)
        } else {
            offer = try mailbox.offer(job, site: site)
        }
        switch offer {
        case .queued: return
        case .queuedWakeLoop: wake()
        case .full: try enqueueWhenFull(job, site, policy)
        }
    }

    /// Any thread: hands `job` to the urgent lane (see `postUrgent`).
    @usableFromInline
    func enqueueUrgent(_ job: Job, site: PostSite) throws(EventLoopError) {
        if case .queuedWakeLoop = try mailbox.offerUrgent(job, site: site) { wake() }
    }

    /// The full-mailbox path. Posts from the loop's own thread are always
    /// admitted: the loop cannot wait for itself.
    private func enqueueWhenFull(_ job: Job, _ site: PostSite, _ policy: RoomPolicy) throws(EventLoopError) {
        if inLoop {
            if case .queuedWakeLoop = try mailbox.admit(job, site: site) { wake() }
            return
        }
        let deadline: UInt64?
        switch policy {
        case .admit: preconditionFailure("MainLoop: an admitted post found the mailbox full")
        case .refuse: throw .full
        case .wait(let until): deadline = until
        }
        // A loop thread waiting for room in another loop depends on that
        // loop, like a blocking post: the edge is recorded (unless the
        // blocking post this is part of did), a cycle refused.
        let caller = EventLoop.current.flatMap { WaitForGraph.target(of: $0) == nil ? $0 : nil }
        if let caller { try WaitForGraph.block(caller, on: self) }
        defer { if let caller { WaitForGraph.unblock(caller) } }
        let room = Completion<Void>()
        switch try mailbox.offer(job, site: site, orWaitWith: room) {
        case .queued: return
        case .queuedWakeLoop: wake()
        case .full: try room.waitForRoom(until: deadline) { self.mailbox.withdraw(room) }
        }
    }
}
