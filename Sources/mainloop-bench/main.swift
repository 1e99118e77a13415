// mainloop-bench: EventLoop measured with exactly the definitions of the peer
// benchmark (shared/bench-peers/README.md): same constants, percentiles,
// counter check and warm-up, same RESULT lines. One row per way in:
//   mainloop             post { } closures; roundtrip = postAndWait
//   mainloop_asyncsem    post { } + a semaphore, the C peers' round trip
//   mainloop_invocation  performSelector(_:on:waitUntilDone:withObjects:) with two arguments
// plus FIGURE lines: memory per pending post, eventfd writes per 1,000 posts
// at saturation, allocations per post.
// usage: mainloop-bench [M]   (M = tasks per producer, as for the C peers)
import Glibc
import MainLoop

// `bounded`: the same closure route through a mailbox bounded at 1,024
// (reported as mainloop_bounded1024); configured before EventLoop.main exists.
if boundedMode { try! EventLoop.configureMain(mailboxCapacity: boundedCapacity) }
// `nolatency`: the main loop without its latency figures.
if noLatencyMode { try! EventLoop.configureMain(mailboxCapacity: nil, latencyStats: false) }
// `mainactor-executor`: MainActor jobs straight into EventLoop.main's mailbox.
if mainExecutorMode { try! EventLoop.installMainExecutor() }

// The loop runs on the main thread; the driver thread is started from inside
// the running loop, as in the peers.
try! loop.post { _ = startThread { driver() } }
try! loop.run()
