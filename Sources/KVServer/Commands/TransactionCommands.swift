// TransactionCommands.swift: MULTI, EXEC, DISCARD, WATCH and UNWATCH, with
// Redis's semantics. Inside MULTI the dispatcher queues every other command
// (a copy of its arguments) and answers +QUEUED; a command refused while
// queueing (unknown, wrong arity, not authenticated) makes EXEC answer
// EXECABORT. EXEC runs the queue in one go on the core, so nothing else runs
// in between: that is what makes it atomic here, as in Redis. A WATCHed key
// that changed, or expired, since WATCH makes EXEC answer a null array.

let transactionCommands: [Command] = [
    Command("multi", arity: 1, keys: .none, flags: .transactionControl) { _, session, _, out in
        guard session.transaction == nil else { return out.error("ERR MULTI calls can not be nested") }
        session.transaction = ClientSession.Transaction()
        out.ok()
    },
    Command("exec", arity: 1, keys: .none, flags: [.transactionControl, .skipSlowlog]) { dispatcher, session, _, out in
        dispatcher.exec(session, &out)
    },
    Command("discard", arity: 1, keys: .none, flags: .transactionControl) { dispatcher, session, _, out in
        guard session.transaction != nil else { return out.error("ERR DISCARD without MULTI") }
        session.transaction = nil
        dispatcher.unwatchAll(session)
        out.ok()
    },
    Command("watch", arity: -2, keys: .all, flags: .transactionControl) { dispatcher, session, r, out in
        guard session.transaction == nil else { return out.error("ERR WATCH inside MULTI is not allowed") }
        let db = dispatcher.databases[session.database]
        let now = dispatcher.databases.clock.now
        for key in r.dropFirst()
        where !session.watched.contains(where: { $0.database == session.database && $0.key == key }) {
            // A key already expired is gone before the watch starts.
            _ = db.lookup(key, now: now, touching: false, use: .uncounted)
            db.watch(key, session.watchFlag)
            session.watched.append((session.database, key))
        }
        out.ok()
    },
    Command("unwatch", arity: 1, keys: .none) { dispatcher, session, _, out in
        dispatcher.unwatchAll(session)
        out.ok()
    },
]

extension Dispatcher {
    /// Stops every WATCH of `session` and clears its dirty mark.
    func unwatchAll(_ session: ClientSession) {
        for (database, key) in session.watched { databases[database].unwatch(key, session.watchFlag) }
        session.watched = []
        session.watchFlag.dirty = false
    }

    /// What a connection's answers did to `session`'s MULTI while a script
    /// was busy (ScriptActivity): EXEC's abort or DISCARD (the transaction
    /// and the WATCHes dropped), a MULTI, a command refused inside it.
    func apply(_ changes: TransactionShadow.Changes, to session: ClientSession) {
        if changes.discarded {
            session.transaction = nil
            unwatchAll(session)
        }
        if changes.opened { session.transaction = ClientSession.Transaction() }
        if changes.refused { session.transaction?.refused = true }
    }

    fileprivate func exec(_ session: ClientSession, _ out: inout ReplyWriter) {
        guard let transaction = session.transaction else { return out.error("ERR EXEC without MULTI") }
        session.transaction = nil
        let now = databases.clock.now
        // A watched key that was live at WATCH and has expired since (but
        // was not deleted yet) counts as changed, as in Redis 7.0.
        let expired = session.watched.contains { databases[$0.database].hasExpired($0.key, now: now) }
        let dirty = session.watchFlag.dirty || expired
        unwatchAll(session)
        if transaction.refused {
            return out.error("EXECABORT Transaction discarded because of previous errors.")
        }
        if dirty { return out.nullArray() }
        out.arrayHeader(transaction.queued.count)
        inExec = true
        defer { inExec = false }
        transaction.queued.forEach { request in
            executeTimed(request, for: session, into: &out)
            return true
        }
    }
}
