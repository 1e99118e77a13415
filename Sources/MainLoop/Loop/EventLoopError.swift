// EventLoopError.swift: every way a call into an EventLoop can be refused.
import CLibevent

/// Why an ``EventLoop`` refused or abandoned a call.
///
/// Every refusal is reported to the caller that made the call: a post that
/// throws was not accepted and will never run; a post that returned normally
/// was accepted and will run exactly once (unless the loop is stopped before
/// it ever ran, see ``EventLoop/stop()``).
public enum EventLoopError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The loop has been stopped (or is in its final drain): it accepts no new work.
    case shutDown
    /// A bounded wait ended first: the loop did not start the work in time,
    /// or (bounded mailbox) no room came in time. The work was not run and never will be.
    case timedOut
    /// Waiting would close a cycle of loops blocked on each other; nothing was posted.
    case deadlock
    /// ``EventLoop/main`` can only be run by the process's main thread.
    case notOwnerThread
    /// The main thread waited for ``EventLoop/main`` (``EventLoop/postAndWait(timeout:file:line:_:)``)
    /// before calling its ``EventLoop/run()``: only the main thread can run
    /// it, so the wait could never end. Nothing was posted.
    case mainLoopNotRunning
    /// ``EventLoop/run()`` was called on a loop that is already running.
    case alreadyRunning
    /// The call needs ``EventLoop/current``, and the calling thread runs no loop.
    case noCurrentLoop
    /// A bounded mailbox is full (``EventLoop/tryPost(file:line:_:)``); the work was not accepted.
    case full
    /// An argument the call cannot honour, described in the message (a non-positive interval, an empty event set, ...).
    case invalidArgument(String)
    /// A system call failed: `call` names it, `errno` says why.
    case system(call: String, errno: Int32)
    /// The loop was made by the parent of this process, which has since
    /// called `fork()`: its thread did not survive the fork, so it accepts
    /// nothing here. A child process makes loops of its own (see
    /// <doc:Guarantees#Processes-that-fork>).
    case forked

    public var description: String {
        switch self {
        case .shutDown: return "the event loop has been stopped and accepts no new work"
        case .timedOut:
            return "the event loop did not start the work before the timeout; it was withdrawn and will not run"
        case .deadlock:
            return
                "waiting would deadlock: the target loop is (directly or through a chain) blocked on the calling loop"
        case .notOwnerThread: return "EventLoop.main can only be run on the process's main thread"
        case .mainLoopNotRunning:
            return
                "EventLoop.main has not started: the main thread waited for it before calling run(), and only the main thread can run it; call EventLoop.main.run() first, or post without waiting"
        case .alreadyRunning: return "the event loop is already running"
        case .noCurrentLoop:
            return
                "the calling thread is not running an event loop: performSelector(_:afterDelay:withObjects:) schedules on EventLoop.current, so call it from a job on a loop (before EventLoop.main.run(), post it: try EventLoop.main.post { ... })"
        case .full: return "the event loop's mailbox is full; the work was not accepted"
        case .invalidArgument(let what): return "invalid argument: \(what)"
        case .forked:
            return
                "the event loop belongs to the parent process: this process was forked after the loop was made, and the loop's thread does not exist here; make a new loop in the child"
        case .system(let call, let code):
            return "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
