// Worker.swift: one I/O loop: its listening sockets (one per bound address,
// each with SO_REUSEPORT, so the kernel spreads connections over the
// workers; the first worker's also the Unix socket) and its connections.
// With `--io-threads 0` the one worker serves I/O on the core loop itself.
import Glibc
import MainLoop

final class Worker: @unchecked Sendable {
    // `@unchecked Sendable`: after `init`, every mutable field is touched
    // only on `loop`'s thread (the server reaches a worker by posting to it).
    let loop: EventLoop
    /// Where its connections run: on the core loop (`--io-threads 0`), with
    /// no hop, or on an I/O loop of its own.
    let mode: ConnectionMode
    unowned let server: Server
    /// One socket it accepts on.
    private struct Listener {
        let fd: Int32
        /// The Unix socket's path (nil: TCP).
        let unixPath: String?
        var watch: Watch?
    }
    private var listeners: [Listener] = []
    /// Its connections, by client id.
    private var connections: [Int: Connection] = [:]
    /// This turn's submissions, sent to the core together (see `submit`).
    private var outgoing: [(connection: Connection, batch: RequestBatch)] = []
    private var shuttingDown = false
    private var reportedDone = false
    /// One read buffer per worker, reused by all its connections.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    /// A descriptor held in reserve for the fd limit (see `refuseAtFdLimit`).
    private var reserveFD: Int32 = open("/dev/null", O_RDONLY | O_CLOEXEC)
    /// The door through which the core sends its connections' pushes.
    private(set) lazy var outlet = makeOutlet()

    /// A worker on a loop of its own.
    init(index: Int, server: Server) throws {
        self.loop = try EventLoop.spawn(name: "kvd-io-\(index)")
        self.mode = .onIOLoop
        self.server = server
    }

    /// The one worker of `--io-threads 0`, on the core loop.
    init(onCoreOf server: Server) {
        self.loop = server.coreLoop
        self.mode = .onCore
        self.server = server
    }

    /// True when the worker serves on the core loop, not a loop of its own.
    var servesOnCore: Bool { mode == .onCore }

    deinit {
        readBuffer.deallocate()
        if reserveFD >= 0 { close(reserveFD) }
    }

    /// Loop thread: starts accepting on sockets bound to the server's
    /// addresses (`unixPath`: the path of the one that is a Unix socket).
    func listen(on fds: [Int32], unixPath: (fd: Int32, path: String)? = nil) throws {
        listeners = fds.map { Listener(fd: $0, unixPath: $0 == unixPath?.fd ? unixPath?.path : nil) }
        try watchListeners()
        if servesOnCore {
            // Posted, as this may run before the core loop does.
            try server.hop.dispatcher.post { [unowned self] in
                $0.scripts.serveClientsWhileBusy = { [unowned self] in self.serveWhileScriptBusy() }
            }
        }
    }

    /// `--io-threads 0`, from the Lua hook while a script is busy (the core
    /// loop cannot turn, and libevent's loop cannot be re-entered): one
    /// poll of the listening socket and the connections, without waiting;
    /// new clients are accepted, and what the others sent is answered as
    /// Redis answers during a busy script (Connection.serveWhileScriptBusy).
    private func serveWhileScriptBusy() {
        let serving = Array(connections.values)
        var watched = listeners.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        watched += serving.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        guard poll(&watched, nfds_t(watched.count), 0) > 0 else { return }
        for index in listeners.indices where watched[index].revents != 0 { acceptAll(on: index) }
        for (connection, polled) in zip(serving, watched.dropFirst(listeners.count)) where polled.revents != 0 {
            if !connection.isClosed { connection.serveWhileScriptBusy() }
        }
    }

    /// Loop thread: watches every listening socket for clients.
    private func watchListeners() throws {
        for index in listeners.indices {
            listeners[index].watch = try loop.watch(fd: listeners[index].fd, for: .read) { [unowned self] _ in
                self.acceptAll(on: index)
            }
        }
    }

    private func acceptAll(on index: Int) {
        guard index < listeners.count else { return }
        let listener = listeners[index]
        for _ in 0..<64 {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener.fd, $0, &length) }
            }
            if fd < 0 {
                // At the fd limit the listening socket stays readable and
                // accept keeps failing: returning would come straight back
                // here, a busy loop. Take the client with the reserve fd and
                // refuse it instead. (EAGAIN: another worker won the race.)
                guard errno == EMFILE || errno == ENFILE else { return }
                if !refuseAtFdLimit(listener.fd) {
                    pauseAccepting()
                    return
                }
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            // A Unix socket's clients are local, as Redis counts them.
            if listener.unixPath == nil, ProtectedMode.refuses(peer, settings: server.settings) {
                _ = ProtectedMode.denial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
                continue
            }
            guard server.admitClient() else {
                let refusal = Array("-ERR max number of clients reached\r\n".utf8)
                _ = refusal.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
                continue
            }
            if listener.unixPath == nil {
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            let connection = Connection(
                fd: fd, id: server.nextClientID(), worker: self, unixPath: listener.unixPath)
            connections[connection.id] = connection
            do {
                try connection.start()
            } catch {
                connection.close()
            }
        }
    }

    /// The reserve-fd technique (libuv, nginx): free the descriptor held in
    /// reserve, accept the waiting client with it, tell it why and close it,
    /// then take the reserve back. Each pending client is answered promptly
    /// and the listening socket drains, so the loop sleeps again.
    /// Returns false when there is no reserve to use.
    private func refuseAtFdLimit(_ listenFD: Int32) -> Bool {
        guard reserveFD >= 0 else { return false }
        close(reserveFD)
        reserveFD = -1
        defer { reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC) }
        let fd = accept(listenFD, nil, nil)
        guard fd >= 0 else { return true }
        server.refusedAtFdLimit()
        let refusal = Array("-ERR max number of clients reached\r\n".utf8)
        _ = refusal.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(fd)
        return true
    }

    /// No reserve descriptor either: stop watching the listening sockets
    /// for 100 ms rather than spin on them.
    private func pauseAccepting() {
        guard listeners.contains(where: { $0.watch != nil }) else { return }
        cancelListenerWatches()
        _ = try? loop.schedule(after: .milliseconds(100)) { [unowned self] in
            guard !self.shuttingDown else { return }
            try? self.watchListeners()
            if self.reserveFD < 0 { self.reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC) }
        }
    }

    private func cancelListenerWatches() {
        for index in listeners.indices {
            listeners[index].watch?.cancel()
            listeners[index].watch = nil
        }
    }

    /// Loop thread: queues `batch` of `connection` for the core. The
    /// batches of every connection that was read this turn go in one post,
    /// sent by a timer due at once: libevent runs it after this turn's I/O
    /// callbacks, so one turn costs the core one job and the worker one
    /// reply post, not one of each per connection.
    func submit(_ batch: RequestBatch, from connection: Connection) {
        if outgoing.isEmpty {
            do {
                _ = try loop.schedule(after: .zero) { [unowned self] in self.sendOutgoing() }
            } catch {
                connection.coreRefused()  // the worker's loop is stopping: nothing will be sent
                return
            }
        }
        outgoing.append((connection, batch))
    }

    private func sendOutgoing() {
        // A connection closed since it queued its batch has told the core
        // already (its session is gone): its batch is dropped, not run for
        // a client the core no longer knows.
        let sending = outgoing.filter { !$0.connection.isClosed }
        outgoing = []
        guard !sending.isEmpty else { return }
        do {
            try server.hop.submit(sending.map { ($0.connection.id, $0.batch) }, replyOn: loop) { results in
                for (entry, result) in zip(sending, results) {
                    entry.connection.receive(result.replies, rest: result.rest, parked: result.parked)
                }
            }
        } catch {
            for entry in sending { entry.connection.coreRefused() }  // the core stopped: no reply will come
        }
    }

    private func makeOutlet() -> PushOutlet {
        let settings = server.settings
        return PushOutlet(hardLimit: { settings.pubsubHard.load(ordering: .relaxed) }) { [weak self, loop] pushes in
            guard let worker = self else { return }
            try? loop.post { worker.deliver(pushes) }
        }
    }

    /// Loop thread: one core job's pushes for this loop's connections (a
    /// connection closed meanwhile gets nothing).
    private func deliver(_ pushes: [Push]) {
        for push in pushes {
            guard let connection = connections[push.client] else { continue }
            if push.overLimit {
                connection.disconnectOverPushLimit()
            } else {
                connection.push(push.bytes)
            }
        }
    }

    func connectionClosed(_ connection: Connection) {
        connections[connection.id] = nil
        server.clientClosed()
        reportIfDone()
    }

    /// Loop thread: stop accepting, answer what every connection has read, close them.
    func beginShutdown() {
        shuttingDown = true
        cancelListenerWatches()
        for listener in listeners {
            close(listener.fd)
            // As Redis: the socket's file goes with the server.
            if let path = listener.unixPath { unlink(path) }
        }
        listeners = []
        for connection in Array(connections.values) { connection.drain() }
        reportIfDone()
    }

    private func reportIfDone() {
        guard shuttingDown, connections.isEmpty, !reportedDone else { return }
        reportedDone = true
        server.workerFinished()
    }
}
