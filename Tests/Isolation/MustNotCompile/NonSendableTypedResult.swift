// A typed result that is not Sendable.
import MainLoop

final class Snapshot { var rows: [Int] = [] }
final class Store: Invocable, Sendable {
    static let methods = MethodTable<Store>()
    func count() -> Int { 0 }
}

func leak(_ store: Store, _ loop: EventLoop) throws {
    // expected-error: Sendable
    let snapshot = try store.performSelector("snapshot", on: loop, returning: Snapshot.self)
    snapshot.rows.append(1)
}
