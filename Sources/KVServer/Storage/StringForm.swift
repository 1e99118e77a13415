// StringForm.swift: how Redis 7.0 would hold a string value where its
// bytes alone do not say, kept beside the value so that OBJECT ENCODING
// and OBJECT REFCOUNT answer as Redis does after the command that last
// wrote it.

/// How Redis would hold a string value: its encoding follows the command
/// that made or last changed the value, not only the bytes.
enum StringForm: UInt8 {
    /// As SET leaves it (Redis's tryObjectEncoding): a canonical integer
    /// is `int` (shared when small), up to 44 bytes `embstr`, longer `raw`.
    case encoded
    /// As `encoded`, but an object of its own even for a small integer:
    /// written while an LRU or LFU policy with maxmemory forbade sharing,
    /// or a COPY (Redis duplicates the object).
    case encodedUnshared
    /// Changed in place, or made to be (APPEND, SETRANGE, SETBIT and
    /// BITFIELD, the HyperLogLog commands, BITOP's destination): `raw`,
    /// whatever it holds.
    case raw
    /// Made from a formatted number (INCRBYFLOAT): `embstr` up to 44
    /// bytes, `raw` past that, never `int`.
    case text

    /// The name OBJECT ENCODING gives a value of this form.
    func encoding(of value: [UInt8]) -> String {
        switch self {
        case .raw: return "raw"
        case .text: return value.count <= 44 ? "embstr" : "raw"
        case .encoded, .encodedUnshared:
            if value.count <= 20, parseInteger(value) != nil { return "int" }
            return value.count <= 44 ? "embstr" : "raw"
        }
    }
}
