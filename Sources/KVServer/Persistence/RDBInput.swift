// RDBInput.swift: an RDB file being read: a descriptor read in 1 MiB
// chunks (or bytes in memory), with the CRC-64 of every byte consumed, so
// the loader can compare it with the file's last 8 bytes. The CRC runs
// over the consumed bytes in bulk, when the buffer is refilled and when
// it is asked for, not per read: a key and its value are three or four
// small reads, and a CRC call per read (with the exclusivity checks on
// this class's fields) was about a third of loading a snapshot of short
// strings (bench/snapshot-load-profile-2026-12-03.txt). Every read is
// checked against what is left: a truncated file ends in a clear error,
// never a trap.
import Glibc

/// An RDB file being read. One thread (the core's, at start-up).
final class RDBInput {
    // `@exclusivity(unchecked)`: one thread reads the file, and no method
    // reaches a field while another access to it is open; the runtime's
    // checks were a quarter of a load's instructions (same profile).
    @exclusivity(unchecked) private var buffer: [UInt8]
    @exclusivity(unchecked) private var position = 0
    private let fd: Int32
    private var atEnd: Bool
    /// Where read(2) puts each chunk (allocated once).
    private var chunk: [UInt8] = []
    /// The CRC of the bytes consumed before `buffer[checksummed]`.
    @exclusivity(unchecked) private var crcSoFar = CRC64()
    /// Where in `buffer` the consumed bytes not yet in `crcSoFar` start.
    @exclusivity(unchecked) private var checksummed = 0
    /// Bytes consumed, for error messages.
    @exclusivity(unchecked) private(set) var offset = 0

    /// The CRC-64 of every byte consumed so far.
    var crc: CRC64 {
        checksumConsumed()
        return crcSoFar
    }
    /// The file's size (what a load can hold at most: a key takes 3 bytes or more).
    let size: Int

    private static let chunk = 1 << 20

    /// Reads `fd` (which stays the caller's to close).
    init(fd: Int32) {
        self.fd = fd
        buffer = []
        atEnd = false
        chunk = [UInt8](repeating: 0, count: RDBInput.chunk)
        var status = stat()
        size = fstat(fd, &status) == 0 ? Int(status.st_size) : 0
    }

    /// Reads `bytes`.
    init(bytes: [UInt8]) {
        fd = -1
        buffer = bytes
        atEnd = true
        size = bytes.count
    }

    private func truncated() -> PersistenceError {
        PersistenceError(
            "unexpected end of file at byte \(offset + (buffer.count - position)): the RDB file is truncated")
    }

    /// Makes `count` bytes available at `position`, reading more when needed.
    private func fill(_ count: Int) throws(PersistenceError) {
        guard buffer.count - position < count else { return }
        checksumConsumed()
        buffer.removeSubrange(0..<position)
        position = 0
        checksummed = 0
        while buffer.count < count && !atEnd {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw PersistenceError.system("read", "the RDB file") }
            if got == 0 { atEnd = true }
            buffer.append(contentsOf: chunk[0..<got])
        }
        guard buffer.count >= count else { throw truncated() }
    }

    func byte() throws(PersistenceError) -> UInt8 {
        try fill(1)
        let value = buffer[position]
        consume(1)
        return value
    }

    func bytes(_ count: Int) throws(PersistenceError) -> [UInt8] {
        guard count >= 0, count <= Int(Int32.max) * 4 else { throw truncated() }
        try fill(count)
        let slice = buffer.withUnsafeBytes {
            [UInt8](copying: UnsafeRawBufferPointer(rebasing: $0[position..<position + count]))
        }
        consume(count)
        return slice
    }

    /// A `count`-byte little-endian number.
    func littleEndian(_ count: Int) throws(PersistenceError) -> UInt64 {
        try fill(count)
        let value = buffer.littleEndian(at: position, bytes: count)
        consume(count)
        return value
    }

    /// A `count`-byte big-endian number.
    func bigEndian(_ count: Int) throws(PersistenceError) -> UInt64 {
        try fill(count)
        var value: UInt64 = 0
        for k in 0..<count { value = value << 8 | UInt64(buffer[position + k]) }
        consume(count)
        return value
    }

    /// The 8 checksum bytes, which the CRC does not cover; nil when the
    /// file ends right after EOF (RDB versions before 5 have none).
    func trailer() throws(PersistenceError) -> UInt64? {
        try? fill(8)
        guard buffer.count - position >= 8 else { return nil }
        checksumConsumed()
        let value = buffer.littleEndian(at: position, bytes: 8)
        position += 8
        checksummed = position
        offset += 8
        return value
    }

    private func consume(_ count: Int) {
        position += count
        offset += count
    }

    /// Adds the bytes consumed since the last call to the CRC.
    private func checksumConsumed() {
        guard checksummed < position else { return }
        buffer.withUnsafeBytes { crcSoFar.update(UnsafeRawBufferPointer(rebasing: $0[checksummed..<position])) }
        checksummed = position
    }
}
