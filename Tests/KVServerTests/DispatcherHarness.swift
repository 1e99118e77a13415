// DispatcherHarness.swift: a dispatcher with client 1 connected, and one
// command run through it as that client, for the suites that drive the
// dispatcher without a server (persistence, the append-only file), and a
// directory for its snapshot.
import Glibc

@testable import KVServer

/// A dispatcher over empty databases, with client 1 connected.
func connected() -> Dispatcher {
    let dispatcher = Dispatcher()
    dispatcher.clientConnected(ClientInfo(id: 1, address: "", localAddress: "", fd: -1, kill: {}))
    return dispatcher
}

/// Runs one command as client 1; its reply in RESP.
@discardableResult
func run(_ dispatcher: Dispatcher, _ arguments: String...) -> String {
    run(dispatcher, bytes: arguments.map { Array($0.utf8) })
}

/// Runs one command, whose arguments are bytes, as client 1; its reply in RESP.
@discardableResult
func run(_ dispatcher: Dispatcher, bytes arguments: [[UInt8]]) -> String {
    var batch = RequestBatch()
    for argument in arguments { batch.appendArgument(argument) }
    batch.endRequest()
    let (replies, _) = dispatcher.execute(batch, client: 1)
    return String(decoding: replies.chunks.flatMap { $0 }, as: UTF8.self)
}

/// A fresh directory for a `dump.rdb`: `remove()` (in a `defer`) deletes
/// the file and the directory.
struct SnapshotDirectory {
    let path: String
    var file: SnapshotFile { SnapshotFile(directory: path, name: "dump.rdb") }

    init() throws {
        var template = Array("/tmp/kvd-snapshots-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw PersistenceError.system("mkdtemp", "/tmp") }
        path = String(cString: made)
    }

    func remove() {
        unlink(path + "/dump.rdb")
        rmdir(path)
    }
}
