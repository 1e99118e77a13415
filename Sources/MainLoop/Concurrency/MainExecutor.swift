// MainExecutor.swift: the opt-in MainActor route straight into EventLoop.main's
// mailbox (measured no faster than the default; see the README). Installed through
// the toolchain's custom-executor SPI (`_createExecutors(factory:)`), which
// may change in any Swift release: that is why it is opt-in and the default
// stays libdispatch's main queue, drained by EventLoop.main (MainQueue.swift).
@_spi(ExperimentalCustomExecutors) import _Concurrency

extension EventLoop {
    /// Makes ``EventLoop/main`` Swift's main executor, so `@MainActor` jobs go
    /// straight into its mailbox instead of through libdispatch's main queue.
    ///
    /// Opt-in, and resting on the toolchain's experimental custom-executor SPI
    /// (which may change in any Swift release). Call it first thing in a
    /// synchronous `main.swift`, before anything uses Swift concurrency, then
    /// `try EventLoop.main.run()`. `DispatchQueue.main` keeps working: the main
    /// loop drains it either way.
    /// - Throws: ``EventLoopError/notOwnerThread`` off the main thread;
    ///   ``EventLoopError/invalidArgument(_:)`` if it was installed already.
    public static func installMainExecutor() throws {
        guard isMainThread else { throw EventLoopError.notOwnerThread }
        try MainExecutorInstallation.install()
    }

    /// True once ``installMainExecutor()`` has made ``EventLoop/main`` Swift's main executor.
    public static var isMainExecutor: Bool { MainExecutorInstallation.installed }
}

enum MainExecutorInstallation {
    private static let lock = Lock()
    // Guarded by `lock`.
    nonisolated(unsafe) private static var done = false

    static var installed: Bool { lock.withLock { done } }

    static func install() throws(EventLoopError) {
        lock.lock()
        defer { lock.unlock() }
        guard !done else { throw .invalidArgument("EventLoop.installMainExecutor() was already called") }
        done = true
        _createExecutors(factory: MainLoopExecutorFactory.self)
    }
}

/// The factory the runtime asks for its executors: EventLoop.main for the
/// MainActor, the platform's default for everything else.
struct MainLoopExecutorFactory: ExecutorFactory {
    static var mainExecutor: any MainExecutor { MainLoopMainExecutor.shared }
    static var defaultExecutor: any TaskExecutor { PlatformExecutorFactory.defaultExecutor }
}

/// EventLoop.main's executor in the shape the runtime wants for its main
/// executor: a serial executor that can also run and stop the main loop.
final class MainLoopMainExecutor: MainExecutor, @unchecked Sendable {
    // `@unchecked Sendable`: stateless; everything goes to EventLoop.main.
    static let shared = MainLoopMainExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        EventLoop.main.enqueue(UnownedJob(job), on: nil)
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        EventLoop.main.executor.checkIsolated()
    }

    func isIsolatingCurrentContext() -> Bool? {
        EventLoop.main.inLoop
    }

    func run() throws {
        try EventLoop.main.run()
    }

    func stop() {
        EventLoop.main.stop()
    }
}
