import Foundation

/// Runs `body` on a thread of its own and waits for it without holding a cooperative thread.
///
/// For work that blocks (waiting for a process) or keeps a CPU busy for seconds (exhaustive
/// checks): on the cooperative pool, with as many threads as cores, it would starve the suites
/// running meanwhile. Expectations stay with the caller: `body` returns what the test then checks.
///
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
