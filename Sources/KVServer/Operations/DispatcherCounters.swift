// DispatcherCounters.swift: the figures other threads may read (the stats
// line, systemd's STATUS), published by the dispatcher after every batch.
import Synchronization

/// The dispatcher's figures for other threads (the stats line), published
/// after every batch: two relaxed stores per batch, not per command.
public final class DispatcherCounters: Sendable {
    private let commands = Atomic<Int>(0)
    private let keys = Atomic<Int>(0)

    /// Requests executed, as of the last batch.
    public var commandsProcessed: Int { commands.load(ordering: .relaxed) }
    /// Keys in the keyspace, as of the last batch.
    public var keyCount: Int { keys.load(ordering: .relaxed) }

    func publish(commands: Int, keys: Int) {
        self.commands.store(commands, ordering: .relaxed)
        self.keys.store(keys, ordering: .relaxed)
    }
}
