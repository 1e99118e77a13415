// HashValue.swift: a hash: its fields, each with its value in one
// HashEntry, in a MemberTable found by the field (O(1) lookup, a stable
// order, O(1) random picks).
//
// `isCompact` says what Redis 7.0 would call the encoding: a listpack while
// the hash has at most 512 fields and no field or value longer than 64
// bytes (hash-max-listpack-entries and -value: EncodingLimits), a
// hashtable after. Like
// Redis it never goes back; and like a listpack, a compact hash keeps its
// fields in insertion order (HGETALL's order), which is what the table's
// `keepsOrder` does.
//
// The bytes it hands out (`value(of:)`, `entry(at:)`) point into its
// entries: they are valid until the hash changes, which is how commands
// use them (read, reply or copy, then change).

/// A hash value. Core loop only, like the keyspace that holds it.
final class HashValue {
    /// The snapshot generation this object was made in (Persistence/Snapshot.swift).
    var snapshotEpoch = 0
    private(set) var fields = MemberTable<HashEntry>()

    init() {}

    var count: Int { fields.count }
    /// Redis would keep it as a listpack.
    var isCompact: Bool { fields.keepsOrder }

    /// The value of `field`, if present.
    func value(of field: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        fields.position(of: field).map { fields.members[$0].value }
    }

    /// Sets `field` to `value`; true when the field is new.
    @discardableResult
    func set(_ field: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ limits: EncodingLimits) -> Bool {
        if isCompact && (field.count > limits.hashValue || value.count > limits.hashValue) {
            fields.keepsOrder = false
        }
        if let position = fields.position(of: field) {
            // A new value goes over the old one in its own entry when
            // nobody else holds the entry and it has the room: no
            // allocation for HINCRBY and friends.
            fields.modify(at: position) { entry in
                if !(isKnownUniquelyReferenced(&entry) && entry.replaceValue(value)) {
                    entry = HashEntry.make(field, value)
                }
            }
            return false
        }
        if isCompact && fields.count >= limits.hashEntries { fields.keepsOrder = false }
        fields.append(HashEntry.make(field, value))
        return true
    }

    /// Sets `field` to `value`; true when the field is new.
    @discardableResult
    func set(_ field: [UInt8], _ value: [UInt8], _ limits: EncodingLimits) -> Bool {
        field.withUnsafeBytes { field in value.withUnsafeBytes { value in set(field, value, limits) } }
    }

    /// Removes `field`; true when it was there.
    @discardableResult
    func remove(_ field: UnsafeRawBufferPointer) -> Bool {
        guard let position = fields.position(of: field) else { return false }
        fields.remove(at: position)
        return true
    }

    /// The field and value at `position` (0..<count).
    func entry(at position: Int) -> (field: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let entry = fields.members[position]
        return (entry.field, entry.value)
    }

    func copy() -> HashValue {
        let copy = HashValue()
        copy.fields = fields
        return copy
    }
}
