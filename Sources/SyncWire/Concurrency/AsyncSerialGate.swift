import Synchronization

/// A first-in, first-out gate that lets one task at a time run a body: an asynchronous mutex for
/// work that must not interleave at its suspension points (an actor alone lets another call in
/// at every `await`).
///
/// ```swift
/// let gate = AsyncSerialGate()
/// try await gate.withTurn {
///     try await migrate()   // no other turn starts until this body returns or throws
/// }
/// ```
///
/// - Tasks get their turn in the order they asked for it.
/// - A task cancelled while it waits leaves the queue at once and throws `CancellationError`;
///   a task already cancelled when it asks, or cancelled just as its turn comes, never runs its
///   body and passes the turn on.
/// - A task that entered keeps its turn until its body returns or throws, cancelled or not.
///
/// A class whose state sits behind a `Mutex`; safe to share.
package final class AsyncSerialGate: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var isHeld = false
        var waiters: [Waiter] = []
        var lastID: UInt64 = 0
        /// Tasks waiting until the queue reaches a length (``waitUntilQueued(_:)``).
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// Removes and returns the watchers the queue's length satisfies.
        mutating func satisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
            let count = waiters.count
            let ready = watchers.filter { $0.count <= count }.map(\.continuation)
            watchers.removeAll { $0.count <= count }
            return ready
        }
    }

    private let state = Mutex(State())

    /// Creates an open gate with an empty queue.
    package init() {}

    /// Waits for this task's turn, runs `body`, then gives the turn to the next task in line.
    ///
    /// `body` runs on the caller's actor (`isolation`), so it may use the actor's state; it does
    /// even when it touches nothing of the actor (`nonisolated(nonsending)`: a plain async closure
    /// that captures nothing isolated would run on the global executor, beside the actor's work).
    /// - Parameters:
    ///   - isolation: the actor of the caller; leave the default.
    ///   - body: the work that runs alone.
    /// - Returns: what `body` returns.
    /// - Throws: `CancellationError` when the task is cancelled before its turn (the body did not
    ///   run); otherwise what `body` throws.
    package func withTurn<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: nonisolated(nonsending) () async throws -> T
    ) async throws -> T {
        try await enter()
        defer { leave() }
        return try await body()
    }

    /// The number of tasks waiting for their turn (not counting the one that has it).
    package var queuedCount: Int {
        state.withLock { $0.waiters.count }
    }

    /// Returns once at least `count` tasks wait for their turn (a seam for tests).
    func waitUntilQueued(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.waiters.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Takes the turn: at once when the gate is free, else after the tasks queued before.
    ///
    /// It runs and returns on the caller's actor (`nonisolated(nonsending)`). A plain async
    /// function would return on the global executor, and Swift 6.3 does not hop back to the
    /// caller's actor before ``withTurn(isolation:_:)`` calls its `nonisolated(nonsending)` body:
    /// the body would run off the actor (tested).
    private nonisolated(nonsending) func enter() async throws {
        let id = state.withLock { state -> UInt64 in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, watchers) = state.withLock { state -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    // Checked under the lock: a cancellation handler that ran before this point
                    // found nothing to remove, so the task must not queue.
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    if !state.isHeld {
                        state.isHeld = true
                        return (.success(()), [])
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return (nil, state.satisfiedWatchers())
                }
                if let outcome { continuation.resume(with: outcome) }
                for watcher in watchers { watcher.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
        // Handed the turn just as the task was cancelled: pass it on without running the body.
        if Task.isCancelled {
            leave()
            throw CancellationError()
        }
    }

    /// Gives the turn to the first waiting task, or frees the gate.
    private func leave() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.isHeld = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }
}
