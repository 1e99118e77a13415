// RDBOutput.swift: where an RDB file's bytes go while it is written: a
// 256 KiB buffer, flushed to a file descriptor with write(2) (or kept, for
// a file made in memory), with the CRC-64 running over every byte.
import Glibc

/// Why a snapshot could not be written or read; the description is the
/// message kvd logs and answers.
struct PersistenceError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    /// The failed system call and its errno's text.
    static func system(_ call: String, _ path: String) -> PersistenceError {
        PersistenceError("\(call) \(path): \(String(cString: strerror(errno)))")
    }
}

/// An RDB file being written. One thread at a time (the writer's).
final class RDBOutput {
    /// The bytes not yet written (all of them, for a file in memory).
    private(set) var buffer: [UInt8] = []
    /// The descriptor flushed to; -1 keeps everything in `buffer`.
    private let fd: Int32
    /// The file's name, for error messages.
    private let path: String
    private(set) var crc = CRC64()
    /// Bytes produced so far.
    private(set) var count = 0

    private static let flushSize = 256 * 1024

    /// Writes to `fd` (which stays the caller's to close), or to memory with -1.
    init(fd: Int32 = -1, path: String = "memory") {
        self.fd = fd
        self.path = path
        buffer.reserveCapacity(fd >= 0 ? RDBOutput.flushSize + 1024 : 0)
    }

    func byte(_ value: UInt8) throws {
        buffer.append(value)
        count += 1
        if buffer.count >= RDBOutput.flushSize { try flush() }
    }

    func bytes(_ bytes: UnsafeRawBufferPointer) throws {
        buffer.append(contentsOf: bytes)
        count += bytes.count
        if buffer.count >= RDBOutput.flushSize { try flush() }
    }

    func bytes(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { (raw) in try self.bytes(raw) }
    }

    /// Ends the file: the checksum of everything before it, little-endian,
    /// then everything goes to the descriptor.
    func finish() throws {
        buffer.withUnsafeBytes { crc.update($0) }
        var checksum = crc.value.littleEndian
        let tail = withUnsafeBytes(of: &checksum) { Array($0) }
        buffer.append(contentsOf: tail)
        count += 8
        try flush(checksummed: true)
    }

    /// Ends a file without a checksum (an append-only base in RESP).
    func finishWithoutChecksum() throws { try flush() }

    /// Hands the buffer to the descriptor (a file in memory keeps it).
    private func flush(checksummed: Bool = false) throws {
        guard fd >= 0 else { return }
        if !checksummed { buffer.withUnsafeBytes { crc.update($0) } }
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw PersistenceError.system("write", path)
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
