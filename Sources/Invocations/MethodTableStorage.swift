// MethodTableStorage.swift: the entries of a method table, in one object
// that every copy of the table refers to without counting references.
//
// Why: a call reads its target type's table through the `methods` getter,
// which returns a copy. With the entries in two arrays held by the table,
// that copy cost a retain and a release of each array per call, on counts
// that every posting thread writes (a shared cache line per call between
// the producers' cores), and a larger table than two words was destroyed
// through its generic type's metadata, fetched from the runtime's cache.
// Storages are interned (`MethodRegistry.storage(extending:with:)`): a table
// built with the same entries in the same order, however often (a generic
// type's computed `methods` is built on every access), is one storage, kept
// for the process's life, so a table refers to it unretained and its copy
// is two plain words.

/// The entries of one method table, unretained (every entry lives as long
/// as the process), in registration order and by selector.
@usableFromInline
final class MethodTableStorage: Sendable {
    /// The entries in registration order.
    let ordered: [Unmanaged<MethodEntry>]
    /// The same entries by selector.
    let bySelector: [Selector: Unmanaged<MethodEntry>]

    init(ordered: [Unmanaged<MethodEntry>]) {
        self.ordered = ordered
        bySelector = Dictionary(uniqueKeysWithValues: ordered.map { ($0._withUnsafeGuaranteedRef { $0.selector }, $0) })
    }

    /// Up to this many methods, a call finds its entry by comparing
    /// selectors in order: comparing a short selector (a small string,
    /// compared as two words) with each of a few entries costs less than
    /// hashing it with SipHash for the dictionary.
    static var linearSearchLimit: Int { 8 }

    func entry(for selector: borrowing Selector) -> Unmanaged<MethodEntry>? {
        if ordered.count <= Self.linearSearchLimit {
            for entry in ordered where entry._withUnsafeGuaranteedRef({ $0.selector == selector }) { return entry }
            return nil
        }
        return bySelector[copy selector]
    }
}
