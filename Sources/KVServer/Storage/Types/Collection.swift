// Collection.swift: what a key holds when it is not a string: a hash, a
// list, a set or a sorted set. Each is a class, so a command changes it in place through
// the keyspace's one reference (no copy on write, no lookup to store it
// back); `copy()` is the deep copy COPY needs. Redis's names for the type
// (TYPE, SCAN ... TYPE) and the encoding (OBJECT ENCODING) live here, with
// the WRONGTYPE error every typed command answers.

/// Redis's error for a command run against a key of another type.
let wrongTypeError = "WRONGTYPE Operation against a key holding the wrong kind of value"

/// A key's value when it is a collection. Core loop only, like the keyspace.
enum Collection {
    case hash(HashValue)
    case list(ListValue)
    case set(SetValue)
    case sortedSet(SortedSetValue)

    /// TYPE's answer.
    var typeName: StaticString {
        switch self {
        case .hash: "hash"
        case .list: "list"
        case .set: "set"
        case .sortedSet: "zset"
        }
    }

    /// OBJECT ENCODING's answer: Redis 7.0's name for the representation
    /// Redis would have chosen for the same contents (see each type).
    var encoding: StaticString {
        switch self {
        case .hash(let hash): hash.isCompact ? "listpack" : "hashtable"
        case .list: "quicklist"  // Redis 7.0 encodes every list as a quicklist
        case .set(let set): set.isIntset ? "intset" : "hashtable"
        case .sortedSet(let sortedSet): sortedSet.isCompact ? "listpack" : "skiplist"
        }
    }

    /// Elements (fields, items, members).
    var count: Int {
        switch self {
        case .hash(let hash): hash.count
        case .list(let list): list.count
        case .set(let set): set.count
        case .sortedSet(let sortedSet): sortedSet.count
        }
    }

    /// A copy that shares nothing mutable with this one (COPY).
    func copy() -> Collection {
        switch self {
        case .hash(let hash): .hash(hash.copy())
        case .list(let list): .list(list.copy())
        case .set(let set): .set(set.copy())
        case .sortedSet(let sortedSet): .sortedSet(sortedSet.copy())
        }
    }
}
