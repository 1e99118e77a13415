// HashValue.swift: a hash. While small it is compact, as Redis 7.0 keeps
// it in a listpack: its pairs packed in one buffer in insertion order
// (PackedPairs), found by a scan. Once it has more than
// hash-max-listpack-entries fields (512), or a field or value longer than
// hash-max-listpack-value bytes (64; EncodingLimits), it becomes a
// hashtable: each field with its value in one HashEntry, in a MemberTable
// found by the field (O(1) lookup, a stable order, O(1) random picks).
// Like Redis it never goes back. `isCompact` is what OBJECT ENCODING
// reports (listpack or hashtable), and it is true of the representation.
//
// The bytes it hands out (`value(of:)`, `entry(at:)`, `forEachEntry`)
// point into its storage: they are valid until the hash changes, which is
// how commands use them (read, reply or copy, then change).

/// A hash value. Core loop only, like the keyspace that holds it.
final class HashValue {
    /// The snapshot generation this object was made in (Persistence/Snapshot.swift).
    var snapshotEpoch = 0
    /// The pairs while compact (empty after).
    private var packed = PackedPairs()
    /// The fields once a hashtable (empty while compact).
    private var fields = MemberTable<HashEntry>(keepsOrder: false)
    /// Redis would keep it as a listpack, and it is packed.
    private(set) var isCompact = true

    init() {}

    var count: Int { isCompact ? packed.count : fields.count }

    /// The value of `field`, if present.
    func value(of field: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        if isCompact { return packed.offset(of: field).map { packed.pair(atOffset: $0).value } }
        return fields.position(of: field).map { fields.members[$0].value }
    }

    /// Most bytes a compact hash's buffer holds, whatever the limits say:
    /// Redis's listpack stops at 1 GiB too (`lpSafeToAdd`), and each change
    /// of a value's length moves what follows it.
    static let packedByteLimit = 1 << 30

    /// Sets `field` to `value`; true when the field is new. Neither may
    /// point into this hash (a change moves or frees its bytes); commands
    /// pass a request's bytes.
    @discardableResult
    func set(_ field: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ limits: EncodingLimits) -> Bool {
        if isCompact {
            if field.count > limits.hashValue || value.count > limits.hashValue
                || packed.byteCount + PackedPairs.encodedSize(field.count, value.count) > HashValue.packedByteLimit
            {
                unpack()
            } else if let offset = packed.offset(of: field) {
                packed.replaceValue(atOffset: offset, with: value)
                return false
            } else if packed.count >= limits.hashEntries {
                unpack()
            } else {
                packed.append(field, value)
                return true
            }
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
        fields.append(HashEntry.make(field, value))
        return true
    }

    /// Sets `field` to `value`; true when the field is new.
    @discardableResult
    func set(_ field: [UInt8], _ value: [UInt8], _ limits: EncodingLimits) -> Bool {
        field.withUnsafeBytes { field in value.withUnsafeBytes { value in set(field, value, limits) } }
    }

    /// A hash of `pairs` (fields then values, as a snapshot holds them),
    /// nil when a field comes twice. Within the limits the pairs are
    /// appended as they come, with no search (the fields are checked for
    /// repeats apart), so loading a compact hash is linear, not a scan per
    /// pair.
    static func loading(_ pairs: [[UInt8]], _ limits: EncodingLimits) -> HashValue? {
        let hash = HashValue()
        let count = pairs.count / 2
        var bytes = 0
        var fits = count <= limits.hashEntries
        for index in stride(from: 0, to: pairs.count, by: 2) where fits {
            let (field, value) = (pairs[index], pairs[index + 1])
            bytes += PackedPairs.encodedSize(field.count, value.count)
            fits = field.count <= limits.hashValue && value.count <= limits.hashValue && bytes <= packedByteLimit
        }
        if fits {
            var fields = Set<[UInt8]>(minimumCapacity: count)
            for index in stride(from: 0, to: pairs.count, by: 2) {
                guard fields.insert(pairs[index]).inserted else { return nil }
                pairs[index].withUnsafeBytes { field in
                    pairs[index + 1].withUnsafeBytes { value in hash.packed.append(field, value) }
                }
            }
            return hash
        }
        for index in stride(from: 0, to: pairs.count, by: 2) {
            guard hash.set(pairs[index], pairs[index + 1], limits) else { return nil }
        }
        return hash
    }

    /// Removes `field`; true when it was there.
    @discardableResult
    func remove(_ field: UnsafeRawBufferPointer) -> Bool {
        if isCompact {
            guard let offset = packed.offset(of: field) else { return false }
            packed.remove(atOffset: offset)
            return true
        }
        guard let position = fields.position(of: field) else { return false }
        fields.remove(at: position)
        return true
    }

    /// The field and value at `position` (0..<count): O(1) for a
    /// hashtable, a walk from the first pair for a compact hash (a command
    /// that reads many positions takes `reader()`, one that reads them all
    /// in order `forEachEntry`).
    func entry(at position: Int) -> (field: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        if isCompact {
            let pair = packed.pair(atOffset: packed.offset(ofPosition: position))
            return (pair.field, pair.value)
        }
        let entry = fields.members[position]
        return (entry.field, entry.value)
    }

    /// Calls `body` with each field and value in the hash's order while it
    /// returns true.
    func forEachEntry<E: Error>(
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(E) -> Bool
    ) throws(E) {
        if isCompact { return try packed.forEach(body) }
        for entry in fields.members {
            guard try body(entry.field, entry.value) else { return }
        }
    }

    /// Reads positions in any order at O(1) each (HRANDFIELD's picks,
    /// HSCAN's page): a compact hash's pairs are located once, in one pass.
    func reader() -> Reader { Reader(self) }

    /// Positions of one hash, read in any order; valid until it changes.
    struct Reader {
        private let hash: HashValue
        /// Every pair of a compact hash, in order (nil for a hashtable).
        private let pairs: [(field: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)]?

        fileprivate init(_ hash: HashValue) {
            self.hash = hash
            if hash.isCompact {
                var pairs: [(field: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)] = []
                pairs.reserveCapacity(hash.count)
                hash.packed.forEach { field, value in
                    pairs.append((field, value))
                    return true
                }
                self.pairs = pairs
            } else {
                pairs = nil
            }
        }

        subscript(position: Int) -> (field: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            pairs?[position] ?? hash.entry(at: position)
        }
    }

    /// A compact hash becomes a hashtable, keeping its order.
    private func unpack() {
        var table = MemberTable<HashEntry>(keepsOrder: false)
        packed.forEach { field, value in
            table.append(HashEntry.make(field, value))
            return true
        }
        fields = table
        packed = PackedPairs()
        isCompact = false
    }

    func copy() -> HashValue {
        let copy = HashValue()
        copy.packed = packed
        copy.fields = fields
        copy.isCompact = isCompact
        return copy
    }
}
