// FunctionLibraries.swift: the libraries FUNCTION LOAD created and the
// functions they registered (functions.c): create (with REPLACE), delete,
// flush, and the joins FUNCTION RESTORE makes, each with Redis's checks in
// Redis's order and its wording. A library is kept as its whole code (the
// `#!lua name=...` line included), which is what FUNCTION DUMP and RDB
// snapshots save; its callbacks live in the functions' interpreter
// (ScriptEngine). Library names are compared exactly, function names
// ignoring case, as Redis's dictionaries do. Like the keys, the libraries
// belong to the databases (snapshots save them) but FLUSHALL keeps them.
// Core loop thread only.

/// Every library and function.
final class FunctionLibraries {
    /// One library: its name, its code and its functions (in the order it registered them).
    struct Library {
        let name: [UInt8]
        let code: [UInt8]
        let functions: [RegisteredFunction]
    }

    /// By name.
    private(set) var libraries: [[UInt8]: Library] = [:]
    /// Each function's library, by the function's lowercased name.
    private(set) var functions: [[UInt8]: (library: [UInt8], function: RegisteredFunction)] = [:]

    /// The libraries in FUNCTION LIST's and FUNCTION DUMP's order (by name:
    /// Redis's is its dictionary's, which it documents as unordered).
    var ordered: [Library] { libraries.values.sorted { $0.name.lexicographicallyPrecedes($1.name) } }

    /// The function named `name` (any case).
    func function(named name: [UInt8]) -> RegisteredFunction? { functions[lowercased(name)]?.function }

    private func link(_ library: Library) {
        libraries[library.name] = library
        for function in library.functions { functions[lowercased(function.name)] = (library.name, function) }
    }

    private func unlink(_ library: Library) {
        libraries[library.name] = nil
        for function in library.functions { functions[lowercased(function.name)] = nil }
    }

    /// The first of `library`'s functions that another library holds, as Redis's error.
    private func collision(_ library: Library) -> ScriptError? {
        guard let taken = library.functions.first(where: { functions[lowercased($0.name)] != nil }) else { return nil }
        return ScriptError(bytes: Array("ERR Function ".utf8) + taken.name + Array(" already exists".utf8))
    }

    /// FUNCTION LOAD (and a snapshot's or a payload's library): compiles
    /// `code` and adds its library, replacing one of the same name when
    /// `replace`. Returns the library's name, or the error reply.
    func create(
        _ code: [UInt8], replace: Bool, engine: ScriptEngine, timeout: Int64?
    ) -> Result<[UInt8], ScriptError> {
        let metadata: (engine: [UInt8], name: [UInt8], body: ArraySlice<UInt8>)
        switch FunctionLibraries.metadata(code) {
        case .success(let parsed): metadata = parsed
        case .failure(let error): return .failure(error)
        }
        guard isValidFunctionName(metadata.name) else {
            return .failure(ScriptError("ERR \(invalidFunctionNameMessage)"))
        }
        guard lowercased(metadata.engine) == Array("lua".utf8) else {
            return .failure(
                ScriptError(bytes: Array("ERR Engine '".utf8) + metadata.engine + Array("' not found".utf8)))
        }
        let old = libraries[metadata.name]
        if old != nil && !replace {
            return .failure(
                ScriptError(bytes: Array("ERR Library '".utf8) + metadata.name + Array("' already exists".utf8)))
        }
        if let old { unlink(old) }
        let registered: [RegisteredFunction]
        switch engine.loadLibrary(metadata.body, timeout: timeout) {
        case .success(let functions): registered = functions
        case .failure(let error):
            if let old { link(old) }
            return .failure(error)
        }
        let library = Library(name: metadata.name, code: code, functions: registered)
        var failure: ScriptError?
        if registered.isEmpty {
            failure = ScriptError("ERR No functions registered")
        } else {
            failure = collision(library)
        }
        if let failure {
            engine.release(registered)
            if let old { link(old) }
            return .failure(failure)
        }
        link(library)
        if let old { engine.release(old.functions) }
        return .success(metadata.name)
    }

    /// The `#!<engine> name=<name>` line of a library's code: the engine,
    /// the name, and the code after the line (its line feed kept, so line
    /// numbers are the user's).
    private static func metadata(
        _ code: [UInt8]
    ) -> Result<(engine: [UInt8], name: [UInt8], body: ArraySlice<UInt8>), ScriptError> {
        guard code.starts(with: Array("#!".utf8)) else { return .failure(ScriptError("ERR Missing library metadata")) }
        // The line ends at the first line feed, or at a NUL byte (Redis's strchr).
        guard let end = code.firstIndex(where: { $0 == 10 || $0 == 0 }), code[end] == 10 else {
            return .failure(ScriptError("ERR Invalid library metadata"))
        }
        guard let parts = splitInlineArguments(code[..<end]), let first = parts.first else {
            return .failure(ScriptError("ERR Invalid library metadata"))
        }
        var name: [UInt8]?
        for part in parts.dropFirst() {
            guard lowercased(Array(part.prefix(5))) == Array("name=".utf8) else {
                return .failure(ScriptError(bytes: Array("ERR Invalid metadata value given: ".utf8) + part))
            }
            guard name == nil else {
                return .failure(ScriptError("ERR Invalid metadata value, name argument was given multiple times"))
            }
            name = Array(part.dropFirst(5))
        }
        guard let name else { return .failure(ScriptError("ERR Library name was not given")) }
        return .success((Array(first.dropFirst(2)), name, code[end...]))
    }

    /// FUNCTION DELETE: false when there is no such library.
    func delete(_ name: [UInt8], engine: ScriptEngine) -> Bool {
        guard let library = libraries[name] else { return false }
        unlink(library)
        engine.release(library.functions)
        return true
    }

    /// FUNCTION FLUSH (and RESTORE's FLUSH policy).
    func flush(engine: ScriptEngine) {
        for library in libraries.values { engine.release(library.functions) }
        libraries = [:]
        functions = [:]
    }

    /// What FUNCTION RESTORE does with libraries already there.
    enum RestorePolicy {
        case flush, append, replace
    }

    /// FUNCTION RESTORE and a snapshot's libraries: compiles each of
    /// `codes`, then adds them all under `policy`, or none. Returns the
    /// error reply, nil on success. `timeout` bounds the loads of all the
    /// libraries together (nil: none, for a snapshot, as in Redis; Redis has
    /// none for FUNCTION RESTORE either, where kvd keeps FUNCTION LOAD's for
    /// the whole payload, so that a client's payload of many libraries
    /// cannot hold the core for long).
    func restore(
        _ codes: [[UInt8]], policy: RestorePolicy, engine: ScriptEngine, timeout: Int64? = nil
    ) -> ScriptError? {
        let incoming = FunctionLibraries()
        let deadline = timeout.map { monotonicMilliseconds() + $0 }
        for code in codes {
            let remaining = deadline.map { Swift.max(0, $0 - monotonicMilliseconds()) }
            if case .failure(let error) = incoming.create(code, replace: false, engine: engine, timeout: remaining) {
                incoming.flush(engine: engine)
                return error
            }
        }
        if policy == .flush {
            flush(engine: engine)
            for library in incoming.libraries.values { link(library) }
            return nil
        }
        var replaced: [Library] = []
        var failure: ScriptError?
        for library in incoming.libraries.values.sorted(by: { $0.name.lexicographicallyPrecedes($1.name) }) {
            guard let old = libraries[library.name] else { continue }
            guard policy == .replace else {
                failure = ScriptError(
                    bytes: Array("ERR Library ".utf8) + library.name + Array(" already exists".utf8))
                break
            }
            unlink(old)
            replaced.append(old)
        }
        if failure == nil {
            failure = incoming.libraries.values.lazy.compactMap { self.collision($0) }.first
        }
        if let failure {
            for old in replaced { link(old) }
            incoming.flush(engine: engine)
            return failure
        }
        for library in incoming.libraries.values { link(library) }
        for old in replaced { engine.release(old.functions) }
        return nil
    }
}
