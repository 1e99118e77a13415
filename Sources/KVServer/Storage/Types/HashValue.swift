// HashValue.swift: a hash: fields and their values. The fields are a
// MemberTable (O(1) lookup, a stable order, O(1) random picks); the values
// are an array beside it, in the same positions.
//
// `isCompact` says what Redis 7.0 would call the encoding: a listpack while
// the hash has at most 512 fields and no field or value longer than 64
// bytes (hash-max-listpack-entries and -value: EncodingLimits), a
// hashtable after. Like
// Redis it never goes back; and like a listpack, a compact hash keeps its
// fields in insertion order (HGETALL's order), which is what the table's
// `keepsOrder` does.

/// A hash value. Core loop only, like the keyspace that holds it.
final class HashValue {
    /// The snapshot generation this object was made in (Persistence/Snapshot.swift).
    var snapshotEpoch = 0
    private(set) var fields = MemberTable()
    /// Each field's value, by the field's position.
    private(set) var values: [[UInt8]] = []

    init() {}

    var count: Int { fields.count }
    /// Redis would keep it as a listpack.
    var isCompact: Bool { fields.keepsOrder }

    /// The value of `field`, if present.
    func value(of field: UnsafeRawBufferPointer) -> [UInt8]? {
        fields.position(of: field).map { values[$0] }
    }

    /// Sets `field` to `value`; true when the field is new.
    @discardableResult
    func set(_ field: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ limits: EncodingLimits) -> Bool {
        // An existing field's value is refilled in its own buffer: no array
        // is made for the field, nor for the value when it fits.
        if let position = fields.position(of: field) {
            if isCompact && value.count > limits.hashValue { fields.keepsOrder = false }
            values[position].replaceAll(with: value)
            return false
        }
        return set(Array(field), Array(value), limits)
    }

    /// Sets `field` to `value`; true when the field is new.
    @discardableResult
    func set(_ field: [UInt8], _ value: [UInt8], _ limits: EncodingLimits) -> Bool {
        if isCompact && (field.count > limits.hashValue || value.count > limits.hashValue) {
            fields.keepsOrder = false
        }
        if let position = fields.position(of: field) {
            values[position] = value
            return false
        }
        if isCompact && fields.count >= limits.hashEntries { fields.keepsOrder = false }
        fields.append(field)
        values.append(value)
        return true
    }

    /// Removes `field`; true when it was there.
    @discardableResult
    func remove(_ field: UnsafeRawBufferPointer) -> Bool {
        guard let position = fields.position(of: field) else { return false }
        if fields.keepsOrder {
            values.remove(at: position)
        } else {
            let last = values.removeLast()
            if position < values.count { values[position] = last }
        }
        fields.remove(at: position)
        return true
    }

    /// The field and value at `position` (0..<count).
    func entry(at position: Int) -> (field: [UInt8], value: [UInt8]) {
        (fields.members[position], values[position])
    }

    func copy() -> HashValue {
        let copy = HashValue()
        copy.fields = fields
        copy.values = values
        return copy
    }
}
