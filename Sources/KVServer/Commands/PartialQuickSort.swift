// PartialQuickSort.swift: Redis's pqsort (pqsort.c, after NetBSD's qsort:
// Bentley and McIlroy's quicksort with three-way partitioning), which
// sorts only the parts of an array that hold a range of positions. Redis
// uses it when a GEO search's COUNT keeps fewer members than it found;
// elements the comparison calls equal (members at the same distance) come
// out in the order its swaps leave them, so kvd makes the same swaps to
// keep the same members in the same order.

/// Sorts `elements` so that positions `lower...upper` hold what a full
/// sort would put there, with Redis's pqsort's choices among equals;
/// `compare` answers as C's comparators do (negative, 0, positive).
func partialQuickSort<Element>(
    _ elements: inout [Element], keeping lower: Int, through upper: Int, by compare: (Element, Element) -> Int
) {
    sortPart(&elements, from: 0, count: elements.count, lower, upper, compare)
}

/// `_pqsort` over `count` elements from `start`.
private func sortPart<Element>(
    _ a: inout [Element], from start: Int, count: Int, _ lower: Int, _ upper: Int,
    _ compare: (Element, Element) -> Int
) {
    var (start, count) = (start, count)
    func median(_ x: Int, _ y: Int, _ z: Int) -> Int {
        compare(a[x], a[y]) < 0
            ? (compare(a[y], a[z]) < 0 ? y : (compare(a[x], a[z]) < 0 ? z : x))
            : (compare(a[y], a[z]) > 0 ? y : (compare(a[x], a[z]) < 0 ? x : z))
    }
    func swapBlocks(_ x: Int, _ y: Int, _ length: Int) {
        for offset in 0..<max(length, 0) { a.swapAt(x + offset, y + offset) }
    }
    /// True when the part `first...last` holds none of `lower...upper`.
    func outside(_ first: Int, _ last: Int) -> Bool {
        (lower < first && upper < first) || (lower > last && upper > last)
    }
    while true {
        if count < 7 {
            // Insertion sort (nothing to do for none: SORT of a missing key
            // with BY and no LIMIT narrows to an empty window).
            guard count > 1 else { return }
            for next in start + 1..<start + count {
                var position = next
                while position > start && compare(a[position - 1], a[position]) > 0 {
                    a.swapAt(position, position - 1)
                    position -= 1
                }
            }
            return
        }
        var pivot = start + count / 2
        if count > 7 {
            var first = start
            var last = start + count - 1
            if count > 40 {
                let step = count / 8
                first = median(first, first + step, first + 2 * step)
                pivot = median(pivot - step, pivot, pivot + step)
                last = median(last - 2 * step, last - step, last)
            }
            pivot = median(first, pivot, last)
        }
        a.swapAt(start, pivot)
        // [start+1, pa): equal to the pivot; [pa, pb): less; (pc, pd]:
        // greater; (pd, end): equal again, until they are swapped to the middle.
        var (pa, pb) = (start + 1, start + 1)
        var (pc, pd) = (start + count - 1, start + count - 1)
        while true {
            while pb <= pc {
                let order = compare(a[pb], a[start])
                if order > 0 { break }
                if order == 0 {
                    a.swapAt(pa, pb)
                    pa += 1
                }
                pb += 1
            }
            while pb <= pc {
                let order = compare(a[pc], a[start])
                if order < 0 { break }
                if order == 0 {
                    a.swapAt(pc, pd)
                    pd -= 1
                }
                pc -= 1
            }
            if pb > pc { break }
            a.swapAt(pb, pc)
            pb += 1
            pc -= 1
        }
        let end = start + count
        swapBlocks(start, pb - min(pa - start, pb - pa), min(pa - start, pb - pa))
        swapBlocks(pb, end - min(pd - pc, end - pd - 1), min(pd - pc, end - pd - 1))
        let less = pb - pa
        if less > 1 && !outside(start, start + less - 1) {
            sortPart(&a, from: start, count: less, lower, upper, compare)
        }
        let greater = pd - pc
        guard greater > 1 else { return }
        start = end - greater
        count = greater
        if outside(start, start + greater - 1) { return }
    }
}
