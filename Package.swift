// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "MainLoop",
    products: [
        .library(name: "MainLoop", targets: ["MainLoop"]),
        .executable(name: "mainloop-demo", targets: ["mainloop-demo"]),
        .executable(name: "mainloop-bench", targets: ["mainloop-bench"]),
        .executable(name: "kvd", targets: ["kvd"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLibevent",
            pkgConfig: "libevent_core",
            providers: [.apt(["libevent-dev"])]
        ),
        // Lua 5.1 as Redis embeds it, with its cjson and bit libraries, for kvd's EVAL.
        .systemLibrary(
            name: "CLua", pkgConfig: "lua5.1", providers: [.apt(["liblua5.1-0-dev", "lua-cjson-dev", "lua-bitop-dev"])]),
        .target(name: "Invocations"),
        .target(name: "MainLoop", dependencies: ["CLibevent", "Invocations"]),
        .executableTarget(name: "mainloop-demo", dependencies: ["MainLoop"]),
        // The README's tour, verbatim (tools/check-readme.sh keeps them equal): it must compile.
        .executableTarget(name: "readme-tour", dependencies: ["MainLoop"]),
        // A short self-checking workout, sized for valgrind's leak check in CI.
        .executableTarget(name: "mainloop-stress", dependencies: ["MainLoop"]),
        // kvd: a Redis-protocol daemon; its logic is a library so it is testable.
        // Its README.md maps the folders.
        // glibc's allocator calls (mallinfo2, malloc_trim), for kvd's INFO and MEMORY
        // (where CHeapAccounting, below, does not count).
        .systemLibrary(name: "CMalloc"),
        .target(name: "KVServer", dependencies: ["MainLoop", "CLua", "CMalloc"], exclude: ["README.md"]),
        // kvd's heap, counted as it is allocated (INFO's used_memory without
        // walking the allocator's free lists): interposed in kvd's executable
        // and in the tests' process, which links it.
        .target(name: "CHeapAccounting"),
        .executableTarget(name: "kvd", dependencies: ["KVServer", "CHeapAccounting"]),
        // Counts heap allocations for the benchmark's allocations-per-post figure.
        .target(name: "CAllocationCounter"),
        .executableTarget(name: "mainloop-bench", dependencies: ["MainLoop", "CAllocationCounter"]),
        // Heap allocations per kvd request in steady state (make bench-kvd, make test).
        .executableTarget(name: "kvd-allocations", dependencies: ["KVServer", "CAllocationCounter"]),
        // Launched by the tests as a child process: code that must own the
        // process's main thread cannot be tested inside the test runner.
        .executableTarget(name: "mainloop-test-helper", dependencies: ["MainLoop"]),
        // Bounded thread joins shared by both test suites.
        .target(name: "TestKit", path: "Tests/TestKit"),
        .testTarget(name: "MainLoopTests", dependencies: ["MainLoop", "mainloop-test-helper", "TestKit"]),
        .testTarget(name: "KVServerTests", dependencies: ["KVServer", "kvd", "TestKit"]),
    ],
    swiftLanguageModes: [.v6]
)
