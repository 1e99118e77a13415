// MethodRegistry.swift: what registering a method keeps for the process's
// life, as an Objective-C class keeps its method list. Its label,
// `Type.selector` as a C string, so a loop's slow-job and stall reports can
// name a waiting call by one pointer whenever the report is made. And its
// entry, so a posted call refers to the entry without retaining it: a
// retain on the posting thread and a release on the loop's thread, per
// call, on an object both threads share, bounced its cache line between the
// cores and cost more than the rest of the post.
import Glibc

/// The registered labels and entries. A method registered again (the same
/// type, selector and signature: a table built anew, as a generic type's
/// computed `methods` is on every access) gets the entry made the first
/// time, so what is kept is bounded by the program's methods.
@usableFromInline
enum MethodRegistry {
    /// What identifies a registration: the type (each specialization of a
    /// generic type is its own), the selector, the method's type and where
    /// it may run.
    @usableFromInline
    struct Key: Hashable {
        let type: ObjectIdentifier
        let selector: Selector
        let methodType: String
        let isolation: MethodIsolation

        @usableFromInline
        init(type: ObjectIdentifier, selector: Selector, methodType: String, isolation: MethodIsolation) {
            self.type = type
            self.selector = selector
            self.methodType = methodType
            self.isolation = isolation
        }
    }

    // `nonisolated(unsafe)`: guarded by `lock`, a pthread mutex that lives
    // as long as the process (the sanitizer misreports Synchronization.Mutex).
    nonisolated(unsafe) private static var labels: [String: UnsafePointer<CChar>] = [:]
    nonisolated(unsafe) private static var entries: [Key: MethodEntry] = [:]
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()

    /// `label` as a C string that lives as long as the process: identical
    /// labels share one.
    @usableFromInline
    static func intern(_ label: String) -> UnsafePointer<CChar> {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if let known = labels[label] { return known }
        let copy = UnsafePointer(strdup(label)!)
        labels[label] = copy
        return copy
    }

    /// The entry registered under `key`, if any.
    @usableFromInline
    static func entry(for key: Key) -> MethodEntry? {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return entries[key]
    }

    /// Keeps `entry` for the process's life, under `key` unless another
    /// registration of the same method got there first (both are kept).
    static func keep(_ entry: MethodEntry, as key: Key) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if entries[key] == nil {
            entries[key] = entry
        } else {
            kept.append(entry)
        }
    }

    /// The storage of a table with no method, where every table starts.
    @usableFromInline
    static let emptyStorage = MethodTableStorage(ordered: [])

    /// Which storage extends which with which entry: the storage identities
    /// of a table's successive `.method(...)` lines.
    private struct Extension: Hashable {
        let base: ObjectIdentifier
        let entry: ObjectIdentifier
    }

    nonisolated(unsafe) private static var storages: [Extension: MethodTableStorage] = [:]

    /// The storage of `base`'s entries followed by `entry`, made the first
    /// time and the same one after: a table built anew with the same
    /// entries shares its storage, so what is kept is bounded by the
    /// program's tables (one storage per `.method(...)` line of each).
    @usableFromInline
    static func storage(
        extending base: Unmanaged<MethodTableStorage>, with entry: Unmanaged<MethodEntry>
    ) -> Unmanaged<MethodTableStorage> {
        let key = Extension(
            base: ObjectIdentifier(base.takeUnretainedValue()), entry: ObjectIdentifier(entry.takeUnretainedValue()))
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if let known = storages[key] { return Unmanaged.passUnretained(known) }
        let made = MethodTableStorage(ordered: base._withUnsafeGuaranteedRef { $0.ordered } + [entry])
        storages[key] = made
        return Unmanaged.passUnretained(made)
    }

    /// Entries made while another registration of the same method was
    /// being made: kept, as every entry is, but not found by `entry(for:)`.
    nonisolated(unsafe) private static var kept: [MethodEntry] = []
}
