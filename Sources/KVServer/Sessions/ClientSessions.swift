// ClientSessions.swift: every connected client's session, by id, and the
// password a session must give before its commands run. On the core loop
// with the dispatcher that routes to them.

/// The sessions of the connected clients. Core loop only.
final class ClientSessions {
    /// The password AUTH must give (`--requirepass`), if any.
    var password: [UInt8]?
    // `@exclusivity(unchecked)`: every request looks its session up, on the
    // core loop's thread only (see Keyspace for why it matters).
    /// Every connected client's session, by id.
    @exclusivity(unchecked) private var byID: [Int: ClientSession] = [:]

    /// No sessions yet; each new one must give `password`, when set.
    init(password: [UInt8]?) {
        self.password = password
    }

    /// Every session, in no particular order (CLIENT LIST sorts them).
    var all: Dictionary<Int, ClientSession>.Values { byID.values }

    /// Client `id`'s session, if it is open.
    func existing(_ id: Int) -> ClientSession? { byID[id] }

    /// A connection was accepted: its session starts (database 0, RESP2).
    func open(_ info: ClientInfo) {
        byID[info.id] = ClientSession(info: info, authenticated: password == nil)
    }

    /// A connection closed: its session ends, and is returned (nil when it
    /// was never opened or already closed).
    func close(id: Int) -> ClientSession? {
        byID.removeValue(forKey: id)
    }

    /// The session of client `id`; one is made for an id never announced
    /// (a batch run without a connection, as tests and tools do).
    func session(_ id: Int) -> ClientSession {
        if let session = byID[id] { return session }
        open(ClientInfo(id: id, address: "", localAddress: "", fd: -1, kill: {}))
        return byID[id]!
    }
}
