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
@usableFromInline
package enum ArgumentSlot {
    /// The type word's offset in the container.
    @inlinable
    static var typeWordOffset: Int { 3 * MemoryLayout<UnsafeRawPointer>.stride }

    /// The address of the metadata of the type `slot`'s value was stored
    /// as, or 0 for a nil argument. A value stored as its exact type has that type's
    /// metadata; a class instance stored through a superclass or a protocol
    /// type may have another, which the caller then checks with a cast.
    @inlinable @inline(__always)
    static func storedType(_ slot: UnsafePointer<(any Sendable)?>) -> UInt {
        UnsafeRawPointer(slot).load(fromByteOffset: typeWordOffset, as: UInt.self)
    }

    /// Initializes `target` with a copy of the argument in `source`: a nil
    /// is copied as its words, a value as the existential it is, which
    /// asks only the value's type to copy it. (A copy of the `Optional`
    /// asked the Optional's value witnesses for its case first: about 90
    /// instructions an argument instead of 30.)
    @inline(__always)
    package static func initialize(
        _ target: UnsafeMutablePointer<(any Sendable)?>, copying source: UnsafePointer<(any Sendable)?>
    ) {
        guard storedType(source) != 0 else {
            // A nil owns nothing: its words are all of it.
            UnsafeMutableRawPointer(target).copyMemory(
                from: source, byteCount: MemoryLayout<(any Sendable)?>.size)
            return
        }
        // Verified by `layoutVerified`: a non-nil `(any Sendable)?` is laid
        // out as the `any Sendable` it holds.
        source.withMemoryRebound(to: (any Sendable).self, capacity: 1) { value in
            target.withMemoryRebound(to: (any Sendable).self, capacity: 1) { $0.initialize(to: value.pointee) }
        }
    }

    /// Deinitializes the argument or result in `slot`: a nil owns nothing,
    /// and a value is destroyed as the existential it is (the `Optional`'s
    /// own destroy asks its value witnesses for the case first).
    @inline(__always)
    package static func deinitialize(_ slot: UnsafeMutablePointer<(any Sendable)?>) {
        guard storedType(slot) != 0 else { return }
        // Laid out as the `any Sendable` it holds (`layoutVerified`).
        slot.withMemoryRebound(to: (any Sendable).self, capacity: 1) { _ = $0.deinitialize(count: 1) }
    }

    /// The address of a type's metadata, as the type word holds it.
    @inlinable
    static func metadata(of type: Any.Type) -> UInt {
        UInt(bitPattern: unsafeBitCast(type, to: Int.self))
    }

    /// Traps, naming the fact, when this toolchain lays an argument out
    /// otherwise: reading it in place would then be wrong. (`fatalError`,
    /// not `precondition`: checked under -Ounchecked too.)
    static let layoutVerified: Bool = {
        struct Large: Sendable {
            let words: (Int, Int, Int, Int, Int) = (1, 2, 3, 4, 5)
        }
        final class Object: Sendable {}
        func require(_ fact: Bool, _ message: String) {
            if !fact { fatalError("Invocations: \(message) on this toolchain") }
        }
        require(
            MemoryLayout<(any Sendable)?>.size == typeWordOffset + MemoryLayout<UnsafeRawPointer>.stride,
            "(any Sendable)? is not an existential container of four words")
        func stored(_ value: (any Sendable)?) -> UInt {
            withUnsafePointer(to: value) { storedType($0) }
        }
        require(stored(nil) == 0, "a nil argument's type word is not null")
        require(
            stored(42) == metadata(of: Int.self) && stored("text") == metadata(of: String.self)
                && stored(Large()) == metadata(of: Large.self) && stored(Object()) == metadata(of: Object.self),
            "an argument's type word is not its type's metadata")
        return true
    }()
}
