import Synchronization

/// Work raced against a deadline, the caller never waiting for the loser.
///
/// A task group would wait for every child before returning, so a child that ignores
/// cancellation — a driver call waiting for a connection of its pool, say — would hold the caller
/// past its deadline. Here the work runs in a task of its own: on the deadline it is cancelled
/// and left to end on its own time, and the caller goes on.
enum Deadline {
    /// Runs `work` and returns what it returns, or throws `failure` once `limit` has passed.
    ///
    /// - Parameters:
    ///   - limit: The longest wait.
    ///   - failure: The error thrown on the deadline.
    ///   - work: The work; cancelled on the deadline.
    /// - Returns: What `work` returns.
    /// - Throws: What `work` throws, or `failure`.
    static func run<T: Sendable>(
        within limit: Duration, failing failure: any Error, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = Race<T>()
        return try await withCheckedThrowingContinuation { continuation in
            race.start(continuation)
            let task = Task {
                let result: Result<T, any Error>
                do { result = .success(try await work()) } catch { result = .failure(error) }
                race.settle(result)
            }
            let timer = Task {
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                if race.settle(.failure(failure)) { task.cancel() }
            }
            race.onSettle { timer.cancel() }
        }
    }

    /// The first of a piece of work and its deadline to settle wins; the other is ignored.
    private final class Race<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var settled = false
            var onSettle: (@Sendable () -> Void)?
        }

        private let state = Mutex(State())

        func start(_ continuation: CheckedContinuation<T, any Error>) {
            state.withLock { $0.continuation = continuation }
        }

        /// Runs `action` once settled (at once when already settled).
        func onSettle(_ action: @escaping @Sendable () -> Void) {
            let settled = state.withLock { state in
                if !state.settled { state.onSettle = action }
                return state.settled
            }
            if settled { action() }
        }

        /// Settles with `result`; `false` when already settled.
        @discardableResult
        func settle(_ result: Result<T, any Error>) -> Bool {
            let (continuation, action) = state.withLock { state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
                guard !state.settled else { return (nil, nil) }
                state.settled = true
                defer { (state.continuation, state.onSettle) = (nil, nil) }
                return (state.continuation, state.onSettle)
            }
            guard let continuation else { return false }
            continuation.resume(with: result)
            action?()
            return true
        }
    }
}
