@testable import SyncServer

/// What did not answer within its deadline (a test fails with it instead of hanging).
struct NoAnswer: Error, CustomStringConvertible {
    /// What was waited for.
    let what: String
    /// How long.
    let limit: Duration

    var description: String { "\(what): no answer within \(limit)" }
}

/// Runs `body` and returns what it returns, or throws ``NoAnswer`` once `limit` has passed,
/// without waiting for `body` (the server's `Deadline`): whatever it waits on — a request, a
/// process, a driver call that ignores cancellation — the caller goes on and fails with a message
/// instead of hanging.
///
/// - Parameters:
///   - limit: The longest wait.
///   - what: What is waited for, for the message.
///   - body: The work; cancelled on the deadline.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws, or ``NoAnswer``.
func answer<T: Sendable>(
    within limit: Duration, _ what: @autoclosure () -> String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await Deadline.run(within: limit, failing: NoAnswer(what: what(), limit: limit), body)
}

/// Runs `body` again while it throws ``StorageUnavailableError`` (a storage opened while its first
/// connection takes longer than a short storage timeout, on a busy machine), until `limit` has
/// passed; then the error is thrown.
///
/// - Parameters:
///   - limit: How long to try.
///   - body: What opens the storage (a server's start, a storage's open).
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
func opening<T>(within limit: Duration, _ body: () async throws -> T) async throws -> T {
    let deadline = ContinuousClock.now + limit
    while true {
        do {
            return try await body()
        } catch is StorageUnavailableError where ContinuousClock.now < deadline {
            continue
        }
    }
}
