// ArgumentSlot.swift: an argument read where it lies. Copying an
// `(any Sendable)?` out of an argument list goes through the runtime's value
// witnesses (the Optional's, then the existential's, then the value's type's),
// about a hundred instructions; a check of two arguments spent more on those
// copies than on checking. The type a checked call needs is one word of the
// existential container, read in place.

/// The layout facts the in-place read relies on, verified once (by
/// `ArgumentSlot.layoutVerified`, which every method signature checks when
/// it is made) rather than assumed: an `(any Sendable)?` is the existential container
/// itself, three words of value buffer then the word of the stored value's
/// type metadata, with nil as a null type word.
enum ArgumentSlot {
    /// The type word's offset in the container.
    static let typeWordOffset = 3 * MemoryLayout<UnsafeRawPointer>.stride

    /// The address of the metadata of the type `slot`'s value was stored
    /// as, or 0 for a nil argument. A value stored as its exact type has that type's
    /// metadata; a class instance stored through a superclass or a protocol
    /// type may have another, which the caller then checks with a cast.
    @inline(__always)
    static func storedType(_ slot: UnsafePointer<(any Sendable)?>) -> UInt {
        UnsafeRawPointer(slot).load(fromByteOffset: typeWordOffset, as: UInt.self)
    }

    /// The address of a type's metadata, as the type word holds it.
    static func metadata(of type: Any.Type) -> UInt {
        UInt(bitPattern: unsafeBitCast(type, to: Int.self))
    }

    /// Traps, naming the fact, when this toolchain lays an argument out
    /// otherwise: reading it in place would then be wrong.
    static let layoutVerified: Bool = {
        struct Large: Sendable {
            let words: (Int, Int, Int, Int, Int) = (1, 2, 3, 4, 5)
        }
        final class Object: Sendable {}
        precondition(
            MemoryLayout<(any Sendable)?>.size == typeWordOffset + MemoryLayout<UnsafeRawPointer>.stride,
            "Invocations: (any Sendable)? is not an existential container of four words on this toolchain")
        func stored(_ value: (any Sendable)?) -> UInt {
            withUnsafePointer(to: value) { storedType($0) }
        }
        precondition(stored(nil) == 0, "Invocations: a nil argument's type word is not null on this toolchain")
        precondition(
            stored(42) == metadata(of: Int.self) && stored("text") == metadata(of: String.self)
                && stored(Large()) == metadata(of: Large.self) && stored(Object()) == metadata(of: Object.self),
            "Invocations: an argument's type word is not its type's metadata on this toolchain")
        return true
    }()
}
