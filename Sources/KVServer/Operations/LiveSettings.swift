// LiveSettings.swift: the settings CONFIG SET changes at run time that the
// I/O loops read too (who is let in, how much a client may send or leave
// unread). The core writes them; every loop reads them with relaxed atomic
// loads where it checks them, so a change applies to connections already
// open, as in Redis.
import Synchronization

/// Run-time settings shared by the core and the I/O loops. Any thread.
public final class LiveSettings: Sendable {
    /// Redis's `maxclients`.
    let maxClients: Atomic<Int>
    /// Redis's `protected-mode`.
    let protectedMode: Atomic<Bool>
    /// A password is set (`requirepass`): protected mode then lets anyone in.
    let passwordSet: Atomic<Bool>
    /// Redis's `client-query-buffer-limit`.
    let maxQueryBuffer: Atomic<Int>
    /// Redis's `proto-max-bulk-len`.
    let maxBulk: Atomic<Int>
    /// Redis's `client-output-buffer-limit` for normal clients: hard, soft
    /// bytes, soft seconds.
    let outputHard: Atomic<Int>
    let outputSoft: Atomic<Int>
    let outputSoftSeconds: Atomic<Int>
    /// The same for pub/sub clients (Redis's default 32mb 8mb 60, or
    /// `--client-output-buffer-limit pubsub ...`).
    let pubsubHard: Atomic<Int>
    let pubsubSoft: Atomic<Int>
    let pubsubSoftSeconds: Atomic<Int>
    /// The port bound (known once the server started).
    let port = Atomic<Int>(0)
    /// What the server was started with (CONFIG GET's immutable settings).
    let options: ServerOptions

    /// Settings as `options` says.
    public init(_ options: ServerOptions) {
        self.options = options
        maxClients = Atomic(options.maxClients)
        protectedMode = Atomic(options.protectedMode)
        passwordSet = Atomic(options.requirePassword != nil)
        maxQueryBuffer = Atomic(options.limits.maxQueryBuffer)
        maxBulk = Atomic(options.limits.maxBulk)
        outputHard = Atomic(options.outputBufferLimit.hard)
        outputSoft = Atomic(options.outputBufferLimit.soft)
        outputSoftSeconds = Atomic(options.outputBufferLimit.softSeconds)
        pubsubHard = Atomic(options.pubsubOutputBufferLimit.hard)
        pubsubSoft = Atomic(options.pubsubOutputBufferLimit.soft)
        pubsubSoftSeconds = Atomic(options.pubsubOutputBufferLimit.softSeconds)
    }

    /// The normal clients' output buffer limit now.
    var outputBufferLimit: ServerOptions.OutputBufferLimit {
        .init(
            hard: outputHard.load(ordering: .relaxed), soft: outputSoft.load(ordering: .relaxed),
            softSeconds: outputSoftSeconds.load(ordering: .relaxed))
    }

    /// The pub/sub clients' output buffer limit now.
    var pubsubOutputBufferLimit: ServerOptions.OutputBufferLimit {
        .init(
            hard: pubsubHard.load(ordering: .relaxed), soft: pubsubSoft.load(ordering: .relaxed),
            softSeconds: pubsubSoftSeconds.load(ordering: .relaxed))
    }

    func setOutputBufferLimit(_ limit: ServerOptions.OutputBufferLimit) {
        outputHard.store(limit.hard, ordering: .relaxed)
        outputSoft.store(limit.soft, ordering: .relaxed)
        outputSoftSeconds.store(limit.softSeconds, ordering: .relaxed)
    }

    func setPubsubOutputBufferLimit(_ limit: ServerOptions.OutputBufferLimit) {
        pubsubHard.store(limit.hard, ordering: .relaxed)
        pubsubSoft.store(limit.soft, ordering: .relaxed)
        pubsubSoftSeconds.store(limit.softSeconds, ordering: .relaxed)
    }

    /// The request limits now, from `base` (the ones CONFIG SET cannot change).
    func requestLimits(_ base: RESPLimits) -> RESPLimits {
        var limits = base
        limits.maxQueryBuffer = maxQueryBuffer.load(ordering: .relaxed)
        limits.maxBulk = maxBulk.load(ordering: .relaxed)
        return limits
    }
}
