// Worker.swift: one I/O loop: its listening socket (SO_REUSEPORT, so the
// kernel spreads connections over the workers) and its connections. With
// `--io-threads 0` the one worker serves I/O on the core loop itself.
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
    private var listenFD: Int32 = -1
    private var acceptWatch: Watch?
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

    /// Loop thread: starts accepting on a socket bound to the server's address.
    func listen(on fd: Int32) throws {
        listenFD = fd
        acceptWatch = try loop.watch(fd: fd, for: .read) { [unowned self] _ in self.acceptAll() }
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
        var watched = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)]
        watched += serving.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        guard poll(&watched, nfds_t(watched.count), 0) > 0 else { return }
        if listenFD >= 0 && watched[0].revents != 0 { acceptAll() }
        for (connection, polled) in zip(serving, watched.dropFirst()) where polled.revents != 0 {
            if !connection.isClosed { connection.serveWhileScriptBusy() }
        }
    }

    private func acceptAll() {
        for _ in 0..<64 {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listenFD, $0, &length) }
            }
            if fd < 0 {
                // At the fd limit the listening socket stays readable and
                // accept keeps failing: returning would come straight back
                // here, a busy loop. Take the client with the reserve fd and
                // refuse it instead. (EAGAIN: another worker won the race.)
                guard errno == EMFILE || errno == ENFILE else { return }
                if !refuseAtFdLimit() {
                    pauseAccepting()
                    return
                }
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if ProtectedMode.refuses(peer, settings: server.settings) {
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
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let connection = Connection(
                fd: fd, id: server.nextClientID(), worker: self, limits: server.options.limits)
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
    private func refuseAtFdLimit() -> Bool {
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

    /// No reserve descriptor either: stop watching the listening socket for
    /// 100 ms rather than spin on it.
    private func pauseAccepting() {
        acceptWatch?.cancel()
        acceptWatch = nil
        _ = try? loop.schedule(after: .milliseconds(100)) { [unowned self] in
            guard !self.shuttingDown, self.listenFD >= 0, self.acceptWatch == nil else { return }
            self.acceptWatch = try? self.loop.watch(fd: self.listenFD, for: .read) { [unowned self] _ in
                self.acceptAll()
            }
            if self.reserveFD < 0 { self.reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC) }
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
