// CommandTable.swift: from a command name, in any case, to its row, once
// per request. Its own open-addressing table with FNV-1a over the
// lower-cased name: no allocation, no lower-cased copy, and no SipHash
// (which a Dictionary would run on every request; command names are ours,
// not the clients', so a flooding-resistant hash buys nothing here).

/// The command rows by name, case-insensitively.
struct CommandTable: Sendable {
    /// Each row's name in lower case, by row index.
    private let names: [[UInt8]]
    /// Row index + 1 per slot, 0 for an empty slot; a power of two long,
    /// at most a quarter full.
    private let slots: [Int32]
    /// The longest name: a longer one is refused before it is hashed, so
    /// a hostile 100 MB name costs nothing.
    private let longestName: Int

    init(_ rows: [Command]) {
        names = rows.map { Array($0.name.lowercased().utf8) }
        longestName = names.map(\.count).max() ?? 0
        var size = 16
        while size < 4 * rows.count { size *= 2 }
        var slots = [Int32](repeating: 0, count: size)
        for (index, name) in names.enumerated() {
            var slot = name.withUnsafeBytes { CommandTable.hash($0) } & (size - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (size - 1) }
            slots[slot] = Int32(index + 1)
        }
        self.slots = slots
    }

    /// The row index of the command called `name` (any case), if any.
    func row(named name: UnsafeRawBufferPointer) -> Int? {
        guard name.count <= longestName, !name.isEmpty else { return nil }
        let mask = slots.count - 1
        var slot = CommandTable.hash(name) & mask
        while true {
            let entry = Int(slots[slot])
            guard entry != 0 else { return nil }
            if CommandTable.equalIgnoringCase(name, names[entry - 1]) { return entry - 1 }
            slot = (slot + 1) & mask
        }
    }

    /// FNV-1a over the bytes, upper-case ASCII folded to lower case.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte >= 65 && byte <= 90 ? byte + 32 : byte)) &* 0x100_0000_01b3
        }
        return Int(truncatingIfNeeded: hash ^ (hash >> 29))
    }

    /// `name` (any case) equals `lower` (lower case).
    private static func equalIgnoringCase(_ name: UnsafeRawBufferPointer, _ lower: [UInt8]) -> Bool {
        guard name.count == lower.count else { return false }
        for index in 0..<name.count {
            let byte = name[index]
            if (byte >= 65 && byte <= 90 ? byte + 32 : byte) != lower[index] { return false }
        }
        return true
    }
}
