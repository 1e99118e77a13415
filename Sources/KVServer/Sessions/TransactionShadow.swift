// TransactionShadow.swift: a connection's copy of its client's MULTI state,
// kept on the connection's own thread for the answers it gives while a
// script holds the core (ScriptActivity.swift); the core applies what those
// answers changed before the client's next batch (RequestBatch carries it).
// Its own file because the parser's fuzz target builds RequestBatch without
// the rest of kvd.

/// A connection's view of its client's MULTI, for the answers its own
/// thread gives while a script is busy (Redis lets MULTI and DISCARD
/// through then, aborts EXEC, and marks a transaction whose command it
/// refused): the state as the core last reported it (`Replies.inTransaction`)
/// and as those answers left it, and the changes the core applies to the
/// session before the client's next batch runs (no command of the client
/// runs on the core in between: its batches are answered here until the
/// script ends). Connection's thread only.
struct TransactionShadow {
    /// What the answers did, in the order the core applies them.
    struct Changes: Sendable {
        /// The transaction there was (and the WATCHes) were dropped: EXEC's abort, DISCARD.
        var discarded = false
        /// A transaction was opened after that: MULTI.
        var opened = false
        /// A command was refused inside the open transaction: EXEC will abort.
        var refused = false
    }

    /// The client is in MULTI.
    var open = false
    var changes = Changes()

    /// EXEC's abort and DISCARD: no transaction, no WATCH.
    mutating func discard() {
        open = false
        changes = Changes(discarded: true, opened: false, refused: false)
    }

    /// The changes since the last call, nil when there were none.
    mutating func takeChanges() -> Changes? {
        guard changes.discarded || changes.opened || changes.refused else { return nil }
        defer { changes = Changes() }
        return changes
    }
}
