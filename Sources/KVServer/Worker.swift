// Worker.swift: one I/O loop: its listening socket (SO_REUSEPORT, so the
// kernel spreads connections over the workers) and its connections.
import Glibc
import MainLoop

final class Worker: @unchecked Sendable {
    // `@unchecked Sendable`: after `init`, every mutable field is touched
    // only on `loop`'s thread (the server reaches a worker by posting to it).
    let loop: EventLoop
    unowned let server: Server
    private var listenFD: Int32 = -1
    private var acceptWatch: Watch?
    private var connections: [Int32: Connection] = [:]
    private var shuttingDown = false
    private var reportedDone = false
    /// One read buffer per worker, reused by all its connections.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    init(index: Int, server: Server) throws {
        self.loop = try EventLoop.spawn(name: "kvd-io-\(index)")
        self.server = server
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Loop thread: starts accepting on a socket bound to the server's address.
    func listen(on fd: Int32) throws {
        listenFD = fd
        acceptWatch = try loop.watch(fd: fd, for: .read) { [unowned self] _ in self.acceptAll() }
    }

    private func acceptAll() {
        for _ in 0..<64 {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 { return }  // EAGAIN (another worker won the race), or a transient error
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            guard server.admitClient() else {
                let refusal = Array("-ERR max number of clients reached\r\n".utf8)
                _ = refusal.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let connection = Connection(fd: fd, worker: self, limits: server.options.limits)
            connections[fd] = connection
            do {
                try connection.start()
            } catch {
                connection.close()
            }
        }
    }

    func connectionClosed(_ connection: Connection) {
        connections[connection.fd] = nil
        server.clientClosed()
        reportIfDone()
    }

    /// Loop thread: stop accepting, answer what every connection has read, close them.
    func beginShutdown() {
        shuttingDown = true
        acceptWatch?.cancel()
        acceptWatch = nil
        if listenFD >= 0 {
            close(listenFD)
            listenFD = -1
        }
        for connection in Array(connections.values) { connection.drain() }
        reportIfDone()
    }

    private func reportIfDone() {
        guard shuttingDown, connections.isEmpty, !reportedDone else { return }
        reportedDone = true
        server.workerFinished()
    }
}
