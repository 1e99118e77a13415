// kvd: a Redis-protocol key-value daemon. The keyspace lives on
// EventLoop.main (the real main thread, no lock); I/O worker loops accept,
// parse and answer connections. Thin: flags, wiring, signals.
import Glibc
import KVServer
import MainLoop
import Synchronization

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
/// Where kvd listens, for its log lines: each address with the port, and the Unix socket.
func listeningOn(port: Int) -> String {
    let addresses = options.bind.map { $0.hasPrefix("-") ? String($0.dropFirst()) : $0 }
    let tcp = addresses.map { ($0.contains(":") ? "[\($0)]" : $0) + ":\(port)" }
    return (tcp + (options.unixSocket.map { [$0] } ?? [])).joined(separator: ", ")
}
// SHUTDOWN stops kvd as SIGTERM does (it has saved, or was told NOSAVE),
// and the log says which of the two it was.
let stoppedByCommand = Atomic<Bool>(false)
server.shutdownCommand = {
    stoppedByCommand.store(true, ordering: .releasing)
    kill(getpid(), SIGTERM)
}
do {
    try server.start()
} catch {
    say("kvd: cannot start on \(listeningOn(port: options.port)): \(error)")
    exit(1)
}

let core = EventLoop.main
// systemd (Type=notify): READY once bound, the client count as STATUS every
// second, the watchdog petted from the core loop itself (a stuck core stops
// petting and systemd restarts kvd), STOPPING on SIGTERM. Without
// $NOTIFY_SOCKET these do nothing.
func notifySystemd(_ states: ServiceState...) {
    guard let socket = ServiceNotifier.socket else { return }
    do { try ServiceNotifier.notify(states, to: socket) } catch {
        sayAtOnce("kvd: telling systemd failed: \(error)\n")
    }
}
let statusLine = { "\(server.connectedClients) clients, \(server.commandsProcessed) commands" }
notifySystemd(.ready, .status("serving on \(listeningOn(port: server.port)); \(statusLine())"))
if ServiceNotifier.socket != nil {
    _ = try core.schedule(every: .seconds(1)) { notifySystemd(.status(statusLine())) }
    _ = try core.keepServiceWatchdogAlive()
}
// Signals are handled on a loop of their own, never busy, so that the stop
// stays bounded even while the core is in the middle of a long job.
let signals = try EventLoop.spawn(name: "kvd-signals")
let stopping = LoopBound(false, on: signals)
let budget = Duration.milliseconds(Int64(options.shutdownTimeout * 1000))
for signalNumber in [SIGTERM, SIGINT] {
    _ = try signals.onSignal(signalNumber) {
        let again = stopping.withValue { started in
            defer { started = true }
            return started
        }
        if again {
            sayAtOnce("kvd: signal \(signalNumber) again: exiting now, replies still due are lost\n")
            _exit(1)
        }
        let cause = stoppedByCommand.load(ordering: .acquiring) ? "SHUTDOWN" : "signal \(signalNumber)"
        say("kvd: stopping (\(cause))")
        notifySystemd(.stopping)
        // Answer what was read, save the snapshot, then stop: the core
        // stops once every worker has closed its clients, or when the
        // budget says so (the snapshot is saved either way).
        server.shutdown {
            server.saveFinalSnapshot()
            core.stop()
        }
        _ = try? core.schedule(after: budget * 0.8) {
            server.saveFinalSnapshot()
            core.stop()
        }
        // Whatever the core is doing: past the budget, exit from here
        // (but never in the middle of the final snapshot).
        exitAfterBudget(budget)
    }
}
/// Signal thread: exits once the stop's budget has passed, unless the final
/// snapshot is being written; then it looks again every 100 ms.
func exitAfterBudget(_ delay: Duration) {
    _ = try? signals.schedule(after: delay) {
        if server.isSavingFinalSnapshot { return exitAfterBudget(.milliseconds(100)) }
        sayAtOnce("kvd: the stop took longer than \(options.shutdownTimeout) s; exiting with replies still due\n")
        _exit(0)
    }
}

_ = try signals.onSignal(SIGHUP) { say(server.statsLine()) }

say(
    options.ioThreads == 0
        ? "kvd: serving on \(listeningOn(port: server.port)); I/O and the keyspace on the main thread (--io-threads 0)"
        : "kvd: serving on \(listeningOn(port: server.port)) with \(options.ioThreads) I/O loop(s); the keyspace is on the main thread"
)
try core.run()
server.stopWorkers()
say(server.statsLine())
exit(0)

/// Writes `line` straight to standard output, taking no lock that another
/// thread might hold (for the exits that do not wait for anybody).
func sayAtOnce(_ line: String) {
    var line = line
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}
