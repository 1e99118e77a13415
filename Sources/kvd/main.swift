// kvd: a Redis-protocol key-value daemon. The keyspace lives on
// EventLoop.main (the real main thread, no lock); I/O worker loops accept,
// parse and answer connections. Thin: flags, wiring, signals.
import Glibc
import KVServer
import MainLoop

/// Prints a line at once, also when standard output is a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

let options: ServerOptions
do {
    guard let parsed = try ServerOptions.parse(Array(CommandLine.arguments.dropFirst())) else {
        say(ServerOptions.usage)
        exit(0)
    }
    options = parsed
} catch {
    say("kvd: \(error)\n\(ServerOptions.usage)")
    exit(2)
}

signal(SIGPIPE, SIG_IGN)
// A parent may start us with signals blocked (threads of libdispatch and
// test runners block them, and a child inherits the mask): unblock the ones
// kvd handles before any thread exists, so every thread inherits that.
var handled = sigset_t()
sigemptyset(&handled)
for signalNumber in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&handled, signalNumber) }
pthread_sigmask(SIG_UNBLOCK, &handled, nil)
let server = Server(options: options, core: EventLoop.main)
do {
    try server.start()
} catch {
    say("kvd: cannot start on \(options.bind):\(options.port): \(error)")
    exit(1)
}

let core = EventLoop.main
let stopping = ShutdownLatch()
for signalNumber in [SIGTERM, SIGINT] {
    _ = try core.onSignal(signalNumber) {
        guard stopping.begin() else { return }
        say("kvd: stopping (signal \(signalNumber))")
        // Answer what was read, then stop; never take more than about a second.
        server.shutdown { core.stop() }
        _ = try? core.schedule(after: .milliseconds(900)) { core.stop() }
    }
}
_ = try core.onSignal(SIGHUP) { say(server.statsLine()) }

say(
    "kvd: serving on \(options.bind):\(server.port) with \(options.ioThreads) I/O loop(s); the keyspace is on the main thread"
)
try core.run()
server.stopWorkers()
say(server.statsLine())
exit(0)

/// Makes the stop sequence run once, however many signals arrive.
final class ShutdownLatch: @unchecked Sendable {
    // Touched only on the main loop (signal handlers run there).
    private var started = false
    func begin() -> Bool {
        defer { started = true }
        return !started
    }
}
