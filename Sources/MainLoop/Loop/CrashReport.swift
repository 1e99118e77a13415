// CrashReport.swift: when a job traps on a loop's thread, one line on
// standard error says which loop it was and what it was running (work that
// names itself, as an invocation does with its target type and selector),
// before the process dies the way it would have anyway.
//
// Installed when the first loop starts running, for the signals a trap or a
// fault raises. The handler chains: it restores the handler that was there
// before (Swift's own backtracer, say) and lets the signal take its course.
// Formatting the line is not async-signal-safe; it runs only on a path that
// ends the process, and at worst the line is missing.
import Glibc

enum CrashReport {
    static let fatalSignals: [Int32] = [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]

    /// The actions that were installed before ours, indexed by signal number.
    /// `nonisolated(unsafe)`: written once, by `installed` (a lazy global,
    /// which runs once under Swift's own once-lock) before our handlers are
    /// set, and only read after that, by the handlers.
    nonisolated(unsafe) private static let previous: UnsafeMutablePointer<sigaction> = {
        let actions = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
        actions.initialize(repeating: sigaction(), count: 65)
        return actions
    }()

    /// Installs the handlers once (the first `run()` of any loop triggers it).
    static let installed: Void = {
        for signalNumber in fatalSignals {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { signalNumber, _, _ in
                CrashReport.report(signalNumber)
                // Hand the signal back to whoever handled it before us. A
                // fault re-executes the faulting instruction and arrives
                // there; an explicit signal is raised again.
                sigaction(signalNumber, CrashReport.previous + Int(signalNumber), nil)
                if signalNumber == SIGTRAP || signalNumber == SIGABRT { raise(signalNumber) }
            }
            action.sa_flags = SA_SIGINFO | SA_ONSTACK | Int32(bitPattern: UInt32(SA_RESETHAND))
            sigemptyset(&action.sa_mask)
            sigaction(signalNumber, &action, previous + Int(signalNumber))
        }
    }()

    private static func report(_ signalNumber: Int32) {
        guard let loopPointer = pthread_getspecific(currentLoopKey) else { return }
        let loop = Unmanaged<EventLoop>.fromOpaque(loopPointer).takeUnretainedValue()
        var line = "MainLoop: loop '\(loop.name)' crashed (signal \(signalNumber)) while "
        if let running = loop.invocationBeingPerformed {
            line += "performing \(String(cString: running))\n"
        } else {
            line += "running a posted job\n"
        }
        writeToStandardError(line)
    }
}
