// InvocationTests.swift: selectors, method tables, signatures, the up-front
// checks and their messages, and invoking.
import Glibc
import Testing

@testable import Invocations
@testable import MainLoop

struct Refused: Error, Equatable { let reason: String }

// `@unchecked Sendable`: the tests that use it invoke it on one thread; a
// mutable core reached from several threads is a LoopBound's value instead.
final class Account: Invocable, @unchecked Sendable {
    static let methods = MethodTable<Account>()
        .method("deposit:note:times:", Account.deposit)
        .method("balance", Account.currentBalance)
        .method("reset", Account.reset)
        .method("withdraw:", Account.withdraw)
        .method("scale:", Account.scale)
        .method("nickname", Account.nickname)

    // Touched only by the thread that performs the invocation.
    var balance = 0
    var notes: [String?] = []

    func deposit(_ amount: Int, _ note: String?, _ times: Int) -> Int {
        balance += amount * times
        notes.append(note)
        return balance
    }
    func currentBalance() -> Int { balance }
    func reset() { balance = 0 }
    func withdraw(_ amount: Int) throws -> Int {
        guard amount <= balance else { throw Refused(reason: "insufficient funds") }
        balance -= amount
        return balance
    }
    func scale(_ factor: Double) -> Double { Double(balance) * factor }
    func nickname() -> String? { nil }
}

@Suite(.timeLimit(.minutes(5))) struct InvocationTests {
    @Test func selectorCountsItsColons() {
        #expect(Selector("reset").argumentCount == 0)
        #expect(Selector("add:").argumentCount == 1)
        let literal: Selector = "add:to:"
        #expect(literal.argumentCount == 2)
        #expect(literal == Selector("add:to:"))
    }

    @Test func signatureDescribesTheMethodOrIsNilForAnUnknownSelector() throws {
        let signature = try #require(Account.methods.signature(for: "deposit:note:times:"))
        #expect(signature.numberOfArguments == 3)
        #expect(signature.argumentTypes.map(\.name) == ["Int", "Optional<String>", "Int"])
        #expect(signature.argumentTypes.map(\.acceptsNil) == [false, true, false])
        #expect(ObjectIdentifier(signature.returnType) == ObjectIdentifier(Int.self))
        #expect(Account.methods.signature(for: "reset")?.returnTypeName == "()")
        #expect(Account.methods.signature(for: "launch:") == nil)
        #expect(
            Account.methods.selectors.map(\.name)
                == ["balance", "deposit:note:times:", "nickname", "reset", "scale:", "withdraw:"])
    }

    @Test func invokeCallsTheMethodWithItsArgumentsAndReturnsItsResult() throws {
        let account = Account()
        let deposit = try Invocation(target: account, selector: "deposit:note:times:", arguments: [5, nil, 3])
        #expect(try deposit.invoke() as? Int == 15)
        #expect(account.notes == [nil])
        let noted = try Invocation(target: account, selector: "deposit:note:times:", arguments: [1, "rent", 1])
        #expect(try noted.invoke() as? Int == 16)
        #expect(account.notes == [nil, "rent"])
        #expect(try Invocation(target: account, selector: "reset", arguments: []).invoke() == nil)
        #expect(account.balance == 0)
        // A method returning an Optional answers plain nil.
        #expect(try Invocation(target: account, selector: "nickname", arguments: []).invoke() == nil)
    }

    @Test func invokeRethrowsWhatTheMethodThrows() throws {
        let invocation = try Invocation(target: Account(), selector: "withdraw:", arguments: [10])
        #expect(throws: Refused(reason: "insufficient funds")) { try invocation.invoke() }
    }

    @Test func unknownSelectorIsRefusedNamingTheTypeAndWhatItAnswers() {
        let error = #expect(throws: InvocationError.self) {
            try Invocation(target: Account(), selector: "launch:", arguments: [1])
        }
        #expect(error == .unrecognizedSelector("launch:", targetType: "Account", answers: Account.methods.selectors))
        #expect(
            error?.description
                == "Account does not recognize selector 'launch:' (it answers: balance, deposit:note:times:, nickname, reset, scale:, withdraw:)"
        )
    }

    @Test func tooFewAndTooManyArgumentsAreRefused() {
        #expect(throws: InvocationError.argumentCountMismatch("deposit:note:times:", expected: 3, got: 2)) {
            try Invocation(target: Account(), selector: "deposit:note:times:", arguments: [1, nil])
        }
        #expect(throws: InvocationError.argumentCountMismatch("reset", expected: 0, got: 1)) {
            try Invocation(target: Account(), selector: "reset", arguments: [1])
        }
        #expect(
            InvocationError.argumentCountMismatch("reset", expected: 0, got: 1).description
                == "'reset' takes 0 arguments, got 1")
    }

    @Test func nilIntoANonOptionalParameterIsRefused() {
        let error = #expect(throws: InvocationError.self) {
            try Invocation(target: Account(), selector: "deposit:note:times:", arguments: [nil, nil, 1])
        }
        #expect(error == .nilForNonOptional("deposit:note:times:", index: 0, expected: "Int"))
        #expect(
            error?.description
                == "'deposit:note:times:' argument 0 must be Int, got nil (only Optional parameters take nil)")
    }

    @Test func anIntIsNotADouble() {
        let error = #expect(throws: InvocationError.self) {
            try Invocation(target: Account(), selector: "scale:", arguments: [2])
        }
        #expect(error == .argumentTypeMismatch("scale:", index: 0, expected: "Double", actual: "Int"))
        #expect(error?.description == "'scale:' argument 0 must be Double, got Int")
    }

    @Test func theLowestOffendingIndexIsReported() {
        #expect(
            throws: InvocationError.argumentTypeMismatch(
                "deposit:note:times:", index: 1, expected: "Optional<String>", actual: "Int")
        ) {
            try Invocation(target: Account(), selector: "deposit:note:times:", arguments: [1, 2, "three"])
        }
    }

    @Test func theInvocationKeepsItsArgumentsAlive() throws {
        final class Payload: Sendable {}
        final class Holder: Invocable, Sendable {
            static let methods = MethodTable<Holder>().method("take:", Holder.take)
            func take(_ payload: Payload) -> Bool { true }
        }
        weak var watched: Payload?
        var invocation: Invocation?
        do {
            let payload = Payload()
            watched = payload
            invocation = try Invocation(target: Holder(), selector: "take:", arguments: [payload])
        }
        #expect(watched != nil, "the argument died while the invocation still needed it")
        #expect(try invocation?.invoke() as? Bool == true)
        invocation = nil
        #expect(watched == nil, "the invocation leaked its argument")
    }

    @Test func anInvocationInvokedAgainPassesTheSameArguments() throws {
        let account = Account()
        let deposit = try Invocation(target: account, selector: "deposit:note:times:", arguments: [5, "rent", 2])
        #expect(try deposit.invoke() as? Int == 10)
        #expect(try deposit.invoke() as? Int == 20)
        #expect(account.notes == ["rent", "rent"])
        #expect(deposit.arguments.map { $0.map { "\($0)" } } == ["5", "rent", "2"])
    }

    // A plain value of exactly the parameter's type is taken from the
    // argument's own words when it fits in them (three words, word-aligned)
    // and opened as an existential otherwise: both sides of that line, an
    // Optional parameter given a value or nil, and a value that holds a
    // reference, arrive whole, through a loop and through an Invocation.
    @Test func plainValuesOnEitherSideOfTheInlineLimitArriveWhole() throws {
        struct Three: Sendable, Equatable { var a: Int, b: Int, c: Int }
        struct Four: Sendable, Equatable { var a: Int, b: Int, c: Int, d: Int }
        struct Small: Sendable, Equatable { var flag: Bool, byte: UInt8, half: Int32 }
        final class Sink: Invocable, @unchecked Sendable {
            static let methods = MethodTable<Sink>()
                .method("take:four:small:double:maybe:text:", Sink.take)
            var seen: [String] = []
            func take(_ three: Three, _ four: Four, _ small: Small, _ double: Double, _ maybe: Int?, _ text: String)
                -> Int
            {
                seen.append("\(three) \(four) \(small) \(double) \(String(describing: maybe)) \(text)")
                return three.a &+ three.b &+ three.c &+ four.d
            }
        }
        let three = Three(a: .min, b: -1, c: .max)
        let four = Four(a: 1, b: 2, c: 3, d: 0x7777_7777_7777_7777)
        let small = Small(flag: true, byte: 0xAB, half: -123_456)
        let text = String(repeating: "long enough to live on the heap ", count: 2)
        let sink = Sink()
        let sum = Int.min &+ -1 &+ .max &+ 0x7777_7777_7777_7777
        var expected: [String] = []
        try withSpawnedLoop("plain") { loop in
            for (index, maybe) in [Int?.some(42), nil, .some(-7)].enumerated() {
                let double = Double(index) + 0.25
                expected.append("\(three) \(four) \(small) \(double) \(String(describing: maybe)) \(text)")
                let result = try sink.performSelector(
                    "take:four:small:double:maybe:text:", on: loop, waitUntilDone: index != 1,
                    withObjects: three, four, small, double, maybe, text)
                #expect(index == 1 ? result == nil : result as? Int == sum)
            }
            try loop.postAndWait {}
        }
        let direct = try Invocation(
            target: sink, selector: "take:four:small:double:maybe:text:",
            arguments: [three, four, small, 9.5, nil, text])
        #expect(try direct.invoke() as? Int == sum)
        expected.append("\(three) \(four) \(small) 9.5 nil \(text)")
        #expect(sink.seen == expected)
    }

    // The other side of that fast path: a value that owns a reference (it
    // fits the words, but taking its bytes would keep a count nobody
    // releases), a plain value aligned wider than a word (stored out of
    // line), and an Optional stored as itself. And a result nobody waits
    // for is released, not dropped as bytes.
    @Test func valuesThatOwnReferencesOrAreAlignedWideAreNeitherLeakedNorMisread() throws {
        final class Token: Sendable {
            let id: Int
            init(id: Int) { self.id = id }
        }
        struct Holder: Sendable { let token: Token }
        final class Sink: Invocable, @unchecked Sendable {
            static let methods = MethodTable<Sink>()
                .method("hold:wide:maybe:", Sink.hold)
                .method("make:", Sink.make)
            var seen: [String] = []
            weak var made: Token?
            func hold(_ holder: Holder, _ wide: SIMD4<Float>, _ maybe: Int?) -> Int {
                seen.append("\(holder.token.id) \(wide) \(String(describing: maybe))")
                return holder.token.id
            }
            func make(_ id: Int) -> Token {
                let token = Token(id: id)
                made = token
                return token
            }
        }
        let sink = Sink()
        weak var held: Token?
        let wide = SIMD4<Float>(1.5, -2.25, 1e30, .pi)
        try withSpawnedLoop("owning") { loop in
            do {
                let token = Token(id: 7)
                held = token
                // Posted, waited for, and straight.
                try sink.performSelector(
                    "hold:wide:maybe:", on: loop, waitUntilDone: false,
                    withObjects: Holder(token: token), wide, Int?.some(3) as any Sendable)
                let result = try sink.performSelector(
                    "hold:wide:maybe:", on: loop, waitUntilDone: true,
                    withObjects: Holder(token: token), wide, Int?.none as any Sendable)
                #expect(result as? Int == 7)
                let direct = try Invocation(
                    target: sink, selector: "hold:wide:maybe:", arguments: [Holder(token: token), wide, 5])
                #expect(try direct.invoke() as? Int == 7)
            }
            // A result nobody waits for: the loop drops it.
            try sink.performSelector("make:", on: loop, waitUntilDone: false, withObjects: 9)
            #expect(try loop.postAndWait { sink.made == nil }, "a result nobody waits for was leaked")
        }
        #expect(sink.seen == ["7 \(wide) Optional(3)", "7 \(wide) nil", "7 \(wide) Optional(5)"])
        #expect(held == nil, "an argument that owns a reference was leaked")
    }

    // The check reads the type an argument was stored as; a value stored as
    // a subclass, or through its superclass, still meets the parameter its
    // class allows, and only that.
    @Test func classArgumentsAreCheckedByWhatTheyAreNotHowTheyWereTyped() throws {
        class Shape: @unchecked Sendable {}
        final class Circle: Shape, @unchecked Sendable {}
        final class Canvas: Invocable, Sendable {
            static let methods = MethodTable<Canvas>()
                .method("any:", Canvas.any)
                .method("circle:", Canvas.circle)
                .method("maybe:", Canvas.maybe)
            func any(_ shape: Shape) -> String { "\(type(of: shape))" }
            func circle(_ circle: Circle) -> String { "circle" }
            func maybe(_ circle: Circle?) -> String { circle == nil ? "none" : "circle" }
        }
        let canvas = Canvas()
        let circleAsShape: Shape = Circle()
        #expect(try Invocation(target: canvas, selector: "any:", arguments: [Circle()]).invoke() as? String == "Circle")
        #expect(try Invocation(target: canvas, selector: "any:", arguments: [Shape()]).invoke() as? String == "Shape")
        #expect(
            try Invocation(target: canvas, selector: "circle:", arguments: [circleAsShape]).invoke() as? String
                == "circle")
        #expect(
            try Invocation(target: canvas, selector: "maybe:", arguments: [circleAsShape]).invoke() as? String
                == "circle")
        #expect(try Invocation(target: canvas, selector: "maybe:", arguments: [nil]).invoke() as? String == "none")
        #expect(
            throws: InvocationError.argumentTypeMismatch("circle:", index: 0, expected: "Circle", actual: "Shape")
        ) {
            try Invocation(target: canvas, selector: "circle:", arguments: [Shape()])
        }
    }

    // A table's entries live as long as the process (a posted call refers to
    // its entry without retaining it), so a table built anew, as a generic
    // type's computed `methods` is on every access, must reuse them: each
    // specialization its own, and never another type's of the same name.
    @Test func aMethodTableBuiltAnewReusesItsEntriesAndStorage() throws {
        final class Box<Value: Sendable>: Invocable, Sendable {
            static var methods: MethodTable<Box<Value>> { MethodTable<Box<Value>>().method("get", Box.get) }
            let value: Value
            init(_ value: Value) { self.value = value }
            func get() -> Value { value }
        }
        let first = try #require(Box<Int>.methods.entry(for: "get")?.takeUnretainedValue())
        for _ in 0..<100 { #expect(Box<Int>.methods.entry(for: "get")?.takeUnretainedValue() === first) }
        #expect(Box<String>.methods.entry(for: "get")?.takeUnretainedValue() !== first)
        // And its storage, which a table refers to unretained: one per
        // table, however often it is built.
        let storage = Box<Int>.methods.storage.toOpaque()
        for _ in 0..<100 { #expect(Box<Int>.methods.storage.toOpaque() == storage) }
        #expect(Box<String>.methods.storage.toOpaque() != storage)
        #expect(MethodTable<Box<Int>>().storage.toOpaque() != storage)
        #expect(try Invocation(target: Box(7), selector: "get", arguments: []).invoke() as? Int == 7)
        #expect(try Invocation(target: Box("seven"), selector: "get", arguments: []).invoke() as? String == "seven")
        #expect(
            First.Twin.methods.entry(for: "name")?.takeUnretainedValue()
                !== Second.Twin.methods.entry(for: "name")?.takeUnretainedValue())
        #expect(try Invocation(target: First.Twin(), selector: "name", arguments: []).invoke() as? String == "first")
        #expect(try Invocation(target: Second.Twin(), selector: "name", arguments: []).invoke() as? String == "second")
    }

    // Past `MethodTableStorage.linearSearchLimit` methods a call finds its entry in the table's
    // dictionary instead of its list: the first and the last registered
    // method are found there, posted and waited for, and a wrong call is
    // refused with the same errors.
    @Test func aTableTooLongToSearchInOrderFindsEveryMethodByHashing() throws {
        #expect(Dial.methods.storage.takeUnretainedValue().ordered.count > MethodTableStorage.linearSearchLimit)
        let dial = Dial()
        try withSpawnedLoop("dial") { loop in
            #expect(try dial.performSelector("filler0", on: loop, returning: Int.self) == -1)
            #expect(try dial.performSelector("add:to:", on: loop, withObjects: 2, 3, returning: Int.self) == 5)
            try dial.performSelector("record:", on: loop, waitUntilDone: false, withObjects: 7)
            try dial.performSelector("record:", on: loop, waitUntilDone: false, withObjects: 8)
            #expect(try dial.performSelector("recorded", on: loop, returning: [Int].self) == [7, 8])
            #expect(
                throws: InvocationError.unrecognizedSelector(
                    "nine", targetType: "Dial", answers: Dial.methods.selectors)
            ) {
                try dial.performSelector("nine", on: loop, waitUntilDone: false)
            }
            #expect(
                throws: InvocationError.argumentTypeMismatch("add:to:", index: 1, expected: "Int", actual: "String")
            ) {
                try dial.performSelector("add:to:", on: loop, waitUntilDone: true, withObjects: 2, "3")
            }
        }
        #expect(try Invocation(target: dial, selector: "filler8", arguments: []).invoke() as? Int == -1)
    }

    // The trap itself (SIGILL, with the table's message), not any failing exit.
    @Test func registeringASelectorWithTheWrongArityTraps() async {
        let result = await #expect(processExitsWith: .signal(SIGILL), observing: [\.standardErrorContent]) {
            final class Bad: Invocable {
                static let methods = MethodTable<Bad>().method("add:", Bad.add)
                func add(_ a: Int, _ b: Int) -> Int { a + b }
            }
            _ = Bad.methods
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("selector 'add:' has 1 colon(s) but the method (Int, Int) -> Int takes 2"), "\(text)")
    }
}

/// Two types of one name, apart only by where they are declared.
enum First {
    final class Twin: Invocable, Sendable {
        static let methods = MethodTable<Twin>().method("name", Twin.name)
        func name() -> String { "first" }
    }
}

enum Second {
    final class Twin: Invocable, Sendable {
        static let methods = MethodTable<Twin>().method("name", Twin.name)
        func name() -> String { "second" }
    }
}

/// A table longer than `MethodTableStorage.linearSearchLimit`: nine fillers (one
/// method under nine selectors), then three methods of their own, the
/// last registered. `@unchecked Sendable`: `recorded` is touched only by
/// the loop that performs it.
final class Dial: Invocable, @unchecked Sendable {
    static let methods = (0..<9).reduce(MethodTable<Dial>()) { $0.method(Selector("filler\($1)"), Dial.filler) }
        .method("record:", Dial.record)
        .method("recorded", Dial.currentRecord)
        .method("add:to:", Dial.add)
    var recorded: [Int] = []
    func filler() -> Int { -1 }
    func record(_ value: Int) { recorded.append(value) }
    func currentRecord() -> [Int] { recorded }
    func add(_ value: Int, _ other: Int) -> Int { value + other }
}
