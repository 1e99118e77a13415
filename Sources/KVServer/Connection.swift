// Connection.swift: one client, served on its worker loop's thread.
//
// Reads are parsed into requests; each read's complete requests go to the
// core in one submission (Core.submit), and the core posts the replies
// back. Flow control: while a batch is unanswered, the connection submits
// nothing else (it keeps what it reads, and stops reading once that passes
// `pauseThreshold`), so a slow core slows its clients instead of growing
// memory. Pipelined replies keep request order because batches are answered
// one at a time.
//
// Its state is three enums, one per concern: `input` (are we reading),
// `exchange` (is a batch with the core) and `ending` (how it ends).
import Glibc
import MainLoop

final class Connection: @unchecked Sendable {
    // `@unchecked Sendable`: every field is touched only on the worker loop's
    // thread. The connection travels through the core inside the closure
    // that answers it, and only that loop dereferences it.

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
        /// Closed: the socket is gone; late replies are dropped.
        case closed
    }

    let fd: Int32
    private unowned let worker: Worker
    private var parser: RESPParser
    private var readWatch: Watch?
    private var writeWatch: Watch?
    private var outbound: [UInt8] = []
    private var outboundSent = 0
    private var input = Input.paused
    private var exchange = Exchange.idle
    private var ending = Ending.open

    var isClosed: Bool { ending == .closed }

    /// Stop reading while a batch is out and this much input waits.
    static let pauseThreshold = 4 * 1024 * 1024
    /// Most requests in one submission to the core.
    static let maxBatch = 1024

    init(fd: Int32, worker: Worker, limits: RESPLimits) {
        self.fd = fd
        self.worker = worker
        self.parser = RESPParser(limits: limits)
    }

    func start() throws {
        try resumeReading()
    }

    private func resumeReading() throws {
        guard case .paused = input, ending == .open else { return }
        readWatch = try worker.loop.watch(fd: fd, for: .read) { [unowned self] _ in self.readable() }
        input = .reading
    }

    private func stopReading(_ next: Input) {
        readWatch?.cancel()
        readWatch = nil
        input = next
    }

    /// Reads what the socket holds now (at most 16 reads, so one busy client
    /// cannot monopolise its worker, unless `everything`). Returns false
    /// when the peer closed or failed.
    private func readAvailable(everything: Bool = false) -> Bool {
        let buffer = worker.readBuffer
        var reads = 0
        while everything || reads < 16 {
            reads += 1
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count > 0 {
                parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                if count < buffer.count && !everything { return true }
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
        if !readAvailable() { stopReading(.ended) }
        processInput()
        if exchange == .awaiting && parser.bufferedCount > Connection.pauseThreshold, case .reading = input {
            stopReading(.paused)
        }
    }

    /// Submits the next batch of complete requests to the core, if none is out.
    private func processInput() {
        guard exchange == .idle, ending == .open else { return }
        var batch = RequestBatch()
        parsing: while batch.count < Connection.maxBatch {
            let name = batch.arguments.count
            switch parser.nextArguments(into: &batch.arguments) {
            case .appended:
                batch.endRequest()
                if equalsIgnoringCase(batch.arguments[name], "quit") {
                    ending = .afterFlush
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
        exchange = .awaiting
        do {
            try worker.server.hop.submit(batch, replyOn: worker.loop) { replies in self.receive(replies) }
        } catch {
            // The core stopped: no reply will come for this batch.
            exchange = .idle
            ending = .afterFlush
            flush()
        }
    }

    /// Replies for the batch in flight.
    private func receive(_ replies: [UInt8]) {
        exchange = .idle
        guard ending != .closed else { return }  // the peer went away meanwhile
        queue(replies)
        if ending == .open {
            processInput()  // the next batch, already buffered
        } else {
            finishIfDone()
        }
        flush()
        if exchange == .idle { try? resumeReading() }
    }

    /// Nothing is in flight and nothing more will be submitted from what is
    /// buffered: answer a pending protocol error, or close a connection whose
    /// input ended, as due.
    private func finishIfDone() {
        guard exchange == .idle else { return }
        switch ending {
        case .protocolError(let message):
            queue(Array("-ERR Protocol error: \(message)\r\n".utf8))
            ending = .afterFlush
        case .open:
            if case .ended = input { ending = .afterFlush }
        case .afterFlush, .closed: break
        }
        flush()
    }

    private func queue(_ bytes: [UInt8]) {
        if outbound.isEmpty { outbound = bytes } else { outbound.append(contentsOf: bytes) }
    }

    /// Writes what it can; waits for writability for the rest.
    private func flush() {
        guard ending != .closed else { return }
        while outboundSent < outbound.count {
            let written = outbound.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + outboundSent, bytes.count - outboundSent, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                outboundSent += written
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                if writeWatch == nil {
                    writeWatch = try? worker.loop.watch(fd: fd, for: .write) { [unowned self] _ in self.flush() }
                }
                return
            } else {
                close()  // the peer is gone: replies still due are dropped
                return
            }
        }
        outbound.removeAll(keepingCapacity: outbound.capacity <= 64 * 1024)
        outboundSent = 0
        writeWatch?.cancel()
        writeWatch = nil
        if ending == .afterFlush && exchange == .idle { close() }
    }

    /// Shutdown: take what the socket already holds, stop reading, answer
    /// every complete request read, then close.
    func drain() {
        guard ending != .closed else { return }
        if input != .ended { _ = readAvailable(everything: true) }
        stopReading(.ended)
        processInput()
        finishIfDone()
    }

    func close() {
        guard ending != .closed else { return }
        ending = .closed
        stopReading(.ended)
        writeWatch?.cancel()
        writeWatch = nil
        Glibc.close(fd)
        worker.connectionClosed(self)
    }
}
