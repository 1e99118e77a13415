// MethodRegistry.swift: what registering a method keeps for the process's
// life, as an Objective-C class keeps its method list. Its label,
// `Type.selector` as a C string, so a loop's slow-job and stall reports can
// name a waiting call by one pointer whenever the report is made. And its
// entry, so a posted call refers to the entry without retaining it: a
// retain on the posting thread and a release on the loop's thread, per
// call, on an object both threads share, bounced its cache line between the
// cores and cost more than the rest of the post.
import Glibc

/// The registered labels and entries. Both are made once per registration
/// (a `MethodTable.method` call), never per call: a type's table is built
/// once (`static let methods`), so what is kept is bounded by the program's
/// methods. A table rebuilt on every access (a computed `methods`) would
/// keep an entry per access; the registry says so on standard error, once,
/// when one label has been registered `rebuildWarningThreshold` times.
@usableFromInline
enum MethodRegistry {
    // `nonisolated(unsafe)`: guarded by `lock`, a pthread mutex that lives
    // as long as the process (the sanitizer misreports Synchronization.Mutex).
    nonisolated(unsafe) private static var labels: [String: (label: UnsafePointer<CChar>, registrations: Int)] = [:]
    nonisolated(unsafe) private static var entries: [MethodEntry] = []
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()

    /// Registrations of one label past which the table is being rebuilt.
    static var rebuildWarningThreshold: Int { 1_000 }

    /// `label` as a C string that lives as long as the process: identical
    /// labels share one.
    @usableFromInline
    static func intern(_ label: String) -> UnsafePointer<CChar> {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if let known = labels[label] {
            labels[label] = (known.label, known.registrations + 1)
            if known.registrations + 1 == rebuildWarningThreshold {
                let warning =
                    "Invocations: '\(label)' has been registered \(rebuildWarningThreshold) times: build a type's MethodTable once (static let methods); every registration is kept for the process's life\n"
                _ = warning.withCString { write(2, $0, strlen($0)) }
            }
            return known.label
        }
        let copy = UnsafePointer(strdup(label)!)
        labels[label] = (copy, 1)
        return copy
    }

    /// Keeps `entry` for the process's life.
    static func keep(_ entry: MethodEntry) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        entries.append(entry)
    }
}
