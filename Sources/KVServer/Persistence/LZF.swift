// LZF.swift: the decompressor for RDB strings Redis stored LZF-compressed
// (RDB_ENC_LZF; Redis compresses strings over 20 bytes when
// rdbcompression is on, its default). Written from the format: a control
// byte below 32 starts a run of control+1 literal bytes; any other is a
// back reference, length (control >> 5) + 2 (7 meaning "add the next
// byte"), offset ((control & 31) << 8 | next byte) + 1 back from the end
// of the output. kvd does not compress what it writes (a choice: the
// writer thread stays simple and a snapshot loads fast; redis-server
// reads uncompressed strings alike).

/// LZF decompression.
enum LZF {
    /// `compressed` expanded to exactly `length` bytes; nil when the input
    /// is malformed (a reference before the start, a run past either end,
    /// or a result of another length).
    static func decompress(_ compressed: [UInt8], length: Int) -> [UInt8]? {
        var output = [UInt8]()
        // No more than the input can expand to (a 3-byte reference makes at
        // most 264 bytes): `length` comes from the file, or from a client's
        // FUNCTION RESTORE payload, and may claim gigabytes.
        output.reserveCapacity(Swift.min(length, compressed.count &* 88 &+ 64))
        var index = 0
        let count = compressed.count
        while index < count {
            let control = Int(compressed[index])
            index += 1
            if control < 32 {
                let run = control + 1
                guard index + run <= count, output.count + run <= length else { return nil }
                output.append(contentsOf: compressed[index..<index + run])
                index += run
            } else {
                var run = control >> 5
                if run == 7 {
                    guard index < count else { return nil }
                    run += Int(compressed[index])
                    index += 1
                }
                run += 2
                guard index < count else { return nil }
                let back = ((control & 31) << 8 | Int(compressed[index])) + 1
                index += 1
                guard back <= output.count, output.count + run <= length else { return nil }
                // The reference may overlap what it produces (a repeated byte): copy one at a time.
                var from = output.count - back
                for _ in 0..<run {
                    output.append(output[from])
                    from += 1
                }
            }
        }
        return output.count == length ? output : nil
    }
}
