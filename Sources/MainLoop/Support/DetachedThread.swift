// DetachedThread.swift: a named, detached pthread running a closure: a
// spawned loop's thread, and a watchdog's.
import CLibevent

private final class ThreadBody {
    let name: String
    let body: () -> Void
    init(name: String, body: @escaping () -> Void) {
        self.name = name
        self.body = body
    }
}

/// Starts a detached thread named `name` (first 15 bytes) that runs `body`.
/// - Throws: ``EventLoopError/system(call:errno:)`` when no thread can be made.
func startDetachedThread(name: String, _ body: @escaping @Sendable () -> Void) throws(EventLoopError) {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let context = Unmanaged.passRetained(ThreadBody(name: name, body: body)).toOpaque()
    let rc = pthread_create(
        &thread, &attributes,
        { context in
            let box = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
            _ = String(box.name.prefix(15)).withCString { mainloop_set_thread_name($0) }
            box.body()
            return nil
        }, context)
    guard rc == 0 else {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        throw .system(call: "pthread_create", errno: rc)
    }
}
