// Selector.swift: the name of a method, in Objective-C spelling.

/// The name of a method in Objective-C spelling: `"reset"`, `"add:"`, `"add:to:"`.
///
/// Its ``argumentCount`` is the number of colons, as in Objective-C.
public struct Selector: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The selector's spelling.
    public let name: String

    /// A selector from its spelling.
    public init(_ name: String) {
        self.name = name
    }

    public init(stringLiteral name: String) {
        self.name = name
    }

    /// The number of arguments the selector takes: its number of colons.
    public var argumentCount: Int {
        name.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: ":") ? 1 : 0) }
    }

    public var description: String { name }
}
