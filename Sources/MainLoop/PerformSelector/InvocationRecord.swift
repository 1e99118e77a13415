// InvocationRecord.swift: what a performSelector posts. One allocation is
// the mailbox record, the resolved method, the target (or the LoopBound
// value's owner) and, in its tail, the arguments, copied out of the
// caller's argument list; that list is then never kept, so the compiler may
// leave a variadic list on the caller's stack. An `Invocation` holding an
// arguments array was two allocations per post. A record of up to two
// arguments that ran on an unbounded mailbox's loop goes back to that
// loop's pool (InvocationRecordPool.swift), and a later call refills it.
import Invocations

/// The fixed part of an ``InvocationRecord``; the arguments follow it.
// Five words, so that a record of two arguments is 120 bytes: glibc keeps
// blocks up to 128 in its fast bins, and a record is freed on the loop's
// thread, not the one that allocated it. A 136-byte record went through the
// consolidating bins of the poster's arena, which trimmed and regrew its heap:
// 40,000 page faults in 2 M posts and half the throughput.
struct InvocationRecordHeader {
    let method: ResolvedMethod
    /// The target, or the `LoopBound` value's owner: what the record keeps alive.
    let holder: any AnyObject & Sendable
    /// A `LoopBound` value's address in its storage, read on its owning
    /// loop's thread only, so the value never crosses threads; nil when
    /// `holder` is the target itself.
    let boundValue: UnsafeMutableRawPointer?
    /// The loop's pool the record goes back to once it ran (nil: freed as
    /// usual). A handle: the loop keeps its pool, and a record runs only on
    /// its own loop.
    let pool: InvocationRecordPool?
    /// The arguments the record holds: set to 0 when they are moved into the call.
    var count: Int32
    /// Whether the call was made: a record is performed once per filling.
    var performed = false
    /// Whether `holder` was released (the record ran and went back to its
    /// pool): every other field is trivial, so nothing is left to release.
    var holderReleased = false
}

/// A checked call posted to a loop: its own mailbox record, with the
/// header and then the arguments in its tail. The class has no stored
/// properties: `ManagedBufferPointer` lays the tail out (a `ManagedBuffer`
/// subclass cannot be `Sendable`). Not generic: the loop runs every record
/// through the same specialised code. Unchecked `Sendable`: the tail is
/// filled before the record is shared and holds only `Sendable` values (the
/// method, the target or owner, the arguments) and the address of a
/// `LoopBound` value, which only its loop's thread reads; after that only
/// the loop's thread writes it (`count` and `performed`, when the call is
/// made, and `holderReleased` when it goes back to its pool), and whoever
/// frees the record does so after that, ordered by the reference count's
/// release and acquire, or refills it, ordered by the pool's (see
/// InvocationRecordPool.swift).
final class InvocationRecord: LoopInvocation, @unchecked Sendable {
    private typealias Tail = ManagedBufferPointer<InvocationRecordHeader, (any Sendable)?>

    /// Records are made only by `make`, which lays out their tail; an
    /// object made otherwise would have none for `deinit` to take apart.
    private init() {}

    /// Resolves `selector` against `Target.methods` and checks `arguments`
    /// against it, then makes the record of a call on `target`: nothing is
    /// allocated for a call that is refused.
    /// - Throws: ``InvocationError``.
    static func make<Target: Invocable & Sendable>(
        on target: Target, selector: Selector, arguments: UnsafeBufferPointer<(any Sendable)?>,
        pool: InvocationRecordPool?
    ) throws(InvocationError) -> InvocationRecord {
        let method = try ResolvedMethod(on: Target.self, selector: selector, arguments: arguments)
        return make(method, holder: target, boundValue: nil, arguments: arguments, pool: pool)
    }

    /// As ``make(on:selector:arguments:)``, for a call on a `LoopBound`
    /// value, which is read where the record runs.
    static func make<Value: Invocable>(
        onValueOf owner: LoopBoundOwner<Value>, selector: Selector, arguments: UnsafeBufferPointer<(any Sendable)?>,
        pool: InvocationRecordPool?
    ) throws(InvocationError) -> InvocationRecord {
        let method = try ResolvedMethod(on: Value.self, selector: selector, arguments: arguments)
        return make(method, holder: owner, boundValue: owner.storage.address, arguments: arguments, pool: pool)
    }

    /// A record from `pool` when it has one and the arguments fit,
    /// refilled; else a new one (with the pool's room, so that it can go
    /// back to it, when they fit).
    private static func make(
        _ method: ResolvedMethod, holder: any AnyObject & Sendable, boundValue: UnsafeMutableRawPointer?,
        arguments: UnsafeBufferPointer<(any Sendable)?>, pool: InvocationRecordPool?
    ) -> InvocationRecord {
        let pooled = arguments.count <= InvocationRecordPool.argumentCapacity ? pool : nil
        // A signature has fewer than 2^31 parameters.
        let header = InvocationRecordHeader(
            method: method, holder: holder, boundValue: boundValue, pool: pooled, count: Int32(arguments.count))
        let record: InvocationRecord
        if let reused = pooled?.take() {
            // Written, never read: the record ran long ago on the loop's
            // core, and holds nothing (`run`), so its memory is initialized
            // over, with no load that would wait for that core's lines.
            reused.header.initialize(to: header)
            record = reused
        } else {
            record = unsafeDowncast(
                Tail(
                    bufferClass: InvocationRecord.self,
                    minimumCapacity: pooled == nil ? arguments.count : InvocationRecordPool.argumentCapacity
                ) { _, _ in header }.buffer, to: InvocationRecord.self)
        }
        // One copy per argument, as its value's type copies it:
        // `initialize(from:count:)` went through the runtime's generic array
        // copy and the Optional's value witnesses, 230 instructions for two.
        // Through the record's own reference: keeping the buffer pointer
        // alive across the copies cost a retain and a release of the record.
        if let base = arguments.baseAddress {
            let elements = record.elements
            for index in 0..<arguments.count { ArgumentSlot.initialize(elements + index, copying: base + index) }
        }
        return record
    }

    deinit {
        Tail(unsafeBufferObject: self).withUnsafeMutablePointers { header, arguments in
            arguments.deinitialize(count: Int(header.pointee.count))
            if !header.pointee.holderReleased { header.deinitialize(count: 1) }
        }
    }

    /// The header, read in place: the record lives as long as its methods
    /// run, and a field read through the pointer copies only that field.
    private var header: UnsafeMutablePointer<InvocationRecordHeader> {
        Tail(unsafeBufferObject: self).withUnsafeMutablePointerToHeader { $0 }
    }

    /// Where the arguments are, in the tail.
    private var elements: UnsafeMutablePointer<(any Sendable)?> {
        Tail(unsafeBufferObject: self).withUnsafeMutablePointerToElements { $0 }
    }

    /// The arguments, in place.
    private var arguments: UnsafeBufferPointer<(any Sendable)?> {
        UnsafeBufferPointer(start: elements, count: Int(header.pointee.count))
    }

    var selector: Selector { header.pointee.method.selector }
    var isolation: MethodIsolation { header.pointee.method.isolation }
    var name: UnsafePointer<CChar> { header.pointee.method.label }
    var targetType: Any.Type { header.pointee.method.targetType }

    /// Checks that the method returns `R` (`Void` for `()`).
    func checkReturnType<R>(_: R.Type) throws(InvocationError) {
        try header.pointee.method.checkReturnType(R.self)
    }

    /// Loop thread: performs the call, once. The arguments are moved into
    /// it, so the record no longer holds them (`count` is 0 after).
    func invoke() throws -> (any Sendable)? {
        let header = self.header
        precondition(!header.pointee.performed, "MainLoop: an invocation record was performed twice")
        header.pointee.performed = true
        let arguments = elements
        header.pointee.count = 0
        // A LoopBound value is an Invocable, so a class reference: one word
        // at its address, loaded with a reference of its own, as the method
        // may replace the value it runs on (through `withValue`).
        if let boundValue = header.pointee.boundValue {
            return try header.pointee.method.invoke(on: boundValue.load(as: AnyObject.self), consuming: arguments)
        }
        // A Sendable target is borrowed from the record, which holds it
        // (`let`) until the call returns: a retain and a release fewer per
        // call, two atomic updates of a count the posting thread writes too.
        return try Unmanaged<AnyObject>.fromOpaque(holderAddress.load(as: UnsafeRawPointer.self))
            ._withUnsafeGuaranteedRef { target in
                try header.pointee.method.invoke(on: target, consuming: arguments)
            }
    }

    /// Where the header keeps `holder`.
    private var holderAddress: UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(header) + MemoryLayout<InvocationRecordHeader>.offset(of: \.holder)!
    }

    /// Nil once the call was made (its arguments are gone with it): read it
    /// before `invoke()`.
    var invocation: Invocation? {
        guard header.pointee.boundValue == nil, !header.pointee.performed else { return nil }
        return Invocation(
            target: header.pointee.holder, call: MethodCall(header.pointee.method, arguments: Array(arguments)))
    }

    /// Loop thread: makes the call; then a record with a pool lets go of
    /// its target now (as its release would have) and goes back to the pool
    /// with the job's reference (true).
    func run() -> Bool {
        runAsRecord()
        let header = self.header
        guard let pool = header.pointee.pool else { return false }
        // The pool has one giver: the loop it belongs to.
        assert(
            pool == EventLoop.currentUnretained?.takeUnretainedValue().recordPool,
            "MainLoop: a record went back to another loop's pool")
        holderAddress.assumingMemoryBound(to: (any AnyObject & Sendable).self).deinitialize(count: 1)
        header.pointee.holderReleased = true
        // The job's reference becomes the pool's (the job is forgotten);
        // a full pool leaves it to the job, which releases it.
        return pool.give(Unmanaged.passUnretained(self))
    }
    /// Nobody waits: there is nobody to tell.
    func abandon(_ error: EventLoopError) {}
}
