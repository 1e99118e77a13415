// PackedPairs.swift: a small hash's fields and values in one buffer, one
// after the other, as Redis's listpack keeps them: each pair is the
// field's length, the value's length, then the field's bytes and the
// value's. A length below 255 is one byte; a longer one (a configured
// hash-max-listpack-value above 254) is 255 and four bytes.
//
// Why: a hash of ten short fields held each pair in an object of its own
// (HashEntry), with a position array and a hash index beside them: 110
// bytes a field in 100,000 hashes of ten, against Redis's 21. Packed, a
// pair costs its bytes and two, and the hash one allocation.
//
// Finding a field is a scan, as in a listpack: a compact hash is small by
// definition (EncodingLimits), and HashValue leaves this form, for good,
// once it is not. As in Redis, an operator who raises
// hash-max-listpack-entries into the thousands makes each read and write
// of such a hash a scan of that many pairs (a load appends without one).
// Reads never write: a snapshot's thread may read the same buffer (a copy
// shares it until either changes; a change to a shared buffer writes a
// new one).
//
// The bytes a read hands out point into the buffer: valid until the pairs
// change, which is how commands use them (read, reply or copy, then change).

import Glibc

/// A compact hash's pairs, in order. Core loop only, like the hash.
struct PackedPairs {
    struct Header {
        /// Pairs held.
        var count: Int
        /// Bytes of the buffer in use.
        var used: Int
    }

    final class Storage: ManagedBuffer<Header, UInt8> {}

    /// nil until the first pair.
    private var storage: Storage?

    var count: Int { storage?.header.count ?? 0 }

    /// Bytes of pairs held.
    var byteCount: Int { storage?.header.used ?? 0 }

    // MARK: Reading

    /// The pair at byte `offset`, and the offset of the next one.
    func pair(atOffset offset: Int) -> (field: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, next: Int) {
        storage!.withUnsafeMutablePointerToElements { base in
            let bytes = UnsafeRawPointer(base)
            var at = offset
            let fieldCount = PackedPairs.readLength(bytes, &at)
            let valueCount = PackedPairs.readLength(bytes, &at)
            let field = UnsafeRawBufferPointer(start: bytes + at, count: fieldCount)
            let value = UnsafeRawBufferPointer(start: bytes + at + fieldCount, count: valueCount)
            return (field, value, at + fieldCount + valueCount)
        }
    }

    /// The byte offset of the pair whose field is `field`, if present.
    func offset(of field: UnsafeRawBufferPointer) -> Int? {
        guard let storage else { return nil }
        return storage.withUnsafeMutablePointers { header, base in
            let bytes = UnsafeRawPointer(base)
            let used = header.pointee.used
            var at = 0
            while at < used {
                let start = at
                let fieldCount = PackedPairs.readLength(bytes, &at)
                let valueCount = PackedPairs.readLength(bytes, &at)
                if fieldCount == field.count
                    && (fieldCount == 0 || memcmp(bytes + at, field.baseAddress!, fieldCount) == 0)
                {
                    return start
                }
                at += fieldCount + valueCount
            }
            return nil
        }
    }

    /// The byte offset of the pair at `position` (0..<count): a walk from
    /// the first pair.
    func offset(ofPosition position: Int) -> Int {
        precondition(position >= 0 && position < count, "a hash position out of range")
        var at = 0
        for _ in 0..<position { at = pair(atOffset: at).next }
        return at
    }

    /// Calls `body` with each pair in order while it returns true.
    func forEach<E: Error>(
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(E) -> Bool
    ) throws(E) {
        var at = 0
        let used = byteCount
        while at < used {
            let (field, value, next) = pair(atOffset: at)
            guard try body(field, value) else { return }
            at = next
        }
    }

    // MARK: Changing

    /// Adds a pair after the last; the field must be absent.
    mutating func append(_ field: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        let end = byteCount
        splice(end, end, field, value, countChange: 1)
    }

    /// Gives the pair at byte `offset` the value `value`.
    mutating func replaceValue(atOffset offset: Int, with value: UnsafeRawBufferPointer) {
        let (field, old, next) = pair(atOffset: offset)
        if old.count == value.count, isKnownUniquelyReferenced(&storage) {
            // Same length (a counter's next value, mostly): written over.
            if let source = value.baseAddress {
                UnsafeMutableRawPointer(mutating: old.baseAddress!).copyMemory(from: source, byteCount: value.count)
            }
            return
        }
        let used = byteCount
        let newUsed = used - old.count + value.count
        if PackedPairs.lengthSize(old.count) == PackedPairs.lengthSize(value.count),
            isKnownUniquelyReferenced(&storage), let current = storage,
            newUsed <= current.capacity, current.capacity <= 2 * newUsed + 64
        {
            // Another length in the same room (HINCRBY from 9 to 10): the
            // pairs after it move, the field stays where it is.
            let valueAt = UnsafeMutableRawPointer(mutating: old.baseAddress!)
            (valueAt + value.count).copyMemory(from: valueAt + old.count, byteCount: used - next)
            if let source = value.baseAddress { valueAt.copyMemory(from: source, byteCount: value.count) }
            var at = offset + PackedPairs.lengthSize(field.count)
            current.withUnsafeMutablePointers { header, base in
                PackedPairs.writeLength(value.count, UnsafeMutableRawPointer(base), &at)
                header.pointee.used = newUsed
            }
            return
        }
        // The field's bytes live in the buffer the splice may free or move:
        // copied out first.
        let fieldCopy = [UInt8](field)
        fieldCopy.withUnsafeBytes { splice(offset, next, $0, value, countChange: 0) }
    }

    /// Removes the pair at byte `offset`.
    mutating func remove(atOffset offset: Int) {
        let next = pair(atOffset: offset).next
        splice(offset, next, nil, nil, countChange: -1)
    }

    /// Replaces the bytes `start..<end` with the pair `field`, `value` (or
    /// with nothing): in place when nobody else holds the buffer, it has
    /// the room, and would not be left mostly empty; else in a new buffer
    /// with an eighth to spare (a hash built by one HSET after another does
    /// not copy itself each time, and wastes little).
    private mutating func splice(
        _ start: Int, _ end: Int, _ field: UnsafeRawBufferPointer?, _ value: UnsafeRawBufferPointer?,
        countChange: Int
    ) {
        let inserted = field.map { PackedPairs.encodedSize($0.count, value!.count) } ?? 0
        let used = byteCount
        let newUsed = used - (end - start) + inserted
        let newCount = count + countChange
        if newCount == 0 {
            storage = nil
            return
        }
        // Checked before `current` holds a second reference.
        if isKnownUniquelyReferenced(&storage), let current = storage,
            newUsed <= current.capacity, current.capacity <= 2 * newUsed + 64
        {
            current.withUnsafeMutablePointers { header, base in
                let bytes = UnsafeMutableRawPointer(base)
                (bytes + start + inserted).copyMemory(from: bytes + end, byteCount: used - end)
                if let field, let value { PackedPairs.write(field, value, to: bytes + start) }
                header.pointee = Header(count: newCount, used: newUsed)
            }
            return
        }
        let fresh = Storage.create(minimumCapacity: newUsed + newUsed / 8) { _ in
            Header(count: newCount, used: newUsed)
        }
        let old = storage
        unsafeDowncast(fresh, to: Storage.self).withUnsafeMutablePointerToElements { base in
            let target = UnsafeMutableRawPointer(base)
            old?.withUnsafeMutablePointerToElements { source in
                target.copyMemory(from: source, byteCount: start)
                (target + start + inserted).copyMemory(from: source + end, byteCount: used - end)
            }
            if let field, let value { PackedPairs.write(field, value, to: target + start) }
        }
        storage = unsafeDowncast(fresh, to: Storage.self)
    }

    // MARK: Encoding

    /// Bytes a pair of these lengths takes.
    static func encodedSize(_ fieldCount: Int, _ valueCount: Int) -> Int {
        lengthSize(fieldCount) + lengthSize(valueCount) + fieldCount + valueCount
    }

    private static func lengthSize(_ length: Int) -> Int { length < 255 ? 1 : 5 }

    private static func write(
        _ field: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, to target: UnsafeMutableRawPointer
    ) {
        var at = 0
        writeLength(field.count, target, &at)
        writeLength(value.count, target, &at)
        if let base = field.baseAddress { (target + at).copyMemory(from: base, byteCount: field.count) }
        at += field.count
        if let base = value.baseAddress { (target + at).copyMemory(from: base, byteCount: value.count) }
    }

    private static func writeLength(_ length: Int, _ target: UnsafeMutableRawPointer, _ at: inout Int) {
        precondition(length <= Int(UInt32.max), "a hash field or value of 4 GiB")
        if length < 255 {
            target.storeBytes(of: UInt8(length), toByteOffset: at, as: UInt8.self)
            at += 1
        } else {
            target.storeBytes(of: 255, toByteOffset: at, as: UInt8.self)
            target.storeBytes(of: UInt32(length).littleEndian, toByteOffset: at + 1, as: UInt32.self)
            at += 5
        }
    }

    private static func readLength(_ bytes: UnsafeRawPointer, _ at: inout Int) -> Int {
        let first = bytes.load(fromByteOffset: at, as: UInt8.self)
        if first < 255 {
            at += 1
            return Int(first)
        }
        let length = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at + 1, as: UInt32.self))
        at += 5
        return Int(length)
    }
}
