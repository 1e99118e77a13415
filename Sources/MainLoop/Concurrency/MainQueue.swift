// MainQueue.swift: libdispatch's main queue (DispatchQueue.main, and the
// MainActor, whose default executor is that queue) drained by EventLoop.main
// on the real main thread.
//
// libdispatch makes its main-queue eventfd readable when main-queue work is
// pending. EventLoop.main watches it like any other fd, so main-queue blocks
// take their turn fairly with mailbox batches, timers and I/O. The counter
// must be read before the callback, or the fd stays readable and the loop
// spins. Blocks queued before the fd was first asked for still run.
import CLibevent

extension EventLoop {
    /// Main thread, at the start of `EventLoop.main.run()`.
    func watchDispatchMainQueue() throws {
        let fd = _dispatch_get_main_queue_handle_4CF()
        guard fd >= 0 else { throw EventLoopError.system(call: "_dispatch_get_main_queue_handle_4CF", errno: EBADF) }
        _ = try watch(fd: fd, for: .read) { _ in
            _ = mainloop_eventfd_drain(fd)
            _dispatch_main_queue_callback_4CF(nil)
        }
    }
}
