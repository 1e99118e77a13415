// AttentionWord.swift: the mailbox's attention bits, alone on a cache line.
//
// The loop reads the word before every job; producers write the mailbox's
// mutex and tail on every post. Sharing a line would bounce it between the
// cores on every post: post throughput measured 23 against 40 M/s,
// depending on where malloc put the two. A Swift object is only 16-byte
// aligned, so the word is padded by a full line on each side: whatever
// 64-byte line holds it holds only padding besides.
import Synchronization

final class AttentionWord: Sendable {
    private let before: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// The `Mailbox.Attention` bits.
    let bits = Atomic<UInt8>(0)
    private let after: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}
