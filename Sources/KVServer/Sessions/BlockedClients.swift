// BlockedClients.swift: the clients parked by a blocking command (BLPOP,
// BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP). A parked client costs no thread:
// its connection simply has no reply yet (Connection's `.parked`), and its
// command waits here, copied out of its batch, until one of four things
// ends the wait:
// - a key it waits on gets a list (the keyspace marks the key ready, and
//   the dispatcher serves the ready keys after the command that did it,
//   or after EXEC: Dispatcher.serveReadyKeys), first parked, first served,
//   per key, as in Redis;
// - its deadline: one loop timer for all of them, armed for the earliest
//   deadline (DeadlineHeap), so a thousand parked clients cost the core
//   nothing per loop turn while nothing happens;
// - CLIENT UNBLOCK;
// - its connection closing.
// Core loop only, with the dispatcher that owns it.
import MainLoop

/// The parked clients, by id (each database keeps who waits on its keys).
final class BlockedClients {
    /// What a parked client waits for.
    enum Awaited {
        case list, sortedSet
    }

    /// One parked client.
    struct Parked {
        let session: ClientSession
        let awaited: Awaited
        let database: Int
        let keys: [[UInt8]]
        /// The blocking command, copied out of its batch: it runs again
        /// when a key it waits on is ready.
        let request: RequestBatch
        /// Unix milliseconds; nil waits forever.
        let deadline: Int64?
        /// This park's number (see DeadlineHeap).
        let serial: Int
    }

    /// The parked clients by id; which clients wait on which key, each
    /// database keeps (Keyspace's `clients(waitingOn:)`). Unchecked as the
    /// session's fields are (core loop only, and no access to it is open
    /// while another starts): every batch asks `isParked`, and the
    /// runtime's checks here and in PushOutbox were 2.8% of an unpipelined
    /// GET's instructions (7,525 -> 7,318, callgrind).
    @exclusivity(unchecked) private var parked: [Int: Parked] = [:]
    private var deadlines = DeadlineHeap()
    private var lastSerial = 0
    /// The one timer, and the deadline it is armed for.
    private var timer: Scheduled?
    private var timerDeadline = Int64.max

    /// The client whose command runs again now (`serve`): when it finds
    /// nothing again, its `park` only notes `stillWaiting`.
    var serving: Int?
    var stillWaiting = false

    /// How many clients are parked (INFO's `blocked_clients`).
    var count: Int { parked.count }

    func isParked(_ client: Int) -> Bool { !parked.isEmpty && parked[client] != nil }

    /// The parked client `client`, if it is.
    subscript(client: Int) -> Parked? { parked[client] }

    /// Parks `session` on `keys` of `database` until `deadline`. While its
    /// command runs again (`serving`), it stays parked as it was instead.
    func park(
        _ session: ClientSession, for awaited: Awaited, request: Request, keys: [[UInt8]], deadline: Int64?,
        in databases: Databases
    ) {
        if serving == session.id {
            stillWaiting = true
            return
        }
        lastSerial += 1
        var copied = RequestBatch()
        copied.append(request)
        let entry = Parked(
            session: session, awaited: awaited, database: session.database, keys: keys, request: copied,
            deadline: deadline,
            serial: lastSerial)
        parked[session.id] = entry
        let keyspace = databases[entry.database]
        for key in keys { keyspace.block(session.id, on: key) }
        if let deadline { deadlines.insert(.init(deadline: deadline, client: session.id, serial: lastSerial)) }
    }

    /// Ends the wait of `client` (served, timed out, unblocked, gone);
    /// returns what it was waiting with, nil when it was not parked.
    @discardableResult
    func unpark(_ client: Int, in databases: Databases) -> Parked? {
        guard let entry = parked.removeValue(forKey: client) else { return nil }
        let keyspace = databases[entry.database]
        for key in entry.keys { keyspace.unblock(client, on: key) }
        return entry
    }

    /// Removes and returns the clients whose deadline is `now` or earlier.
    func expired(now: Int64) -> [Int] {
        var due: [Int] = []
        while let first = deadlines.first, first.deadline <= now {
            deadlines.removeFirst()
            if parked[first.client]?.serial == first.serial { due.append(first.client) }
        }
        return due
    }

    /// Arms the timer for the earliest live deadline, if it is not armed
    /// for it already; `fire` runs on `owner`'s loop when it is due.
    func armTimer(now: Int64, on loop: EventLoop?, _ fire: @escaping @Sendable () -> Void) {
        while let first = deadlines.first, parked[first.client]?.serial != first.serial { deadlines.removeFirst() }
        guard let loop, let next = deadlines.first?.deadline else {
            timer?.cancel()
            timer = nil
            timerDeadline = .max
            return
        }
        guard next != timerDeadline || timer == nil else { return }
        timer?.cancel()
        timerDeadline = next
        timer = try? loop.schedule(after: .milliseconds(max(next - now, 0)), fire)
    }

    /// The timer fired: it is no longer armed.
    func timerFired() {
        timer = nil
        timerDeadline = .max
    }
}
