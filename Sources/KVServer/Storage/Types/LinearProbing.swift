// LinearProbing.swift: the two operations MemberTable's index and
// NodeIndex share: an open-addressing table of 64-bit slots (0 empty),
// linear probing, a power-of-two size. Each table says where a slot's
// entry hashes to (`home`); what a slot holds is its own business.
//
// Removal shifts back the slots after the hole that would otherwise no
// longer be found (no tombstones, so a table that churns never fills with
// them), and growth places every slot again from its home.

enum LinearProbing {
    /// Empties slot `index` and shifts back the slots after it; `home`
    /// gives a slot's hash (masked here).
    @inline(__always)
    static func vacate(_ slots: inout [UInt64], _ index: Int, home: (UInt64) -> Int) {
        let mask = slots.count - 1
        var hole = index
        var next = index
        while true {
            next = (next + 1) & mask
            let slot = slots[next]
            if slot == 0 { break }
            let start = home(slot) & mask
            // The slot may move to the hole unless its home lies cyclically
            // in (hole, next].
            let stays = hole <= next ? (hole < start && start <= next) : (hole < start || start <= next)
            if !stays {
                slots[hole] = slot
                hole = next
            }
        }
        slots[hole] = 0
    }

    /// `old`'s slots placed again in a table of `size` slots (a power of two).
    @inline(__always)
    static func rehash(_ old: [UInt64], size: Int, home: (UInt64) -> Int) -> [UInt64] {
        var slots = [UInt64](repeating: 0, count: size)
        let mask = size - 1
        for slot in old where slot != 0 {
            var index = home(slot) & mask
            while slots[index] != 0 { index = (index + 1) & mask }
            slots[index] = slot
        }
        return slots
    }
}
