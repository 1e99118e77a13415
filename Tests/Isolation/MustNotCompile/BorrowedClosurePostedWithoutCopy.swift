// The closure parameters of post are consuming (the job is moved into the
// mailbox): a closure the caller was itself lent as a `borrowing` parameter
// is posted with `copy` (Patterns.swift), not as it is. The compiler names
// the parameter, and notes the post that consumes it.
import MainLoop

// expected-error: 'work' is borrowed and cannot be consumed
func forward(_ loop: EventLoop, _ work: borrowing @escaping @Sendable () -> Void) throws {
    try loop.post(work)
}
