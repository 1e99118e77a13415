// What must keep compiling, unchanged, in Swift 6 language mode with no
// warning (issue 25, item 1), beside the forms the isolation checks refuse.
import MainLoop

final class Child { var x = 0 }

final class Store: Invocable {  // not Sendable, no @unchecked
    static let methods = MethodTable<Store>()
        .method("apply:value:", Store.apply)
        .method("count", Store.count)
        .method("fail", Store.fail)
    var items: [String: Int] = [:]
    var children: [Child] = []
    func apply(_ key: String, _ value: Int) { items[key] = value }
    func count() -> Int { items.count }
    func expire() { items = items.filter { $0.value > 0 } }
    func fail() throws { throw Refusal() }
}

struct Refusal: Error {}

let core = EventLoop.main
let store = LoopBound(Store(), on: core)
let io = try EventLoop.spawn(name: "io")
try io.post {
    do {
        try store.post { $0.apply("a", 1) }
        let n: Int = try store.postAndWait { $0.items.count }
        let text = try core.postAndWait { store.withValue { "\($0.items.count)" } }
        // A fresh object the caller never uses again is handed over.
        let fresh = Child()
        try core.postAndWait { store.withValue { $0.children.append(fresh) } }
        let another = Child()
        try store.postAndWait { $0.children.append(another) }
        // A throwing post: its error goes to the loop's errorHandler.
        try store.post { try $0.fail() }
        // The performSelector family on the LoopBound value.
        try store.performSelector("apply:value:", waitUntilDone: false, withObjects: "b", 2)
        let count = try store.performSelector("count", returning: Int.self)
        let untyped = try store.performSelector("count", waitUntilDone: true)
        try store.tryPerformSelector("apply:value:", withObjects: "c", 3)
        try store.performSelector("apply:value:", afterDelay: .milliseconds(1), withObjects: "d", 4)
        store.cancelPreviousPerformRequests(selector: "apply:value:")
        print(n, text, count, untyped as? Int ?? 0)
        try core.post { core.stop() }
    } catch {
        print("refused: \(error)")
    }
}
let tick = try core.schedule(every: .seconds(1)) { store.withValue { $0.expire() } }
try core.run()
// After run() returned, on the thread that ran it.
print(store.withValue { $0.items.count })

// The post's closure parameter is consuming: a stored closure is still
// posted as often as wanted and used after, and a borrowed one with `copy`.
func forward(_ loop: EventLoop, _ work: borrowing @escaping @Sendable () -> Void) throws {
    try loop.post(copy work)
    let stored: @Sendable () -> Void = { print("stored") }
    try loop.post(stored)
    try loop.post(stored)
    stored()
    let add: @Sendable (inout Store) -> Void = { $0.apply("e", 5) }
    try store.post(add)
    try store.tryPost(add)
}

func asyncUse(_ loop: EventLoop) async throws -> Int {
    let viaLoop = try await loop.perform(timeout: .seconds(1)) { 42 }
    let viaStore = try await store.perform(timeout: .seconds(1)) { $0.items.count }
    return viaLoop + viaStore
}
