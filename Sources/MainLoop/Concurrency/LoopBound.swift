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
/// ``EventLoop/stop()`` they throw ``EventLoopError/shutDown``. A post whose
/// closure captures nothing allocates nothing.
///
/// What the compiler checks (Swift 6 language mode; `make test` builds a
/// program for each way out or in and expects it to be refused):
/// - The closures of `post(file:line:_:)`, ``perform(timeout:file:line:_:)`` and
///   their kin are `@Sendable`: they capture only `Sendable` values, so
///   nothing of another thread's is smuggled in, and the value cannot be
///   captured and carried out.
/// - ``postAndWait(timeout:file:line:_:)``'s closure is `sending`: it may also
///   capture an object the caller hands over and never touches again.
/// - Results that leave the loop are `Sendable`; ``withValue(_:)``'s result
///   is `sending`: disconnected from the value, so neither the value nor a
///   part of it (a child object, an array holding either) can be returned.
///
/// One hole the checker (Swift 6.3's region analysis) cannot see: inside
/// ``withValue(_:)``, a part of the value written into a variable the
/// closure captured is not known to belong to the value. Do not hand such a
/// variable on; return what you need from the closure instead.
public struct LoopBound<Value>: Sendable {
    /// The loop that owns the value: all access to it happens on this loop's thread.
    public let loop: EventLoop
    /// Keeps the value alive for the handles, and hands it to the loop to
    /// release once the last handle is gone (see `LoopBoundOwner`).
    let owner: LoopBoundOwner<Value>
    /// Where the value lives, for the calls that wrap the body in a closure.
    @usableFromInline let address: ValueAddress<Value>
    /// The storage, unretained, as a post hands it to the loop: a post
    /// touches no reference count (one that every producer thread shared
    /// would cost each post a cache-line transfer). The owner keeps the
    /// storage alive while this handle exists.
    @usableFromInline let storage: Unmanaged<BoundStorage>

    /// Hands `value` to `loop`. `sending`: the caller gives it up, so no other
    /// reference to it can be used from another thread afterwards.
    public init(_ value: sending Value, on loop: EventLoop) {
        self.loop = loop
        let storage = LoopBoundStorage(value)
        self.owner = LoopBoundOwner(storage, on: loop)
        self.address = ValueAddress(storage.pointer)
        self.storage = Unmanaged.passUnretained(storage)
    }

    /// Runs `body` on the loop with the value; returns at once (see ``EventLoop/post(file:line:_:)-16vnh``).
    /// - Throws: ``EventLoopError/shutDown`` once the loop is stopped (the body never runs).
    ///
    /// Inlinable, so that the caller's module specialises it for `Value`:
    /// the generic entry point, called across modules, measured at a third
    /// of a plain post's throughput.
    @inlinable
    public func post(
        file: StaticString = #fileID, line: UInt = #line, _ body: consuming @escaping @Sendable (inout Value) -> Void
    ) throws {
        try loop.enqueue(.bound(BoundBody(consume body), storage), site: PostSite(file: file, line: line))
    }

    /// As `post(file:line:_:)`, for a body that can throw: what it throws goes to
    /// the loop's ``EventLoop/errorHandler`` (or one line on standard
    /// error), labelled with where it was posted from, as
    /// ``EventLoop/post(file:line:_:)-54xny`` does.
    public func post(
        file: StaticString = #fileID, line: UInt = #line, _ body: @escaping @Sendable (inout Value) throws -> Void
    ) throws {
        let address = self.address
        try loop.post(file: file, line: line) { try body(&address.pointer.pointee) }
    }

    /// As `post(file:line:_:)`, in the loop's urgent lane (see
    /// ``EventLoop/postUrgent(file:line:_:)``): before every non-urgent job
    /// still pending, admitted when a bounded mailbox is full.
    @inlinable
    public func postUrgent(
        file: StaticString = #fileID, line: UInt = #line, _ body: consuming @escaping @Sendable (inout Value) -> Void
    ) throws {
        try loop.enqueueUrgent(.bound(BoundBody(consume body), storage), site: PostSite(file: file, line: line))
    }

    /// As `post(file:line:_:)`, waiting at most `timeout` for room in a full bounded
    /// mailbox (see ``EventLoop/post(timeout:file:line:_:)``).
    @inlinable
    public func post(
        timeout: Duration, file: StaticString = #fileID, line: UInt = #line,
        _ body: consuming @escaping @Sendable (inout Value) -> Void
    ) throws {
        try loop.enqueue(
            .bound(BoundBody(consume body), storage), site: PostSite(file: file, line: line),
            policy: .wait(until: monotonicDeadline(after: timeout)))
    }

    /// As `post(file:line:_:)`, never waiting: a full bounded mailbox throws
    /// ``EventLoopError/full`` (see ``EventLoop/tryPost(file:line:_:)``).
    @inlinable
    public func tryPost(
        file: StaticString = #fileID, line: UInt = #line, _ body: consuming @escaping @Sendable (inout Value) -> Void
    ) throws {
        try loop.enqueue(
            .bound(BoundBody(consume body), storage), site: PostSite(file: file, line: line), policy: .refuse)
    }

    /// Runs `body` on the loop with the value, blocking until it has run, and
    /// returns its result (see ``EventLoop/postAndWait(timeout:file:line:_:)``: inline
    /// on the loop's own thread, `timeout` bounds the wait for the start,
    /// cycles of waiting loops throw ``EventLoopError/deadlock``).
    ///
    /// `body` is `sending`: it may capture an object the caller hands over
    /// and never uses again (`let fresh = Child(); try store.postAndWait { $0.children.append(fresh) }`),
    /// but not one the caller keeps using.
    ///
    /// Inlinable, so that the caller's module specialises it for `Value` and `T`.
    @inlinable
    public func postAndWait<T: Sendable>(
        timeout: Duration? = nil, file: StaticString = #fileID, line: UInt = #line,
        _ body: sending (inout Value) throws -> T
    ) throws -> T {
        let address = self.address
        return try loop.postAndWait(timeout: timeout, site: PostSite(file: file, line: line)) {
            try body(&address.pointer.pointee)
        }
    }

    /// Runs `body` on the loop with the value, suspending the calling task
    /// until it has run (see ``EventLoop/perform(timeout:file:line:_:)``:
    /// cancellation or the timeout before the start withdraws it).
    public func perform<T: Sendable>(
        timeout: Duration? = nil, file: StaticString = #fileID, line: UInt = #line,
        _ body: @escaping @Sendable (inout Value) throws -> T
    ) async throws -> T {
        let address = self.address
        return try await loop.perform(timeout: timeout, file: file, line: line) { try body(&address.pointer.pointee) }
    }

    /// Runs `body` with the value at once, on the calling thread, which must
    /// be the loop's: inside a post, a timer or a watcher of ``loop``, or,
    /// once the loop's ``EventLoop/run()`` has returned, the thread that ran
    /// it (the final drain is over, so nothing else can reach the value).
    ///
    /// The result is `sending`: it cannot be the value or a part of it.
    ///
    /// Calling it from any other thread is a programming error: it traps
    /// with a message naming the loop, the value's type, why this thread may
    /// not, and what to call instead.
    public func withValue<T>(_ body: (inout Value) throws -> sending T) rethrows -> sending T {
        if !loop.inLoop, let refusal = loop.refusesDirectAccess() {
            preconditionFailure("LoopBound<\(Value.self)>: \(refusal)")
        }
        return try body(&address.pointer.pointee)
    }
}

/// The value's address, as the handles and the jobs carry it.
///
/// `@unchecked Sendable`: the address itself never changes, and it is only
/// dereferenced on the owning loop's thread (by the jobs `LoopBound` posts
/// there, and by `withValue`, which checks the thread first).
@usableFromInline
struct ValueAddress<Value>: @unchecked Sendable {
    @usableFromInline let pointer: UnsafeMutablePointer<Value>
    init(_ pointer: UnsafeMutablePointer<Value>) { self.pointer = pointer }
}

/// A `LoopBound` post's body as it travels through the mailbox: the
/// function value's two words, so that a `Job` holds it inline (24 bytes in
/// all with the storage) and stays a plain, loadable enum. (An existential
/// holding the typed body made `Job` address-only: every move of every job,
/// plain posts included, went through value witnesses, 40% more
/// instructions per plain post measured with callgrind.)
///
/// The body is only ever *called* with its own type: `LoopBoundStorage<Value>`
/// turns the two words back into the `@Sendable (inout Value) -> Void` they
/// were made from, and calls that. What this relies on, and why it holds:
/// - `unsafeBitCast` requires the two types to have the same size, and
///   checks it (`_precondition`, also in release builds): a toolchain that
///   laid a function out otherwise would trap here, not misbehave.
/// - A round trip `T -> U -> T` through `unsafeBitCast` gives back `T`'s
///   bits unchanged, so the function the loop calls is the caller's own
///   (entry point, context and calling convention alike).
/// - In between, the context word is held as `AnyObject?`: a Swift closure's
///   context is a native reference-counted heap object or null (a thick
///   function is "a function pointer and a retained context", Swift's type
///   layout), so the job keeps it alive by the ordinary retain and release.
@usableFromInline
struct BoundBody {
    @usableFromInline let entry: UnsafeRawPointer
    @usableFromInline let context: AnyObject?

    /// The body's two words. The function travels inside `TypedBody`, a
    /// struct: handed bare to the generic `unsafeBitCast`, it would be
    /// reabstracted through a thunk (an allocation per post).
    @inlinable
    init<Value>(_ body: consuming @escaping @Sendable (inout Value) -> Void) {
        self = unsafeBitCast(TypedBody(call: body), to: BoundBody.self)
    }
}

/// The body with its own type, on both ends of the round trip.
@usableFromInline
struct TypedBody<Value> {
    @usableFromInline let call: @Sendable (inout Value) -> Void
    @inlinable init(call: @escaping @Sendable (inout Value) -> Void) { self.call = call }
}

/// What the loop needs to run a `LoopBound` post without knowing `Value`:
/// one dynamically dispatched call into `LoopBoundStorage<Value>`, which knows it.
///
/// `@unchecked Sendable`: `address` never changes; the value behind it is
/// touched only on the owning loop's thread.
@usableFromInline
class BoundStorage: @unchecked Sendable {
    /// The value's address.
    let address: UnsafeMutableRawPointer

    init(address: UnsafeMutableRawPointer) {
        self.address = address
    }

    /// Loop thread: calls `body` with the value. Overridden by the only
    /// subclass, `LoopBoundStorage<Value>`, which knows the value's type:
    /// a `Job` holds a class reference here (one word, spare bits for the
    /// enum's tag) and the loop dispatches through the class, where a
    /// stored function would cost another word per job.
    func run(_ body: BoundBody) {
        preconditionFailure("MainLoop: BoundStorage is only ever a LoopBoundStorage")
    }
}

/// The value, in the one place the owning loop's thread reads and writes it.
///
/// `@unchecked Sendable`: the value is touched only on the owning loop's
/// thread (see `ValueAddress`); the storage only travels to the loop to be
/// released there (`EventLoop.retire`).
final class LoopBoundStorage<Value>: BoundStorage, @unchecked Sendable {
    /// The value, allocated once with the storage, at a fixed address the
    /// jobs reach through `address`.
    let pointer: UnsafeMutablePointer<Value>

    init(_ value: sending Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
        super.init(address: UnsafeMutableRawPointer(pointer))
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// Loop thread: the round trip back to the body's own type (see
    /// `BoundBody`), called with the value.
    override func run(_ body: BoundBody) {
        unsafeBitCast(body, to: TypedBody<Value>.self).call(&pointer.pointee)
    }
}

/// What the `LoopBound` handles share. When the last handle goes away, the
/// storage is not released here, on whatever thread that happens: jobs that
/// reference it (unretained) may still be queued. It is handed to the loop
/// (`EventLoop.retire`), which releases it after every job queued before.
final class LoopBoundOwner<Value>: Sendable {
    let storage: LoopBoundStorage<Value>
    private let loop: EventLoop

    init(_ storage: LoopBoundStorage<Value>, on loop: EventLoop) {
        self.storage = storage
        self.loop = loop
    }

    deinit {
        loop.retire(storage)
    }
}
