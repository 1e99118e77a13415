// InvocationErrorHandler.swift: the deprecated, invocation-only error
// handler, kept for source compatibility. The loop stores it type-erased,
// since nothing outside PerformSelector/ knows what an invocation is.
import Invocations

extension EventLoop {
    /// The errors of invocations nobody waits for, in the shape this library
    /// first had. While set, it takes invocation errors in place of
    /// ``errorHandler``.
    @available(
        *, deprecated, renamed: "errorHandler",
        message: "errorHandler receives invocation errors and every other error nobody waits for"
    )
    public var invocationErrorHandler: (@Sendable (EventLoop, Invocation, any Error) -> Void)? {
        get {
            guard let erased = legacyInvocationErrorHandler else { return nil }
            return { loop, invocation, error in erased(loop, invocation, error) }
        }
        set {
            guard let newValue else {
                legacyInvocationErrorHandler = nil
                return
            }
            legacyInvocationErrorHandler = { loop, invocation, error in
                // Only PerformSelector/ calls it, always with an invocation.
                newValue(loop, invocation as! Invocation, error)
            }
        }
    }
}
