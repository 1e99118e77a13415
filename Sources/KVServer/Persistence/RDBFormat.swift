// RDBFormat.swift: the numbers of Redis 7.0's RDB format (version 10) that
// both directions use: value types, opcodes, the length encoding's tags.
// src/rdb.h defines them; the names here follow it.

/// RDB's constants.
enum RDBFormat {
    /// The version kvd writes, Redis 7.0's; it loads 1 through this.
    static let version = 10

    // Value types.
    static let string: UInt8 = 0
    static let list: UInt8 = 1
    static let set: UInt8 = 2
    static let sortedSet: UInt8 = 3
    static let hash: UInt8 = 4
    static let sortedSet2: UInt8 = 5
    static let module: UInt8 = 6
    static let module2: UInt8 = 7
    static let hashZipmap: UInt8 = 9
    static let listZiplist: UInt8 = 10
    static let setIntset: UInt8 = 11
    static let sortedSetZiplist: UInt8 = 12
    static let hashZiplist: UInt8 = 13
    static let listQuicklist: UInt8 = 14
    static let streamListpacks: UInt8 = 15
    static let hashListpack: UInt8 = 16
    static let sortedSetListpack: UInt8 = 17
    static let listQuicklist2: UInt8 = 18
    static let streamListpacks2: UInt8 = 19

    // Opcodes.
    static let function2: UInt8 = 245
    static let function: UInt8 = 246
    static let moduleAux: UInt8 = 247
    static let idle: UInt8 = 248
    static let frequency: UInt8 = 249
    static let aux: UInt8 = 250
    static let resizeDB: UInt8 = 251
    static let expireTimeMilliseconds: UInt8 = 252
    static let expireTime: UInt8 = 253
    static let selectDB: UInt8 = 254
    static let eof: UInt8 = 255

    // A quicklist-2 node's container.
    static let plainNode = 1
    static let packedNode = 2

    /// Redis's name for a value type kvd cannot hold, for the message that
    /// refuses a file holding one.
    static func unsupportedTypeName(_ type: UInt8) -> String? {
        switch type {
        case module, module2: "a module value (RDB type \(type))"
        case streamListpacks, streamListpacks2: "a stream (RDB type \(type))"
        default: nil
        }
    }
}
