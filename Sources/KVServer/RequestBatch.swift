// RequestBatch.swift: the requests of one read, as the core receives them.

/// Requests read from one connection, flattened: every request's arguments
/// (its name first) one after another in `arguments`, and where each request
/// ends. One array for the whole batch instead of one per request.
public struct RequestBatch: Sendable {
    /// Every request's arguments, in order.
    public var arguments: [[UInt8]] = []
    /// `ends[i]` is the index in `arguments` just past request `i`.
    public private(set) var ends: [Int] = []

    /// An empty batch.
    public init() {}

    /// The number of requests.
    public var count: Int { ends.count }

    /// Closes the request whose arguments were appended since the last one ended.
    public mutating func endRequest() {
        ends.append(arguments.count)
    }

    /// The requests after the first `count`, as a batch of their own.
    func dropping(first count: Int) -> RequestBatch {
        guard count > 0 else { return self }
        var rest = RequestBatch()
        let start = ends[count - 1]
        rest.arguments = Array(arguments[start...])
        rest.ends = ends[count...].map { $0 - start }
        return rest
    }

    /// Calls `body` with each request's arguments, in order, until it returns false.
    func forEach(_ body: (Request) -> Bool) {
        arguments.withUnsafeBufferPointer { all in
            var start = 0
            for end in ends {
                guard body(Request(rebasing: all[start..<end])) else { return }
                start = end
            }
        }
    }
}

/// One request's arguments, the command name first; a view into a batch.
typealias Request = UnsafeBufferPointer<[UInt8]>
