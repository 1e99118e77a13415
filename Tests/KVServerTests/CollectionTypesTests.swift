// CollectionTypesTests.swift: the value types behind hashes, lists and
// sets (Storage/Types/) and the parked clients' deadline heap: their
// orders, their encodings' conversions and their ring buffer, checked
// against plain arrays.
import Testing

@testable import KVServer

@Suite struct CollectionTypesTests {
    let limits = EncodingLimits()

    @Test func listRingMatchesAnArrayThroughPushesAndPopsAtBothEnds() {
        let list = ListValue()
        var model: [[UInt8]] = []
        var generator = SystemRandomNumberGenerator()
        var mismatches = 0  // one #expect at the end: an expectation per step is slow in debug builds
        for step in 0..<3_000 {
            let element = Array(String(step).utf8)
            switch Int.random(in: 0..<6, using: &generator) {
            case 0:
                list.pushFront(element)
                model.insert(element, at: 0)
            case 1, 2:
                list.pushBack(element)
                model.append(element)
            case 3:
                if list.popFront() != (model.isEmpty ? nil : model.removeFirst()) { mismatches += 1 }
            case 4:
                if list.popBack() != model.popLast() { mismatches += 1 }
            default:
                if !model.isEmpty {
                    let index = Int.random(in: 0..<model.count, using: &generator)
                    if list[index] != model[index] { mismatches += 1 }
                }
            }
            if list.count != model.count { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect((0..<list.count).map { list[$0] } == model)
    }

    @Test func listInsertRemoveKeepAndRemoveAllKeepTheOrder() {
        let list = ListValue()
        for element in ["a", "b", "a", "c", "a"] { list.pushBack(Array(element.utf8)) }
        list.insert(Array("x".utf8), at: 1)
        list.remove(at: 0)
        #expect(strings(list) == ["x", "b", "a", "c", "a"])
        #expect(list.removeAll(limit: 1, fromBack: true) { $0.elementsEqual("a".utf8) } == 1)
        #expect(strings(list) == ["x", "b", "a", "c"])
        list.keep(1..<3)
        #expect(strings(list) == ["b", "a"])
        #expect(list.removeAll(limit: 0, fromBack: false) { _ in true } == 2)
        #expect(list.isEmpty)
    }

    /// Elements of a few bytes up to past a node's limit, so that the
    /// changes in the middle split nodes, fill them and empty them.
    @Test func listNodesMatchAnArrayThroughChangesInTheMiddle() {
        let list = ListValue()
        var model: [[UInt8]] = []
        var generator = SystemRandomNumberGenerator()
        var mismatches = 0
        func element(_ step: Int) -> [UInt8] {
            let size = [1, 9, 200, 3_000, ListValue.nodeLimit + 5][Int.random(in: 0..<5, using: &generator)]
            return Array(repeating: UInt8(truncatingIfNeeded: step), count: size)
        }
        for step in 0..<2_000 {
            let index = model.isEmpty ? 0 : Int.random(in: 0..<model.count, using: &generator)
            switch Int.random(in: 0..<8, using: &generator) {
            case 0, 1:
                let inserted = element(step)
                let at = Int.random(in: 0...model.count, using: &generator)
                list.insert(inserted, at: at)
                model.insert(inserted, at: at)
            case 2 where !model.isEmpty:
                list.remove(at: index)
                model.remove(at: index)
            case 3 where !model.isEmpty:
                let replacement = element(step)
                list[index] = replacement
                model[index] = replacement
            case 4:
                list.pushBack(element(step))
                model.append(list[list.count - 1])
            case 5 where model.count > 20:
                list.keep(2..<(model.count - 3))
                model = Array(model[2..<(model.count - 3)])
            case 6 where !model.isEmpty:
                let victim = model[index]
                let removed = list.removeAll(limit: 2, fromBack: step % 2 == 0) { $0.elementsEqual(victim) }
                var matches = model.indices.filter { model[$0] == victim }
                if step % 2 == 0 { matches.reverse() }
                for gone in matches.prefix(2).sorted(by: >) { model.remove(at: gone) }
                if removed != min(2, matches.count) { mismatches += 1 }
            default:
                var seen: [[UInt8]] = []
                list.scan(from: model.count - 1, backward: true) { _, bytes in
                    seen.append(Array(bytes))
                    return true
                }
                if seen != model.reversed() { mismatches += 1 }
            }
            if list.count != model.count || !list.invariantsHold {
                Issue.record("step \(step): \(list.count) elements for \(model.count)")
                return
            }
        }
        #expect(mismatches == 0)
        #expect((0..<list.count).map { list[$0] } == model)
        #expect(list.copy().popFront() == model.first)
    }

    @Test func aDrainedListGivesItsRingBack() {
        let list = ListValue()
        for step in 0..<10_000 { list.pushBack(Array(String(step).utf8)) }
        for _ in 0..<9_990 { _ = list.popFront() }
        #expect(list.count == 10)
        #expect(list[0] == Array("9990".utf8))
        let copy = list.copy()
        _ = list.popBack()
        #expect(copy.count == 10)
    }

    @Test func aSmallHashKeepsInsertionOrderAndConvertsLikeRedis() {
        let hash = HashValue()
        #expect(hash.set(Array("b".utf8), Array("1".utf8), limits))
        #expect(hash.set(Array("a".utf8), Array("2".utf8), limits))
        #expect(hash.set(Array("c".utf8), Array("3".utf8), limits))
        #expect(!hash.set(Array("b".utf8), Array("4".utf8), limits))
        Array("b".utf8).withUnsafeBytes { _ = hash.remove($0) }
        #expect((0..<hash.count).map { String(decoding: hash.entry(at: $0).field, as: UTF8.self) } == ["a", "c"])
        #expect(hash.isCompact)
        hash.set(Array("long".utf8), [UInt8](repeating: 65, count: 65), limits)
        #expect(!hash.isCompact)
        let many = HashValue()
        for field in 0..<limits.hashEntries { many.set(Array(String(field).utf8), [], limits) }
        #expect(many.isCompact)
        many.set(Array("one more".utf8), [], limits)
        #expect(!many.isCompact)
        #expect(Array("127".utf8).withUnsafeBytes { many.value(of: $0).map { Array($0) } } == [])
    }

    /// A value is rewritten in its entry only when the entry is the hash's
    /// alone: a snapshot's copy keeps the values it was taken with.
    @Test func aHashsCopyKeepsItsValuesWhileTheOriginalChanges() {
        func value(_ hash: HashValue, _ field: String) -> String? {
            Array(field.utf8).withUnsafeBytes { hash.value(of: $0).map { String(decoding: $0, as: UTF8.self) } }
        }
        let hash = HashValue()
        for field in 0..<1_000 { hash.set(Array("f\(field)".utf8), Array("value \(field)".utf8), limits) }
        let copy = hash.copy()
        for field in 0..<1_000 { hash.set(Array("f\(field)".utf8), Array("v\(field)".utf8), limits) }
        hash.set(Array("f1".utf8), Array("a longer value than any before".utf8), limits)
        #expect((0..<1_000).allSatisfy { value(copy, "f\($0)") == "value \($0)" })
        #expect(value(hash, "f1") == "a longer value than any before")
        #expect((2..<1_000).allSatisfy { value(hash, "f\($0)") == "v\($0)" })
        // Alone again, the shorter value goes over the longer one in place.
        hash.set(Array("f1".utf8), Array("x".utf8), limits)
        #expect(value(hash, "f1") == "x")
        #expect(hash.count == 1_000 && copy.count == 1_000)
    }

    /// A compact hash (its pairs packed in one buffer) against a plain
    /// array of pairs, through random sets of new and present fields with
    /// values of every length (empty, the same length, longer and shorter,
    /// past 254 bytes, where a length takes five bytes; fields too),
    /// removals and copies; every read (value, position, in order,
    /// reader) at each step.
    @Test(arguments: [1, 2, 3])
    func aCompactHashMatchesAnArrayOfPairsThroughEveryChange(seed: UInt64) {
        let wide = EncodingLimits()
        wide.hashValue = 400
        wide.hashEntries = 64
        var generator = SeededGenerator(seed: seed)
        var hash = HashValue()
        var model: [(field: [UInt8], value: [UInt8])] = []
        var copies: [(HashValue, [(field: [UInt8], value: [UInt8])])] = []
        var mismatches: [String] = []
        func bytes(_ count: Int, _ seed: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &+ seed) } }
        func check(_ hash: HashValue, _ model: [(field: [UInt8], value: [UInt8])], _ step: Int) {
            var inOrder: [([UInt8], [UInt8])] = []
            hash.forEachEntry { field, value in
                inOrder.append((Array(field), Array(value)))
                return true
            }
            let reader = hash.reader()
            let same =
                hash.count == model.count && hash.isCompact
                && inOrder.elementsEqual(model, by: { $0.0 == $1.field && $0.1 == $1.value })
                && model.indices.allSatisfy { position in
                    Array(hash.entry(at: position).field) == model[position].field
                        && Array(reader[position].value) == model[position].value
                        && model[position].field.withUnsafeBytes { hash.value(of: $0).map(Array.init) }
                            == model[position].value
                }
            if !same { mismatches.append("step \(step): \(hash.count) pairs against \(model.count)") }
        }
        for step in 0..<4_000 {
            let name = Int.random(in: 0..<40, using: &generator)
            // A few fields past 254 bytes, so that a field's length takes five bytes too.
            let field = Array("f\(name)".utf8) + (name % 13 == 0 ? [UInt8](repeating: 0x66, count: 254 + name % 3) : [])
            let length = [0, 1, 3, 8, 60, 254, 255, 256, 400].randomElement(using: &generator)!
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                let value = bytes(length, step)
                let isNew = hash.set(field, value, wide)
                if let place = model.firstIndex(where: { $0.field == field }) {
                    model[place].value = value
                    if isNew { mismatches.append("step \(step): a present field set as new") }
                } else {
                    model.append((field, value))
                    if !isNew { mismatches.append("step \(step): a new field set as present") }
                }
            case 6..<9:
                let removed = field.withUnsafeBytes { hash.remove($0) }
                if let place = model.firstIndex(where: { $0.field == field }) {
                    model.remove(at: place)
                    if !removed { mismatches.append("step \(step): a present field not removed") }
                } else if removed {
                    mismatches.append("step \(step): an absent field removed")
                }
            default:
                // A copy keeps what it was given while the original changes
                // (a snapshot's view), and the original keeps its own while
                // the copy changes.
                let copy = hash.copy()
                copies.append((copy, model))
                if Bool.random(using: &generator) {
                    swap(&hash, &copies[copies.count - 1].0)
                }
            }
            check(hash, model, step)
        }
        for (copy, expected) in copies.suffix(20) { check(copy, expected, -1) }
        let firstMismatches = Array(mismatches.prefix(5))
        #expect(firstMismatches.isEmpty)
    }

    /// Becoming a hashtable keeps a compact hash's pairs and their order,
    /// and a copy taken before stays compact with its own.
    @Test func aCompactHashBecomesATableWithItsPairsInOrder() {
        let hash = HashValue()
        for field in 0..<limits.hashEntries { hash.set(Array("f\(field)".utf8), Array("v\(field)".utf8), limits) }
        let copy = hash.copy()
        hash.set(Array("f7".utf8), Array("same".utf8), limits)  // a present field: still compact
        #expect(hash.isCompact)
        hash.set(Array("one more".utf8), Array("x".utf8), limits)
        #expect(!hash.isCompact && copy.isCompact)
        var fields: [String] = []
        hash.forEachEntry { field, _ in
            fields.append(String(decoding: field, as: UTF8.self))
            return true
        }
        #expect(fields == (0..<limits.hashEntries).map { "f\($0)" } + ["one more"])
        #expect(Array("f7".utf8).withUnsafeBytes { hash.value(of: $0).map(Array.init) } == Array("same".utf8))
        #expect(Array("f7".utf8).withUnsafeBytes { copy.value(of: $0).map(Array.init) } == Array("v7".utf8))
        #expect(copy.count == limits.hashEntries)
        // A value past hash-max-listpack-value on a present field converts too.
        let small = HashValue()
        small.set(Array("a".utf8), Array("1".utf8), limits)
        small.set(Array("b".utf8), Array("2".utf8), limits)
        small.set(Array("a".utf8), [UInt8](repeating: 65, count: limits.hashValue + 1), limits)
        #expect(!small.isCompact && small.count == 2)
        #expect(String(decoding: small.entry(at: 1).field, as: UTF8.self) == "b")
    }

    /// A snapshot's hash loads in its order, packed when within the limits,
    /// and a field that comes twice is refused, packed or not.
    @Test func aLoadedHashKeepsItsOrderAndRefusesARepeatedField() {
        let pairs = (0..<100).flatMap { [Array("f\(99 - $0)".utf8), Array("v\($0)".utf8)] }
        let loaded = HashValue.loading(pairs, limits)
        #expect(loaded?.isCompact == true)
        #expect(
            loaded.map { (0..<$0.count).map { loaded!.entry(at: $0).field }.map(Array.init) }
                == stride(from: 0, to: pairs.count, by: 2).map { pairs[$0] })
        #expect(HashValue.loading(pairs + [Array("f5".utf8), []], limits) == nil)
        let many = (0...limits.hashEntries).flatMap { [Array("f\($0)".utf8), []] }
        #expect(HashValue.loading(many, limits)?.isCompact == false)
        #expect(HashValue.loading(many + [Array("f0".utf8), []], limits) == nil)
    }

    @Test func anIntsetStaysSortedUntilAMemberIsNotAnInteger() {
        let set = SetValue()
        for member in ["10", "-5", "3", "3", "0"] { set.add(Array(member.utf8), limits) }
        #expect((0..<set.count).map { String(decoding: set[$0], as: UTF8.self) } == ["-5", "0", "3", "10"])
        #expect(set.isIntset)
        set.add(Array("007".utf8), limits)  // not as Redis writes an integer
        #expect(!set.isIntset)
        #expect(set.count == 5)
        let big = SetValue()
        for member in 0...limits.intsetEntries { big.add(Array(String(member).utf8), limits) }
        #expect(!big.isIntset)
        #expect(big.contains(Array("512".utf8)))
    }

    @Test func aLargeTableRemovesByMovingTheLastMember() {
        var table = MemberTable<[UInt8]>()
        table.keepsOrder = false
        for member in ["a", "b", "c", "d"] { table.append(Array(member.utf8)) }
        table.remove(at: 1)
        #expect(table.members.map { String(decoding: $0, as: UTF8.self) } == ["a", "d", "c"])
        #expect(table.position(of: Array("d".utf8)) == 1)
        #expect(table.position(of: Array("b".utf8)) == nil)
    }

    /// The hash index finds every member at its position through growth,
    /// removals that shift the slots after them back, and both orders.
    @Test func theIndexFindsEveryMemberThroughAppendsRemovalsAndInsertions() {
        var table = MemberTable<[UInt8]>()
        var generator = SystemRandomNumberGenerator()
        var mismatches = 0
        for step in 0..<6_000 {
            if step == 600 { table.keepsOrder = false }
            let member = Array("m\(Int.random(in: 0..<1_500, using: &generator))".utf8)
            if let (position, slot) = table.locate(member) {
                if table.members[position] != member || table.position(of: member) != position { mismatches += 1 }
                table.remove(at: position, slot: step % 2 == 0 ? slot : nil)
            } else if table.keepsOrder && table.count > 0 {
                table.insert(member, at: Int.random(in: 0...table.count, using: &generator))
            } else {
                table.append(member)
            }
            if step % 500 == 0 {
                for position in 0..<table.count where table.position(of: table.members[position]) != position {
                    mismatches += 1
                }
            }
        }
        #expect(mismatches == 0)
        #expect(Set(table.members).count == table.count)
        #expect((0..<table.count).allSatisfy { table.position(of: table.members[$0]) == $0 })
        #expect((1_500..<1_600).allSatisfy { table.position(of: Array("m\($0)".utf8)) == nil })
    }

    /// How often `sortedSet` disagrees with `model` (in Redis's order) on a
    /// score, a rank, an element at a rank, or the walk back from the tail.
    private func orderMismatches(_ sortedSet: SortedSetValue, _ model: [(score: Double, member: [UInt8])]) -> Int {
        var mismatches = 0  // one #expect at the end: an expectation per step is slow in debug builds
        for (index, element) in model.enumerated() {
            if sortedSet.rank(of: element.member) != index { mismatches += 1 }
            if sortedSet.score(of: element.member) != element.score { mismatches += 1 }
            if sortedSet.order.node(atRank: index + 1)?.member != element.member { mismatches += 1 }
        }
        var backwards: [[UInt8]] = []
        var node = sortedSet.order.tail
        while let current = node {
            backwards.append(current.member)
            node = current.backward
        }
        return mismatches + (backwards == model.reversed().map(\.member) ? 0 : 1)
    }

    private func sortModel(_ model: inout [(score: Double, member: [UInt8])]) {
        model.sort { SkipList.precedes($0.score, $0.member, $1.score, $1.member) }
    }

    @Test func aSortedSetsRanksScoresAndOrderMatchASortedArray() {
        let sortedSet = SortedSetValue()
        var model: [(score: Double, member: [UInt8])] = []
        var generator = SystemRandomNumberGenerator()
        var mismatches = 0  // one #expect at the end: an expectation per step is slow in debug builds
        for step in 0..<3_000 {
            let member = Array("m\(Int.random(in: 0..<300, using: &generator))".utf8)
            let score = Double(Int.random(in: 0..<20, using: &generator))  // many ties: member order decides
            let existing = model.firstIndex { $0.member == member }
            if let existing, step % 3 == 0 {
                if !sortedSet.remove(member) { mismatches += 1 }
                model.remove(at: existing)
            } else if let existing {
                // A new score: in place when the order allows, else moved.
                if sortedSet.set(member, score, limits) { mismatches += 1 }
                model[existing].score = score
                sortModel(&model)
            } else {
                if !sortedSet.set(member, score, limits) { mismatches += 1 }
                model.append((score, member))
                sortModel(&model)
            }
            if sortedSet.remove(Array("absent".utf8)) { mismatches += 1 }
        }
        #expect(mismatches + orderMismatches(sortedSet, model) == 0)
        #expect(sortedSet.count == model.count)
        #expect(orderMismatches(sortedSet.copy(), model) == 0)
        #expect(sortedSet.order.first(notBelow: { $0.score < 10 })?.member == model.first { $0.score >= 10 }?.member)
        #expect(sortedSet.order.last(notAbove: { $0.score > 10 })?.member == model.last { $0.score <= 10 }?.member)
    }

    @Test func aSortedSetLoadedInOrderRanksAndChangesAsOneFilledByInserts() {
        var model = (0..<3_000).map { (score: Double($0 / 7), member: Array("m\($0 % 7)-\($0)".utf8)) }
        sortModel(&model)
        let sortedSet = SortedSetValue()
        sortedSet.load(sorted: model.map { ($0.member, $0.score) }, limits)
        var generator = SystemRandomNumberGenerator()
        for step in 0..<600 {
            let at = Int.random(in: 0..<model.count, using: &generator)
            if step % 2 == 0 {
                sortedSet.remove(model[at].member)
                model.remove(at: at)
            } else {
                let member = Array("new\(step)".utf8)
                let score = Double(Int.random(in: 0..<500, using: &generator))
                sortedSet.set(member, score, limits)
                model.append((score, member))
                sortModel(&model)
            }
        }
        #expect(orderMismatches(sortedSet, model) == 0)
        #expect(sortedSet.count == model.count)
    }

    @Test func aSortedSetLoadedInOrderKeepsTheEncodingAndZerosOfOneSetInTurn() {
        for count in [3, 200] {
            let members = (0..<count).map { (member: Array("m\($0)".utf8), score: $0 < 2 ? -0.0 : Double($0)) }
            let loaded = SortedSetValue()
            loaded.load(sorted: members, limits)
            let setInTurn = SortedSetValue()
            for (member, score) in members { setInTurn.set(member, score, limits) }
            #expect(loaded.isCompact == setInTurn.isCompact)
            let pairs = loaded.elements(ranks: 0...(count - 1), reverse: false)
            let expected = setInTurn.elements(ranks: 0...(count - 1), reverse: false)
            #expect(pairs.map(\.member) == expected.map(\.member))
            #expect(pairs.map(\.score.sign) == expected.map(\.score.sign))
            #expect(members.allSatisfy { loaded.score(of: $0.member)?.sign == setInTurn.score(of: $0.member)?.sign })
        }
    }

    @Test func aSortedSetUpdatesScoresAndAnswersRanksBothWays() {
        let sortedSet = SortedSetValue()
        for (member, score) in [("a", 3.0), ("b", 1.0), ("c", 2.0)] { sortedSet.set(Array(member.utf8), score, limits) }
        #expect(!sortedSet.set(Array("a".utf8), 0.5, limits))
        #expect(sortedSet.rank(of: Array("a".utf8)) == 0)
        #expect(sortedSet.elements(ranks: 0...1, reverse: true).map(\.score) == [2.0, 1.0])
        #expect(sortedSet.remove(Array("c".utf8)))
        #expect(sortedSet.count == 2)
        // A node lives as long as its set: the copy is held while it is read.
        let copy = sortedSet.copy()
        #expect(withExtendedLifetime(copy) { copy.elements(ranks: 0...1, reverse: false).map(\.score) } == [0.5, 1.0])
    }

    @Test func aLargeCollectionIsFreedOnTheReclaimingThread() {
        let keyspace = Keyspace()
        let set = SetValue()
        for member in 0..<Reclaimer.collectionThreshold { set.add(Array(String(member).utf8), keyspace.limits) }
        keyspace.store(Array("big".utf8), .set(set))
        let before = Reclaimer.reclaimed
        keyspace.remove(Array("big".utf8))
        #expect(eventually { Reclaimer.reclaimed > before })
    }

    @Test func aBatchLetsGoOfBuffersAHugeRequestGrewAndKeepsSmallOnes() {
        var batch = RequestBatch()
        for member in 0..<100_000 { batch.appendArgument(Array(String(member).utf8)) }
        batch.endRequest()
        batch.removeAll()
        #expect(batch.spans.capacity * MemoryLayout<ArgumentSpan>.stride <= RequestBatch.largeCapacity)
        #expect(batch.bytes.capacity <= RequestBatch.largeCapacity)
        for argument in ["SET", "k", "v"] { batch.appendArgument(Array(argument.utf8)) }
        batch.endRequest()
        let kept = batch.spans.capacity
        batch.removeAll()
        #expect(batch.spans.capacity == kept && kept >= 3)  // a pipeline's batch allocates nothing next time
    }

    @Test func deadlinesComeOutEarliestFirst() {
        var heap = DeadlineHeap()
        let deadlines = (0..<500).map { _ in Int64.random(in: 0..<1_000) }
        for (client, deadline) in deadlines.enumerated() {
            heap.insert(.init(deadline: deadline, client: client, serial: client))
        }
        var out: [Int64] = []
        while let first = heap.removeFirst() { out.append(first.deadline) }
        #expect(out == deadlines.sorted())
    }

    private func strings(_ list: ListValue) -> [String] {
        (0..<list.count).map { String(decoding: list[$0], as: UTF8.self) }
    }
}
