// A method whose result is not Sendable cannot be registered: its result
// would reach the caller's thread as `(any Sendable)?`.
import MainLoop

final class Child { var x = 0 }
final class Core: Invocable {
    static let methods = MethodTable<Core>().method("child", Core.currentChild)  // expected-error: Sendable
    var child = Child()
    func currentChild() -> Child { child }
}
