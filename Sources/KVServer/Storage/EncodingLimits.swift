// EncodingLimits.swift: Redis's thresholds between a collection's small
// and large encodings (hash-max-listpack-entries and -value,
// set-max-intset-entries), which CONFIG SET changes at run time. A hash
// under them is packed in one buffer, as Redis's listpack (HashValue);
// kvd's other collections have one layout whatever their size
// (Storage/Types/), so for them these decide only what OBJECT ENCODING
// reports, and with it the order a small set or sorted set keeps
// (numeric order, insertion order), as Redis's conversions do. Shared by
// a dispatcher's databases, on the core loop only, like the clock.

/// The encoding thresholds, with Redis 7.0's defaults (its built-in ones,
/// as redis-server runs without a configuration file: 512 hash entries,
/// where the sample redis.conf says 128).
final class EncodingLimits {
    /// hash-max-listpack-entries (alias hash-max-ziplist-entries).
    var hashEntries = 512
    /// hash-max-listpack-value (alias hash-max-ziplist-value).
    var hashValue = 64
    /// set-max-intset-entries.
    var intsetEntries = 512
    /// list-max-listpack-size and list-compress-depth: kept for CONFIG GET
    /// (Redis 7.0 encodes every list as a quicklist whatever they are;
    /// kvd's list nodes hold up to 8 KiB, the default -2's size, whatever
    /// they are: ListValue.nodeLimit).
    var listpackSize = -2
    var compressDepth = 0
    /// zset-max-listpack-entries and -value.
    var zsetEntries = 128
    var zsetValue = 64
    /// hll-sparse-max-bytes: past it, a HyperLogLog turns dense.
    var hllSparseBytes = 3000
    /// busy-reply-threshold (alias lua-time-limit), in ms: not an encoding
    /// threshold, but a CONFIG SET setting the scripts read (ScriptEngine).
    var busyReplyThreshold = 5000
}
