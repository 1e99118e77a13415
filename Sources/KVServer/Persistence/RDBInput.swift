// RDBInput.swift: an RDB file being read: a descriptor read in 1 MiB
// chunks (or bytes in memory), with the CRC-64 running over every byte
// consumed, so the loader can compare it with the file's last 8 bytes.
// Every read is checked against what is left: a truncated file ends in a
// clear error, never a trap.
import Glibc

/// An RDB file being read. One thread (the core's, at start-up).
final class RDBInput {
    private var buffer: [UInt8]
    private var position = 0
    private let fd: Int32
    private var atEnd: Bool
    /// Where read(2) puts each chunk (allocated once).
    private var chunk: [UInt8] = []
    private(set) var crc = CRC64()
    /// Bytes consumed, for error messages.
    private(set) var offset = 0
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
        buffer.removeSubrange(0..<position)
        position = 0
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
        let slice = Array(buffer[position..<position + count])
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
        let value = buffer.littleEndian(at: position, bytes: 8)
        position += 8
        offset += 8
        return value
    }

    private func consume(_ count: Int) {
        buffer.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[position..<position + count])) }
        position += count
        offset += count
    }
}
