// MethodLabels.swift: `Type.selector` as C strings that live as long as the
// process, so a loop's slow-job and stall reports can name a waiting call
// by one pointer, taken when the report is made, whenever that is.
import Glibc

/// The interned labels. A label is made once per registration (a
/// `MethodTable.method` call), never per call; identical labels share one
/// string, so the set is bounded by the program's distinct methods.
@usableFromInline
enum MethodLabels {
    // `nonisolated(unsafe)`: guarded by `lock`, a pthread mutex that lives
    // as long as the process (the sanitizer misreports Synchronization.Mutex).
    nonisolated(unsafe) private static var interned: [String: UnsafePointer<CChar>] = [:]
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()

    @usableFromInline
    static func intern(_ label: String) -> UnsafePointer<CChar> {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if let known = interned[label] { return known }
        let copy = UnsafePointer(strdup(label)!)
        interned[label] = copy
        return copy
    }
}
