// ExpiryQueueTests.swift: the expiry queue against a plain model under
// random inserts, deadline changes, removals and compactions: every key
// once, handles that stay valid (and follow what `compact` reports), and
// keys leaving in deadline order.
import Testing

@testable import KVServer

@Suite struct ExpiryQueueTests {
    @Test func randomOperationsKeepDeadlineOrderAndHandles() {
        var queue = ExpiryQueue()
        var deadlines: [[UInt8]: Int64] = [:]  // the model
        var handles: [[UInt8]: Int] = [:]
        var random = SystemRandomNumberGenerator()
        for step in 0..<50_000 {
            let key = Array("k\(Int.random(in: 0..<2_000, using: &random))".utf8)
            let deadline = Int64.random(in: 0..<1_000, using: &random)
            switch (Int.random(in: 0..<3, using: &random), handles[key]) {
            case (0, nil), (1, nil):
                handles[key] = queue.insert(key, deadline: deadline)
                deadlines[key] = deadline
            case (0, let handle?), (1, let handle?):
                queue.update(handle, deadline: deadline)
                deadlines[key] = deadline
            case (_, let handle?):
                queue.remove(handle)
                handles[key] = nil
                deadlines[key] = nil
            default:
                break
            }
            if step % 5_000 == 4_999 { queue.compact { key, handle in handles[key] = handle } }
            #expect(queue.count == deadlines.count, "step \(step)")
            if let first = queue.first {
                #expect(first.deadline == deadlines.values.min(), "step \(step): the first is not the earliest")
                #expect(deadlines[queue.key(first.handle)] == first.deadline)
            }
        }
        for (key, handle) in handles { #expect(queue.key(handle) == key, "a handle lost its key") }
        var last = Int64.min
        while let (deadline, handle) = queue.first {
            #expect(deadline >= last, "keys left out of deadline order")
            #expect(deadlines.removeValue(forKey: queue.key(handle)) == deadline)
            last = deadline
            queue.remove(handle)
        }
        #expect(deadlines.isEmpty, "\(deadlines.count) keys were never in the queue")
    }

    // After a storm the free handles outnumber the live ones: the queue asks
    // to be compacted, and the handles it then reports find their keys.
    @Test func aMostlyFreeQueueAsksForCompactionAndRenumbersItsKeys() {
        var queue = ExpiryQueue()
        var handles: [Int] = []
        for i in 0..<8_192 { handles.append(queue.insert(Array("k\(i)".utf8), deadline: Int64(i))) }
        for i in 0..<7_000 { queue.remove(handles[i]) }
        #expect(queue.wantsCompaction)
        var renumbered: [[UInt8]: Int] = [:]
        queue.compact { key, handle in renumbered[key] = handle }
        #expect(!queue.wantsCompaction && renumbered.count == 1_192 && queue.count == 1_192)
        for (key, handle) in renumbered { #expect(queue.key(handle) == key) }
        #expect(queue.first.map { queue.key($0.handle) } == Array("k7000".utf8))
    }
}
