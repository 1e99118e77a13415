// Connection.swift: one client, served on its worker loop's thread.
//
// Reads are parsed into requests; each read's complete requests go to the
// core in one post, and the core posts the replies back. Flow control: while
// a batch is unanswered, the connection posts nothing else (it keeps what it
// reads, and stops reading once that passes `pauseThreshold`), so a slow
// core slows its clients instead of growing memory. Pipelined replies keep
// request order because batches are answered one at a time.
import Glibc
import MainLoop

final class Connection: @unchecked Sendable {
    // `@unchecked Sendable`: every field is touched only on the worker loop's
    // thread. The connection travels through the core inside the closure
    // that answers it, and only that loop dereferences it.
    let fd: Int32
    private unowned let worker: Worker
    private var parser: RESPParser
    private var readWatch: Watch?
    private var writeWatch: Watch?
    private var outbound: [UInt8] = []
    private var outboundSent = 0
    /// A batch is with the core.
    private var awaitingReplies = false
    /// A protocol error follows the batch in flight (or is due now).
    private var pendingProtocolError: String?
    /// Close once everything queued is written (QUIT, protocol error, shutdown).
    private var closeAfterFlush = false
    /// Writing failed (the peer is gone): drop replies still due and close.
    private var peerGone = false
    /// The peer sent EOF: answer the complete requests it sent, then close
    /// (an incomplete trailing request is discarded).
    private var inputClosed = false
    /// The worker is shutting down: answer what was read, then close.
    private var draining = false
    private(set) var isClosed = false

    /// Stop reading while a batch is out and this much input waits.
    static let pauseThreshold = 4 * 1024 * 1024
    /// Most requests in one post to the core.
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
        guard readWatch == nil, !isClosed, !draining else { return }
        readWatch = try worker.loop.watch(fd: fd, for: .read) { [unowned self] _ in self.readable() }
    }

    private func pauseReading() {
        readWatch?.cancel()
        readWatch = nil
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
        if !readAvailable() {
            inputClosed = true
            pauseReading()
        }
        processInput()
        if awaitingReplies && parser.bufferedCount > Connection.pauseThreshold { pauseReading() }
    }

    /// Sends the next batch of complete requests to the core, if none is out.
    private func processInput() {
        guard !awaitingReplies, !isClosed, !closeAfterFlush else { return }
        var batch = RequestBatch()
        parsing: while batch.count < Connection.maxBatch {
            let name = batch.arguments.count
            switch parser.nextArguments(into: &batch.arguments) {
            case .appended:
                batch.endRequest()
                if equalsIgnoringCase(batch.arguments[name], "quit") {
                    closeAfterFlush = true
                    break parsing
                }
            case .incomplete:
                break parsing
            case .protocolError(let message):
                pendingProtocolError = message
                break parsing
            }
        }
        if batch.count == 0 {
            finishIfDone()
            return
        }
        awaitingReplies = true
        let requests = batch
        let worker = self.worker
        do {
            try worker.server.core.post { [keyspace = worker.server.keyspace] in
                let replies = keyspace.value.execute(requests)
                do {
                    try worker.loop.post { self.receive(replies) }
                } catch {
                    // The worker stopped (the server is shutting down hard): nobody to answer.
                }
            }
        } catch {
            // The core stopped: no reply will come for this batch.
            awaitingReplies = false
            closeAfterFlush = true
            flush()
        }
    }

    /// Replies for the batch in flight.
    private func receive(_ replies: [UInt8]) {
        awaitingReplies = false
        if peerGone {
            close()
            return
        }
        queue(replies)
        if pendingProtocolError == nil && !closeAfterFlush {
            processInput()  // the next batch, already buffered
        } else {
            finishIfDone()
        }
        flush()
        if !awaitingReplies && !isClosed && !inputClosed { try? resumeReading() }
    }

    /// Nothing is in flight and nothing more will be sent to the core from
    /// what is buffered: answer a pending protocol error, or close a
    /// connection whose input ended or which is draining, as due.
    private func finishIfDone() {
        guard !awaitingReplies else { return }
        if let message = pendingProtocolError {
            pendingProtocolError = nil
            queue(Array("-ERR Protocol error: \(message)\r\n".utf8))
            closeAfterFlush = true
        } else if draining || inputClosed {
            closeAfterFlush = true
        }
        flush()
    }

    private func queue(_ bytes: [UInt8]) {
        if outbound.isEmpty { outbound = bytes } else { outbound.append(contentsOf: bytes) }
    }

    /// Writes what it can; waits for writability for the rest.
    private func flush() {
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
                peerGone = true
                close()
                return
            }
        }
        outbound.removeAll(keepingCapacity: outbound.capacity <= 64 * 1024)
        outboundSent = 0
        writeWatch?.cancel()
        writeWatch = nil
        if closeAfterFlush && !awaitingReplies { close() }
    }

    /// Shutdown: take what the socket already holds, stop reading, answer
    /// every complete request read, then close.
    func drain() {
        guard !isClosed else { return }
        draining = true
        if !inputClosed && !readAvailable(everything: true) { inputClosed = true }
        pauseReading()
        processInput()
        finishIfDone()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        readWatch?.cancel()
        writeWatch?.cancel()
        readWatch = nil
        writeWatch = nil
        Glibc.close(fd)
        worker.connectionClosed(self)
    }
}
