// HashEntry.swift: a hash's field and its value in one allocation: two
// lengths, then the field's bytes, then the value's. Two arrays (a field
// and a value) were two allocations of 64 bytes each for short strings,
// which with the index made kvd's hashes twice Redis's memory per field;
// one entry is 64 bytes for both.
//
// An entry's bytes do not change while another holder shares it (a
// snapshot's copy of the hash): a new value is written in place only
// into an entry nobody else holds and with the room for it
// (HashValue.set), else into a new entry.

/// The lengths at the head of a HashEntry.
struct HashEntryLengths {
    var field: UInt32
    var value: UInt32
}

/// A field and its value.
final class HashEntry: ManagedBuffer<HashEntryLengths, UInt8>, TableMember {
    /// A new entry holding copies of `field` and `value`.
    static func make(_ field: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> HashEntry {
        precondition(field.count < Int(UInt32.max) && value.count < Int(UInt32.max), "a hash field or value of 4 GiB")
        let buffer = HashEntry.create(minimumCapacity: field.count + value.count) { _ in
            HashEntryLengths(field: UInt32(field.count), value: UInt32(value.count))
        }
        let entry = unsafeDowncast(buffer, to: HashEntry.self)
        entry.withUnsafeMutablePointerToElements { bytes in
            if let base = field.baseAddress {
                bytes.initialize(from: base.assumingMemoryBound(to: UInt8.self), count: field.count)
            }
            if let base = value.baseAddress {
                (bytes + field.count).initialize(from: base.assumingMemoryBound(to: UInt8.self), count: value.count)
            }
        }
        return entry
    }

    /// The field's bytes, valid while the entry is held.
    var field: UnsafeRawBufferPointer {
        withUnsafeMutablePointers { lengths, bytes in
            UnsafeRawBufferPointer(start: bytes, count: Int(lengths.pointee.field))
        }
    }

    /// The value's bytes, valid while the entry is held and its value not
    /// replaced.
    var value: UnsafeRawBufferPointer {
        withUnsafeMutablePointers { lengths, bytes in
            UnsafeRawBufferPointer(start: bytes + Int(lengths.pointee.field), count: Int(lengths.pointee.value))
        }
    }

    /// Writes `value` over the entry's value if it fits in the entry's
    /// room and does not leave most of it unused (a 512 MB value replaced
    /// by one byte must not keep its 512 MB, as `[UInt8].replaceAll`
    /// does not); false, unchanged, otherwise.
    func replaceValue(_ value: UnsafeRawBufferPointer) -> Bool {
        withUnsafeMutablePointers { lengths, bytes in
            let field = Int(lengths.pointee.field)
            let needed = field + value.count
            guard needed <= capacity, capacity <= 2 * needed + 64 else { return false }
            if let base = value.baseAddress {
                (bytes + field).update(from: base.assumingMemoryBound(to: UInt8.self), count: value.count)
            }
            lengths.pointee.value = UInt32(value.count)
            return true
        }
    }

    func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try body(field) }
}
