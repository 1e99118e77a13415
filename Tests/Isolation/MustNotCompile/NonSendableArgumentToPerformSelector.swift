// A non-Sendable object as a performSelector argument, which the caller
// goes on using while the loop holds it.
import MainLoop

final class Note { var text = "" }
@MainActor final class Board: Invocable {
    nonisolated static let methods = MethodTable<Board>(isolation: .mainActor).method("pin:", Board.pin)
    var pinned: [String] = []
    func pin(_ text: String) { pinned.append(text) }
}

func leak(_ board: Board, _ note: Note) throws {
    // expected-error: Sendable
    try board.performSelector(onMainThread: "pin:", waitUntilDone: false, withObjects: note)
    note.text = "changed"
}
