// PostSite.swift: where a job was posted, as one word, so that a slow or
// stalled job can be named without costing the post anything: `post` and
// its kin take `#fileID` and `#line` as default arguments (compile-time
// constants), and this packs them into the pointer to the file name's
// static bytes (low 48 bits; user-space addresses fit) and the line (high
// 16 bits). The mailbox stores the word only once somebody asked for labels
// (`onSlowJob`, `watchdog`); it is decoded only for a report.

/// A post's call site (`#fileID:#line`), packed into one word; 0: unknown.
@usableFromInline
struct PostSite: Sendable, Equatable {
    @usableFromInline let bits: UInt

    @inlinable @inline(__always)
    init(file: StaticString, line: UInt) {
        guard file.hasPointerRepresentation else {
            bits = 0
            return
        }
        bits = UInt(bitPattern: file.utf8Start) & 0xFFFF_FFFF_FFFF | (Swift.min(line, 0xFFFF) << 48)
    }

    @inlinable init(bits: UInt) { self.bits = bits }

    /// Unknown.
    @usableFromInline static let none = PostSite(bits: 0)

    /// `File.swift:42`, or nil when unknown. Line 0 (no post has it): a
    /// named executor's jobs, whose site is the name alone.
    var description: String? {
        let address = bits & 0xFFFF_FFFF_FFFF
        guard address != 0, let file = UnsafePointer<CChar>(bitPattern: address) else { return nil }
        let line = bits >> 48
        return line == 0 ? String(cString: file) : "\(String(cString: file)):\(line)"
    }
}
