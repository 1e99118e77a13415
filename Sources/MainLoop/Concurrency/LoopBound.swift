// LoopBound.swift: a Sendable handle to a value that is not Sendable, owned
// by one loop. Any thread may hand work to the value through the handle; the
// work runs on the owning loop's thread, the only thread that ever touches
// the value. This is what makes a single-threaded core usable from worker
// threads in Swift 6 without `@unchecked` in the user's code.

/// A `Sendable` handle to a value that is not `Sendable`, owned by one loop.
///
/// ```swift
/// final class Database { var rows = 0; func insert() { rows += 1 } }   // not Sendable
/// let db = LoopBound(Database(), on: EventLoop.main)
/// // any thread:
/// try db.post { $0.insert() }
/// let rows = try db.postAndWait { $0.rows }
/// // on the loop's thread only (a timer, a watcher):
/// db.withValue { $0.insert() }
/// ```
///
/// Every call has the guarantees of the same call on ``loop``: posts from
/// one thread run in order (interleaved in that order with the thread's
/// other posts to the loop), a bounded mailbox bounds them, and after
/// ``EventLoop/stop()`` they throw ``EventLoopError/shutDown``. A plain post
/// allocates nothing beyond what its closure captures.
///
/// The closures are `@Sendable`, and results that leave the loop are
/// `Sendable`: the compiler checks that nothing of the value escapes to
/// another thread, and nothing of another thread's is smuggled in.
public struct LoopBound<Value>: Sendable {
    /// The loop that owns the value: all access to it happens on this loop's thread.
    public let loop: EventLoop
    /// Keeps the value alive for the handles, and hands it to the loop to
    /// release once the last handle is gone (see `LoopBoundOwner`).
    @usableFromInline let owner: LoopBoundOwner<Value>
    /// The owner's storage, unretained (the owner keeps it alive while this
    /// handle exists): a post reads it without touching the owner's
    /// reference count, which every producer thread would share.
    @usableFromInline let unownedStorage: Unmanaged<LoopBoundStorage<Value>>
    @inlinable var storage: LoopBoundStorage<Value> { owner.storage }

    /// Hands `value` to `loop`. `sending`: the caller gives it up, so no other
    /// reference to it can be used from another thread afterwards.
    public init(_ value: sending Value, on loop: EventLoop) {
        self.loop = loop
        let storage = LoopBoundStorage(value)
        self.owner = LoopBoundOwner(storage, on: loop)
        self.unownedStorage = Unmanaged.passUnretained(storage)
    }

    /// Runs `body` on the loop with the value; returns at once (see ``EventLoop/post(file:line:_:)-4tw2j``).
    /// - Throws: ``EventLoopError/shutDown`` once the loop is stopped (the body never runs).
    ///
    /// Inlinable, so that the caller's module specialises it for `Value`:
    /// the generic entry point, called across modules, measured at a third
    /// of a plain post's throughput.
    @inlinable
    public func post(
        file: StaticString = #fileID, line: UInt = #line, _ body: @escaping @Sendable (inout Value) -> Void
    ) throws {
        let job = unownedStorage._withUnsafeGuaranteedRef { $0.job(body) }
        try loop.enqueue(job, site: PostSite(file: file, line: line), policy: .wait(until: nil))
    }

    /// As ``post(file:line:_:)``, in the loop's urgent lane (see
    /// ``EventLoop/postUrgent(file:line:_:)``): before every non-urgent job
    /// still pending, admitted when a bounded mailbox is full.
    public func postUrgent(
        file: StaticString = #fileID, line: UInt = #line, _ body: @escaping @Sendable (inout Value) -> Void
    ) throws {
        try loop.enqueueUrgent(storage.job(body), site: PostSite(file: file, line: line))
    }

    /// As ``post(file:line:_:)``, waiting at most `timeout` for room in a full bounded
    /// mailbox (see ``EventLoop/post(timeout:file:line:_:)``).
    public func post(
        timeout: Duration, file: StaticString = #fileID, line: UInt = #line,
        _ body: @escaping @Sendable (inout Value) -> Void
    ) throws {
        try loop.enqueue(
            storage.job(body), site: PostSite(file: file, line: line),
            policy: .wait(until: monotonicDeadline(after: timeout)))
    }

    /// As ``post(file:line:_:)``, never waiting: a full bounded mailbox throws
    /// ``EventLoopError/full`` (see ``EventLoop/tryPost(file:line:_:)``).
    public func tryPost(
        file: StaticString = #fileID, line: UInt = #line, _ body: @escaping @Sendable (inout Value) -> Void
    ) throws {
        try loop.enqueue(storage.job(body), site: PostSite(file: file, line: line), policy: .refuse)
    }

    /// Runs `body` on the loop with the value, blocking until it has run, and
    /// returns its result (see ``EventLoop/postAndWait(timeout:file:line:_:)``: inline
    /// on the loop's own thread, `timeout` bounds the wait for the start,
    /// cycles of waiting loops throw ``EventLoopError/deadlock``).
    public func postAndWait<T: Sendable>(
        timeout: Duration? = nil, file: StaticString = #fileID, line: UInt = #line,
        _ body: @Sendable (inout Value) throws -> T
    ) throws -> T {
        let storage = self.storage
        return try loop.postAndWait(timeout: timeout, file: file, line: line) { try body(&storage.pointer.pointee) }
    }

    /// Runs `body` on the loop with the value, suspending the calling task
    /// until it has run (see ``EventLoop/perform(file:line:_:)``: cancellation before
    /// the start withdraws it).
    public func perform<T: Sendable>(_ body: @escaping @Sendable (inout Value) throws -> T) async throws -> T {
        let storage = self.storage
        return try await loop.perform { try body(&storage.pointer.pointee) }
    }

    /// Runs `body` with the value at once, on the calling thread, which must
    /// be the loop's (inside a post, a timer, a watcher of ``loop``).
    ///
    /// Calling it from any other thread is a programming error: it traps
    /// with a message naming the loop and the value's type.
    public func withValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        guard loop.inLoop else {
            preconditionFailure(
                "LoopBound<\(Value.self)>: the value belongs to loop '\(loop.name)', but withValue was called on another thread; use post or postAndWait"
            )
        }
        return try body(&storage.pointer.pointee)
    }
}

/// The value, in the one place the owning loop's thread reads and writes it.
///
/// `@unchecked Sendable`: the value is touched only on the owning loop's
/// thread: by the jobs `LoopBound` posts there, and by `withValue`, which
/// checks the thread first.
@usableFromInline
final class LoopBoundStorage<Value>: BoundStorage, @unchecked Sendable {
    /// The value, allocated once with the storage, at a fixed address the
    /// loop can reach without knowing `Value`.
    @usableFromInline let pointer: UnsafeMutablePointer<Value>

    init(_ value: sending Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
        super.init(address: UnsafeMutableRawPointer(pointer))
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// The mailbox record for `body`. No closure is made around `body`: the
    /// record holds `body`'s two words (entry point and context) and this
    /// storage, unretained, and the loop calls the body with the value's
    /// address (see `BoundStorage.run`).
    ///
    /// Unretained, because a reference count that the posting thread
    /// increments and the loop thread decrements, once per post, bounces one
    /// cache line between the two cores: it measured at half a plain post's
    /// throughput. The storage stays alive anyway: `LoopBoundOwner` releases
    /// it only through the loop, after every job queued before.
    ///
    /// The function travels inside `Body`, a struct: handing a bare function
    /// value to the generic `unsafeBitCast` would reabstract it through a
    /// thunk (an allocation per post); a struct's field keeps its
    /// representation. Inlinable, so the poster's module specialises it.
    @inlinable
    func job(_ body: @escaping @Sendable (inout Value) -> Void) -> Job {
        let parts = unsafeBitCast(Body(call: body), to: BoundBody.self)
        return .bound(parts.entry, parts.context, Unmanaged.passUnretained(self))
    }

    @usableFromInline
    struct Body {
        @usableFromInline let call: @Sendable (inout Value) -> Void
        @inlinable init(call: @escaping @Sendable (inout Value) -> Void) { self.call = call }
    }
}

/// What the `LoopBound` handles share. When the last handle goes away, the
/// storage is not released here, on whatever thread that happens: jobs that
/// reference it (unretained) may still be queued. It is handed to the loop
/// (`EventLoop.retire`), which releases it after every job queued before.
@usableFromInline
final class LoopBoundOwner<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: immutable; the storage is only dereferenced on the loop.
    @usableFromInline let storage: LoopBoundStorage<Value>
    private let loop: EventLoop

    init(_ storage: LoopBoundStorage<Value>, on loop: EventLoop) {
        self.storage = storage
        self.loop = loop
    }

    deinit {
        loop.retire(storage)
    }
}

/// A Swift function value's two words: its entry point and its context (nil
/// for a closure that captures nothing).
@usableFromInline
struct BoundBody {
    @usableFromInline let entry: UnsafeRawPointer
    @usableFromInline let context: AnyObject?
}

/// The non-generic face of `LoopBoundStorage`: what the loop needs to run a
/// body without knowing `Value`, so the drain calls it directly, with no
/// generic metadata lookup per job.
@usableFromInline
class BoundStorage: @unchecked Sendable {
    /// The value's address.
    @usableFromInline let address: UnsafeMutableRawPointer

    init(address: UnsafeMutableRawPointer) {
        self.address = address
    }

    /// Loop thread: calls the body `entry` and `context` make up with the
    /// value. The body is an `(inout Value) -> Void`; an `inout` argument is
    /// passed as the value's address, so calling it as an
    /// `(UnsafeMutableRawPointer) -> Void` with that address is the same call
    /// (same registers, same context), with nothing generic left to resolve.
    @inline(__always)
    func run(_ entry: UnsafeRawPointer, _ context: AnyObject?) {
        unsafeBitCast(BoundBody(entry: entry, context: context), to: RawBody.self).call(address)
    }

    private struct RawBody {
        let call: @Sendable (UnsafeMutableRawPointer) -> Void
    }
}
