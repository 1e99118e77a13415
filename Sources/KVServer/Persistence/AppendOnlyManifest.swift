// AppendOnlyManifest.swift: Redis 7.0's multi-part append-only layout:
// `appendonlydir/` holds a base file (an RDB, `<name>.<seq>.base.rdb`, or
// RESP, `.base.aof`), the incr files written since (`<name>.<seq>.incr.aof`)
// and `<name>.manifest`, which lists them, one line each:
// `file <name> seq <n> type b|h|i` (base, history, incr). The manifest is
// replaced whole (temp file, fsync, rename, directory fsync), so a crash
// leaves the old list or the new one, never half of each.
import Glibc

/// The files of an append-only directory, as its manifest lists them.
struct AppendOnlyManifest: Equatable {
    /// One file of the manifest.
    struct Entry: Equatable {
        var name: String
        var sequence: Int
    }

    /// The base file, if any.
    var base: Entry?
    /// Files a rewrite replaced, to be deleted.
    var history: [Entry] = []
    /// The incr files, oldest first; writes go to the last.
    var increments: [Entry] = []

    /// The manifest's text.
    var text: String {
        var text = ""
        if let base { text += "file \(base.name) seq \(base.sequence) type b\n" }
        for entry in history { text += "file \(entry.name) seq \(entry.sequence) type h\n" }
        for entry in increments { text += "file \(entry.name) seq \(entry.sequence) type i\n" }
        return text
    }

    /// Parses a manifest's text; the error says what is wrong, as Redis's does.
    init(parsing text: String) throws(PersistenceError) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("#") { continue }
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard words.count % 2 == 0 else { throw PersistenceError("Invalid AOF manifest file format") }
            var fields: [String: String] = [:]
            for index in stride(from: 0, to: words.count, by: 2) { fields[words[index]] = words[index + 1] }
            guard let name = fields["file"], let sequenceText = fields["seq"], let sequence = Int(sequenceText),
                let type = fields["type"], !name.contains("/")
            else { throw PersistenceError("Invalid AOF manifest file format") }
            let entry = Entry(name: name, sequence: sequence)
            switch type {
            case "b":
                guard base == nil else { throw PersistenceError("Found duplicate base file information") }
                base = entry
            case "h": history.append(entry)
            case "i":
                guard sequence > (increments.last?.sequence ?? 0) else {
                    throw PersistenceError("Found a non-monotonic sequence number")
                }
                increments.append(entry)
            default: throw PersistenceError("Unknown AOF file type")
            }
        }
        guard base != nil || !increments.isEmpty else { throw PersistenceError("Found an empty AOF manifest") }
    }

    init() {}

    /// The name of base file `sequence` for `fileName` (`appendonly.aof`).
    static func baseName(_ fileName: String, _ sequence: Int, rdb: Bool) -> String {
        "\(fileName).\(sequence).base.\(rdb ? "rdb" : "aof")"
    }

    /// The name of incr file `sequence` for `fileName`.
    static func incrementName(_ fileName: String, _ sequence: Int) -> String {
        "\(fileName).\(sequence).incr.aof"
    }

    /// Reads `<directory>/<fileName>.manifest`; nil when there is none.
    static func load(directory: String, fileName: String) throws(PersistenceError) -> AppendOnlyManifest? {
        let path = "\(directory)/\(fileName).manifest"
        guard let bytes = try readWholeFile(path) else { return nil }
        return try AppendOnlyManifest(parsing: String(decoding: bytes, as: UTF8.self))
    }

    /// Writes the manifest in place of the old one: temp file, fsync,
    /// rename, directory fsync.
    func persist(directory: String, fileName: String) throws(PersistenceError) {
        let temporary = "\(directory)/temp-\(fileName).manifest"
        let final = "\(directory)/\(fileName).manifest"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw PersistenceError.system("open", temporary) }
        var bytes = Array(text.utf8)
        let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            let error = PersistenceError.system("write", temporary)
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, final) == 0 else {
            let error = PersistenceError.system("rename", "\(temporary) to \(final)")
            unlink(temporary)
            throw error
        }
        try syncDirectory(directory)
    }
}

/// fsyncs a directory, so the renames and creations in it survive a crash.
func syncDirectory(_ directory: String) throws(PersistenceError) {
    let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw PersistenceError.system("open", directory) }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw PersistenceError.system("fsync", directory) }
}

/// A file's whole contents; nil when it does not exist.
func readWholeFile(_ path: String) throws(PersistenceError) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        if errno == ENOENT { return nil }
        throw PersistenceError.system("open", path)
    }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else {
            if errno == EINTR { continue }
            throw PersistenceError.system("read", path)
        }
        if count == 0 { return bytes }
        bytes.append(contentsOf: chunk[0..<count])
    }
}
