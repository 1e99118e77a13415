// Connection.swift: one client, served on its worker loop's thread.
//
// Reads are parsed into requests; each read's complete requests are one
// batch, which the worker sends to the core with the other batches of its
// loop turn (Worker.submit), and the replies come back the same way. Flow
// control: while a batch is unanswered, the connection submits
// nothing else (it keeps what it reads, and stops reading once that passes
// `pauseThreshold`), so a slow core slows its clients instead of growing
// memory. Pipelined replies keep request order because batches are answered
// one at a time.
//
// Its state is three enums, one per concern: `input` (are we reading),
// `exchange` (is a batch with the core) and `ending` (how it ends).
//
// With `--io-threads 0` the connection lives on the core loop, and a batch
// runs in place (CoreHop.executeHere): its replies arrive before `submit`
// returns. `processInput` then loops instead of recursing, so a client with
// many batches buffered costs no stack depth; the same states hold. What
// else differs between the two is ConnectionMode's, read in one place each.
//
// Back-pressure runs both ways. A batch goes to the core only while the
// client's unsent replies are under `outputLowWater`: a client that does not
// read its replies stops having its requests executed (and, once its input
// piles up, stops being read), so it cannot fill the core's mailbox or
// memory. The core hands back the part of a batch it did not run once the
// replies reached its byte budget; that part waits here like unread input.
// Above the output buffer limit (ServerOptions.outputBufferLimit) the
// client is disconnected.
import Glibc
import MainLoop

final class Connection: @unchecked Sendable {
    // `@unchecked Sendable`: every field is touched only on the worker loop's
    // thread. The connection travels through the core inside the closure
    // that answers it, and only that loop dereferences it.
    // `@exclusivity(unchecked)` on the fields a batch touches, for the same
    // reason (and no method reaches a field while an access to it is open):
    // the runtime's check was a measurable share of a request.

    /// Whether the connection reads its socket.
    enum Input {
        /// A read watch is armed.
        case reading
        /// Not reading for now (a batch is out and enough input waits); resumes after the replies.
        case paused
        /// No more input will be read: the peer sent EOF, or the worker is shutting down.
        /// Complete requests already read are still answered (an incomplete one is discarded).
        case ended
    }

    /// Whether a batch is with the core.
    enum Exchange {
        case idle
        /// Submitted; nothing else is submitted until its replies arrive.
        case awaiting
        /// The batch stopped at a blocking command that parked the client
        /// on the core: its reply comes later (`unparked`), and nothing else
        /// is submitted until then. If the peer closes meanwhile, the
        /// connection closes at once, as Redis frees a blocked client.
        case parked
    }

    /// How the connection ends.
    enum Ending: Equatable {
        case open
        /// A protocol error was found after the requests in flight; it is
        /// answered once they are, and then the connection closes.
        case protocolError(String)
        /// Close once everything queued is written (QUIT, a protocol error,
        /// the end of input, shutdown, a core that stopped).
        case afterFlush
        /// A cross-protocol request (`POST`, `Host:`: a browser tricked into
        /// talking to kvd) was read: the requests before it still run, as
        /// Redis runs them, but nothing more is answered, and the connection
        /// closes once they have run.
        case aborted
        /// Closed: the socket is gone; late replies are dropped.
        case closed
    }

    let fd: Int32
    /// The client's id on the core (CLIENT ID), unique for the server's life.
    let id: Int
    private unowned let worker: Worker
    /// The server's settings and fixed request limits, and the worker's
    /// read buffer, kept here: a request's path reads them (on each read
    /// event, and as replies are queued), and each access through the
    /// `unowned` worker and server loaded them strongly through a side
    /// table (both are targets of weak references): seven such loads, each
    /// a retain and a release, per unpipelined request, 3.6% of kvd's CPU
    /// (Kvd). The buffer is the worker's, which owns the loop that runs
    /// every read event, so it outlives them.
    private let settings: LiveSettings
    private let baseLimits: RESPLimits
    private let readBuffer: UnsafeMutableRawBufferPointer
    /// Where it runs: on the core loop or an I/O loop (its worker's mode).
    private let mode: ConnectionMode
    /// The way to the core: sessions, and batches run in place.
    private let hop: CoreHop
    /// Set by the core while the client has subscriptions: it is then held
    /// to the pub/sub output limit.
    private let subscriberMark = SubscriberMark()
    /// What CLIENT LIST shows of its I/O (published by `publishFigures`).
    private let figures = ConnectionFigures()
    @exclusivity(unchecked) private var parser: RESPParser
    private var readWatch: Watch?
    private var writeWatch: Watch?
    /// Unsent replies, oldest first; the first chunk is partly sent.
    @exclusivity(unchecked) private var outbound: [[UInt8]] = []
    @exclusivity(unchecked) private var outboundHead = 0
    @exclusivity(unchecked) private var outboundSent = 0
    /// Bytes in `outbound` not yet sent.
    @exclusivity(unchecked) private var outboundBytes = 0
    /// Requests the core handed back unexecuted (its byte budget was reached).
    @exclusivity(unchecked) private var heldBatch: RequestBatch?
    /// The parked command's reply when it came before the batch's own
    /// replies: the core serves a client parked earlier in the same job
    /// (another connection of this worker pushed in the same loop turn),
    /// and that reply's post goes out before the job's results.
    private var earlyResume: Replies?
    /// The batch being filled. On the core loop it points into the parser's
    /// buffer (no copy), is executed at once and refilled; a worker copies
    /// the arguments into it, hands it to the core and starts a new one.
    @exclusivity(unchecked) private var batch = RequestBatch()
    /// The client's MULTI as the core last reported it, and what this
    /// connection's answers did to it while a script was busy.
    @exclusivity(unchecked) private var transaction = TransactionShadow()
    /// The buffer of the last replies, once they were all sent: the next
    /// batch's replies are written into it (on the core loop).
    @exclusivity(unchecked) private var spareReplyBuffer: [UInt8] = []
    /// Monotonic ms since which the unsent replies have been above the soft limit.
    private var overSoftLimitSince: Int64?
    @exclusivity(unchecked) private var input = Input.paused
    @exclusivity(unchecked) private var exchange = Exchange.idle
    @exclusivity(unchecked) private var ending = Ending.open
    /// Reply bytes ever sent, and as of the last shutdown check (see `drain`).
    private var sentTotal = 0
    private var sentAtLastCheck = 0
    private var stallCheck: Scheduled?
    /// True while `processInput` runs; replies that arrive meanwhile (in
    /// place, on the core loop) ask it for another round instead of recursing.
    @exclusivity(unchecked) private var processing = false
    @exclusivity(unchecked) private var processAgain = false

    var isClosed: Bool { ending == .closed }

    /// Stop reading while a batch is out and this much input waits.
    static let pauseThreshold = 4 * 1024 * 1024
    /// Most requests in one submission to the core.
    static let maxBatch = 1024
    /// Submit nothing while more unsent reply bytes than this wait.
    static let outputLowWater = 1024 * 1024
    /// Most bytes of a large bulk received in one read (straight into it).
    static let largeBulkRead = 1024 * 1024
    /// Shutdown: a client whose replies made no progress for two of its
    /// round trips, and at least this many milliseconds, is not reading; it
    /// is closed, so the stop does not wait for it.
    static let shutdownStallFloor = 10
    /// Largest reply buffer kept for reuse (Redis keeps 16 KiB per client
    /// too); a larger one is let go, so idle clients hold little memory.
    static let spareReplyLimit = 16 * 1024

    /// True while the client's unsent replies hold further submissions back.
    private var outputBackedUp: Bool { outboundBytes > Connection.outputLowWater }

    /// The Unix socket's path when the client came through it (nil: TCP).
    private let unixPath: String?

    init(fd: Int32, id: Int, worker: Worker, unixPath: String? = nil) {
        self.fd = fd
        self.unixPath = unixPath
        self.id = id
        self.worker = worker
        self.mode = worker.mode
        self.hop = worker.server.hop
        self.settings = worker.server.settings
        self.baseLimits = worker.server.options.limits
        self.readBuffer = worker.readBuffer
        self.parser = RESPParser(limits: baseLimits)
    }

    /// Registers the client with the core, then starts reading.
    func start() throws {
        let loop = worker.loop
        try hop.connect(
            ClientInfo(
                // A Unix socket's clients are `path:0` at both ends, as in Redis.
                id: id, address: unixPath.map { "\($0):0" } ?? socketAddress(fd, peer: true),
                localAddress: unixPath.map { "\($0):0" } ?? socketAddress(fd, peer: false), fd: fd,
                viaUnixSocket: unixPath != nil,
                kill: { [mode] in
                    // A client that kills itself on the core loop (--io-threads
                    // 0) is marked inside its own batch, as Redis marks it to
                    // close after the reply: a posted kill would run after the
                    // loop's next reads, and its next request be answered.
                    if mode == .onCore && self.processing { self.kill() } else { try? loop.post { self.kill() } }
                },
                resume: { replies in try? loop.post { self.unparked(replies) } }, outlet: worker.outlet,
                subscriberMark: subscriberMark, figures: figures))
        try resumeReading()
    }

    /// CLIENT KILL: read nothing more, run nothing more, and close once the
    /// replies already due (the KILL's own, for a client killing itself)
    /// are written.
    private func kill() {
        guard ending != .closed else { return }
        ending = .afterFlush
        heldBatch = nil
        stopReading(.ended)
        if exchange == .parked { exchange = .idle }  // its reply will not be waited for
        if exchange == .idle { flush() }
    }

    private func resumeReading() throws {
        guard case .paused = input, ending == .open else { return }
        readWatch = try worker.loop.watch(fd: fd, for: .read) { [unowned self] _ in self.readable() }
        input = .reading
        publishFigures()
    }

    private func stopReading(_ next: Input) {
        readWatch?.cancel()
        readWatch = nil
        input = next
        publishFigures()
    }

    /// Tells the core's CLIENT LIST what only this loop knows.
    private func publishFigures() {
        figures.publish(
            unsentBytes: outboundBytes, unsentChunks: outbound.count - outboundHead,
            unreadBytes: parser.bufferedCount, reading: readWatch != nil, writing: writeWatch != nil)
    }

    /// Reads what the socket holds now (`mode.readsPerEvent` reads, unless
    /// `everything`). A large argument streaming in is read straight into
    /// its array, up to 1 MiB a read and 2 reads a turn: no copy through
    /// the read buffer, and 300 MB take about 150 turns of the loop (with 4
    /// a turn, a PING waiting behind one measured up to 4 ms; with 2, mostly
    /// about 2). Returns false when the peer closed or failed.
    private func readAvailable(everything: Bool = false) -> Bool {
        let buffer = readBuffer
        let most = parser.isReadingLargeBulk ? 2 : mode.readsPerEvent
        var reads = 0
        while everything || reads < most {
            reads += 1
            var direct = false, room = buffer.count
            let count =
                parser.receiveLargeBulk(atMost: Connection.largeBulkRead) { bulk in
                    (direct, room) = (true, bulk.count)
                    return read(fd, bulk.baseAddress, bulk.count)
                } ?? read(fd, buffer.baseAddress, buffer.count)
            if count > 0 {
                if !direct { parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
                if count < room && !everything { return true }
            } else if count == 0 {
                return false
            } else if errno == EINTR {
                continue
            } else {
                return errno == EAGAIN || errno == EWOULDBLOCK
            }
        }
        return true
    }

    private func readable() {
        if !readAvailable() {
            stopReading(.ended)
            if exchange == .parked { return close() }
        }
        // CONFIG SET's client-query-buffer-limit and proto-max-bulk-len
        // apply to open connections too.
        parser.limits = settings.requestLimits(baseLimits)
        processInput()
        if parser.bufferedCount > parser.limits.maxQueryBuffer {
            // Redis's client-query-buffer-limit: the client is closed, with
            // no reply (Redis logs it; so does kvd, once per connection).
            let limit = parser.limits.maxQueryBuffer
            let line = "kvd: closing client \(id) that reached the query buffer limit (\(limit) bytes)\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
            return close()
        }
        if exchange != .idle || outputBackedUp || heldBatch != nil,
            parser.bufferedCount > Connection.pauseThreshold, case .reading = input
        {
            stopReading(.paused)
        }
        publishFigures()
    }

    /// Submits batches of complete requests to the core while none is out
    /// and the client reads its replies. On a worker loop that is one batch
    /// (its replies come later); on the core loop, every batch whose replies
    /// came in place is followed by the next.
    private func processInput() {
        if processing {
            processAgain = true
        } else if submitBatches() {
            afterReplies()
        }
    }

    /// The loop of `processInput`; true when some replies came in place.
    private func submitBatches() -> Bool {
        processing = true
        var answeredInPlace = false
        repeat {
            processAgain = false
            submitNextBatch()
            answeredInPlace = answeredInPlace || processAgain
        } while processAgain
        processing = false
        return answeredInPlace
    }

    /// Submits the next batch of complete requests to the core, if none is
    /// out and the client reads its replies: first what the core handed
    /// back, then what the parser has.
    private func submitNextBatch() {
        guard exchange == .idle, !outputBackedUp, ending != .closed else { return }
        if let held = heldBatch {
            heldBatch = nil
            submit(held)
            return
        }
        guard ending == .open else { return }
        batch.removeAll(releasing: Reclaimer.release)
        parsing: while batch.count < Connection.maxBatch {
            switch parser.nextRequest(into: &batch, sharing: mode.batchSharesParserBuffer) {
            case .appended:
                if batch.lastRequestIs("quit") {
                    ending = .afterFlush
                    break parsing
                }
                if batch.lastRequestIs("post") || batch.lastRequestIs("host:") {
                    batch.removeLastRequest()
                    CrossProtocolGuard.report()
                    ending = .aborted
                    break parsing
                }
            case .incomplete:
                break parsing
            case .protocolError(let message):
                ending = .protocolError(message)
                break parsing
            }
        }
        if batch.count == 0 {
            finishIfDone()
            return
        }
        submit(batch)
    }

    private func submit(_ batch: consuming RequestBatch) {
        exchange = .awaiting
        // A script holds the core past its busy threshold: Redis's answers
        // come from here, now, instead of a late run after the script.
        if let replies = hop.scripts.answer(batch, transaction: &transaction) {
            _ = consume batch  // see `hand`
            self.batch.removeAll(releasing: Reclaimer.release)
            return receive(replies, rest: nil)
        }
        // Rare: a MULTI, EXEC or DISCARD answered while a script was busy.
        // Set on this copy only: the connection's batch never carries them.
        if let changes = transaction.takeChanges() { batch.transactionChanges = changes }
        hand(batch)
    }

    /// Hands `batch` to the core: runs it in place, or posts it from a worker.
    private func hand(_ batch: consuming RequestBatch) {
        switch mode {
        case .onCore:
            let (replies, rest, parked) = hop.executeHere(batch, from: id, replyBuffer: &spareReplyBuffer)
            // This copy gone, the connection's batch holds its arrays alone
            // again and empties them in place; with the copy alive each
            // `removeAll(keepingCapacity:)` allocated a new buffer, two
            // allocations and two frees a batch, and a large owned argument
            // could lose its last reference here instead of on the
            // reclaiming thread (Reclaimer).
            _ = consume batch
            // Let go of the parser's buffer before it takes more bytes.
            self.batch.removeAll(releasing: Reclaimer.release)
            receive(replies, rest: rest, parked: parked)
        case .onIOLoop:
            self.batch = RequestBatch()  // the core has this one now
            worker.submit(batch, from: self)
        }
    }

    /// `--io-threads 0`, while a script is busy on the core: reads and
    /// answers what the client sent (ScriptActivity.answer), unless a batch
    /// of its own is with the core (the script's caller, whose batch points
    /// into the parser's buffer: it is not read until the script returns).
    func serveWhileScriptBusy() {
        guard exchange == .idle, case .reading = input else { return }
        readable()
    }

    /// The batch in flight will get no reply (the core or the worker's loop
    /// stopped): answer nothing more, and close once the output is written.
    func coreRefused() {
        exchange = .idle
        ending = .afterFlush
        flush()
    }

    /// Replies for the batch in flight, and the requests the core did not
    /// run; `parked`: the batch stopped at a blocking command, whose reply
    /// comes later (`unparked`).
    func receive(_ replies: Replies, rest: RequestBatch?, parked: Bool = false) {
        let resumed = parked ? earlyResume : nil
        earlyResume = nil
        let parked = parked && resumed == nil
        exchange = parked ? .parked : .idle
        transaction.open = replies.inTransaction
        guard ending != .closed else { return }  // the peer went away meanwhile
        heldBatch = rest
        if ending != .aborted {
            queue(replies)
            if let resumed { queue(resumed) }  // the parked command's reply, which came first
        }
        guard ending != .closed else { return }  // over the output limit
        flush()
        guard ending != .closed, !parked else {
            // The peer's EOF came while the batch was out: a parked client
            // that is gone is closed, its replies so far written.
            if parked, ending != .closed, case .ended = input { close() }
            return
        }
        continueAfterOutput()
    }

    /// The reply of the parked blocking command: the connection goes on
    /// with the requests after it.
    func unparked(_ replies: Replies) {
        guard ending != .closed else { return }
        guard exchange == .parked else {
            if exchange == .awaiting { earlyResume = replies }  // the batch's own replies are on their way
            return
        }
        exchange = .idle
        queue(replies)
        guard ending != .closed else { return }
        flush()
        guard ending != .closed else { return }
        continueAfterOutput()
    }

    /// After replies were queued or written: submit what is due next, or
    /// end the connection if nothing is. Inside `processInput` (replies that
    /// came in place) it only asks that loop for another round.
    private func continueAfterOutput() {
        if processing {
            processAgain = true
            return
        }
        _ = submitBatches()  // what the core handed back, or the next batch, already buffered
        afterReplies()
    }

    private func afterReplies() {
        if heldBatch == nil && exchange == .idle { finishIfDone() }
        if exchange == .idle && !outputBackedUp { try? resumeReading() }
    }

    /// Nothing is in flight and nothing more will be submitted from what is
    /// buffered: answer a pending protocol error, or close a connection whose
    /// input ended, as due.
    private func finishIfDone() {
        guard exchange == .idle, heldBatch == nil else { return }
        switch ending {
        case .protocolError(let message):
            let error = Array("-ERR Protocol error: \(message)\r\n".utf8)
            ending = .afterFlush
            queue(Replies(sealed: [], last: error, byteCount: error.count))
        case .open:
            if case .ended = input { ending = .afterFlush }
        case .aborted:
            return close()  // what is still queued is dropped, as Redis drops it
        case .afterFlush, .closed: break
        }
        flush()
    }

    private func queue(_ replies: Replies) {
        if replies.passedLimit {
            return disconnectOverLimit(outboundBytes + replies.byteCount, "hard limit \(outputLimit.hard)")
        }
        for chunk in replies.sealed where !chunk.isEmpty { outbound.append(chunk) }
        if !replies.last.isEmpty { outbound.append(replies.last) }
        outboundBytes += replies.byteCount
        enforceOutputLimit()
    }

    /// This client's class's output limit now: pubsub's for a subscriber.
    private var outputLimit: ServerOptions.OutputBufferLimit {
        subscriberMark.isSubscriber ? settings.pubsubOutputBufferLimit : settings.outputBufferLimit
    }

    /// Redis's client-output-buffer-limit: every reply byte not yet sent
    /// counts, as in Redis (so a single reply larger than the hard limit
    /// closes the client too).
    private func enforceOutputLimit() {
        let limit = outputLimit
        let waiting = outboundBytes
        if limit.hard > 0 && waiting > limit.hard {
            disconnectOverLimit(waiting, "hard limit \(limit.hard)")
            return
        }
        guard limit.soft > 0, waiting > limit.soft else {
            overSoftLimitSince = nil
            return
        }
        let now = monotonicMilliseconds()
        let since = overSoftLimitSince ?? now
        overSoftLimitSince = since
        if now - since > Int64(limit.softSeconds) * 1000 {
            disconnectOverLimit(waiting, "soft limit \(limit.soft) for \(limit.softSeconds) s")
        }
    }

    /// Pushes from the core (pub/sub messages, MONITOR lines), written
    /// after whatever is queued, whatever the exchange with the core: they
    /// are not replies to anything. They count against the output limit
    /// like replies, so a subscriber that does not read is cut off.
    func push(_ bytes: [UInt8]) {
        guard ending != .closed, ending != .aborted else { return }
        outbound.append(bytes)
        outboundBytes += bytes.count
        enforceOutputLimit()
        flush()
    }

    /// One core job's pushes alone passed the hard limit: they were
    /// dropped on the core, and the client is cut off here.
    func disconnectOverPushLimit() {
        guard ending != .closed else { return }
        disconnectOverLimit(outboundBytes, "hard limit \(settings.pubsubHard.load(ordering: .relaxed))")
    }

    private func disconnectOverLimit(_ waiting: Int, _ which: String) {
        worker.server.outputLimitDisconnected(
            "kvd: closing client fd \(fd): \(waiting) bytes of replies unsent, over the \(which)")
        outbound = []
        outboundHead = 0
        outboundSent = 0
        outboundBytes = 0
        heldBatch = nil
        close()
    }

    /// Writes what it can; waits for writability for the rest.
    private func flush() {
        guard ending != .closed else { return }
        // Nothing queued and nothing waiting to be written (the second flush
        // of a request's turn, after the parser found no more): only the
        // figures and a pending close.
        if outbound.isEmpty && writeWatch == nil && overSoftLimitSince == nil {
            publishFigures()
            if ending == .afterFlush && exchange == .idle && heldBatch == nil { close() }
            return
        }
        while outboundHead < outbound.count {
            let chunk = outbound[outboundHead]
            let written = chunk.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + outboundSent, bytes.count - outboundSent, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                outboundSent += written
                sentTotal += written
                outboundBytes -= written
                if outboundSent == chunk.count {
                    outboundHead += 1
                    outboundSent = 0
                }
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                compactOutbound()
                if writeWatch == nil {
                    writeWatch = try? worker.loop.watch(fd: fd, for: .write) { [unowned self] _ in
                        self.writable()
                    }
                }
                if overSoftLimitSince != nil { enforceOutputLimit() }
                publishFigures()
                return
            } else {
                close()  // the peer is gone: replies still due are dropped
                return
            }
        }
        // Everything was sent: keep the last buffer (if it is of a modest
        // size) for the next batch's replies.
        if mode.reusesReplyBuffer, let last = outbound.last, last.capacity <= Connection.spareReplyLimit {
            spareReplyBuffer = last
        }
        outbound.removeAll(keepingCapacity: true)
        outboundHead = 0
        outboundSent = 0
        overSoftLimitSince = nil
        writeWatch?.cancel()
        writeWatch = nil
        publishFigures()
        if ending == .afterFlush && exchange == .idle && heldBatch == nil { close() }
    }

    /// Drops the chunks already sent.
    private func compactOutbound() {
        guard outboundHead > 0 else { return }
        outbound.removeFirst(outboundHead)
        outboundHead = 0
    }

    /// The socket took more: write, and if the client caught up, go on with
    /// what was held back.
    private func writable() {
        let wasBackedUp = outputBackedUp
        flush()
        guard ending != .closed else { return }
        if wasBackedUp && !outputBackedUp || heldBatch != nil { continueAfterOutput() }
    }

    /// Shutdown: take what the socket already holds, stop reading, answer
    /// every complete request read, then close. A client that takes none of
    /// its replies for `shutdownStallMilliseconds` is closed (Redis waits for no
    /// client): the stop then waits only for clients that read.
    func drain() {
        guard ending != .closed else { return }
        if exchange == .parked { return close() }  // Redis does not wait for a blocked client either
        if input != .ended { _ = readAvailable(everything: true) }
        stopReading(.ended)
        processInput()
        finishIfDone()
        guard ending != .closed, stallCheck == nil else { return }
        sentAtLastCheck = sentTotal
        let limit = shutdownStallMilliseconds
        stallCheck = try? worker.loop.schedule(every: .milliseconds(limit)) { [unowned self] in
            if self.outboundBytes > 0 && self.sentTotal == self.sentAtLastCheck {
                self.worker.server.log(
                    "kvd: closing client fd \(self.fd) at shutdown: \(self.outboundBytes) bytes of replies unsent, none taken for \(limit) ms"
                )
                // Nothing of self after this: closing lets the worker drop
                // the connection, and `self` is unowned here.
                return self.close()
            }
            self.sentAtLastCheck = self.sentTotal
        }
    }

    /// How long this client may take none of its replies at shutdown: two
    /// round trips by the kernel's smoothed estimate, at least
    /// `shutdownStallFloor`. A client that reads frees its receive window
    /// as it reads, and the window update reaches us within a round trip:
    /// within microseconds on loopback, a few hundred milliseconds across
    /// the world. (A client that stopped reading inflates the estimate: on
    /// loopback it measured 5 ms.) The stop's own budget
    /// (`--shutdown-timeout`) bounds the wait either way.
    private var shutdownStallMilliseconds: Int {
        var info = tcp_info()
        var size = socklen_t(MemoryLayout<tcp_info>.size)
        let rtt = getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &size) == 0 ? Int(info.tcpi_rtt) : 25_000
        return max(Connection.shutdownStallFloor, 2 * rtt / 1000)
    }

    func close() {
        guard ending != .closed else { return }
        ending = .closed
        stopReading(.ended)
        writeWatch?.cancel()
        writeWatch = nil
        stallCheck?.cancel()
        stallCheck = nil
        Glibc.close(fd)
        hop.disconnect(id)
        worker.connectionClosed(self)
    }
}

/// `ip:port` (`[ip]:port` for IPv6, as Redis writes it) of a socket's peer
/// or of its local end ("" if unknown).
private func socketAddress(_ fd: Int32, peer: Bool) -> String {
    var address = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let found = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
        }
    }
    guard found == 0 else { return "" }
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    return withUnsafeBytes(of: &address) { raw -> String in
        let ip: String
        let port: UInt16
        switch Int32(raw.load(as: sockaddr.self).sa_family) {
        case AF_INET:
            var ipv4 = raw.load(as: sockaddr_in.self)
            guard inet_ntop(AF_INET, &ipv4.sin_addr, &text, socklen_t(text.count)) != nil else { return "" }
            ip = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            port = UInt16(bigEndian: ipv4.sin_port)
        case AF_INET6:
            var ipv6 = raw.load(as: sockaddr_in6.self)
            guard inet_ntop(AF_INET6, &ipv6.sin6_addr, &text, socklen_t(text.count)) != nil else { return "" }
            ip = "[" + String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "]"
            port = UInt16(bigEndian: ipv6.sin6_port)
        default: return ""
        }
        return "\(ip):\(port)"
    }
}
