// StandardError.swift: the one way MainLoop writes a line for a human.
import Glibc

/// Writes `message` to file descriptor 2 (Swift 6 rejects `stderr` as not concurrency-safe).
func writeToStandardError(_ message: String) {
    var message = message
    message.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
