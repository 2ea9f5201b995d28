import Synchronization

/// The cancellation state of one push, pull or purge run, shared between the run and
/// ``SyncContext/cancel()``: a flag plus the requests on the wire, so that an explicit cancel also
/// cancels every request in flight (a push may have several, ``SyncContext/setPushParallelism(_:)``).
final class RunHandle: Sendable {
    private struct State {
        var isCancelled = false
        /// The requests in flight, by a number of their own.
        var requests: [Int: Task<SyncResponse, any Error>] = [:]
        var lastRequest = 0
        /// Where the tasks of its requests run (nil: no preference).
        var executor: (any TaskExecutor)?
    }

    private let state = Mutex(State())

    /// Whether the run was cancelled explicitly, or the current task was.
    var isCancelled: Bool {
        state.withLock { $0.isCancelled } || Task.isCancelled
    }

    /// Marks the run cancelled and cancels its requests in flight.
    func cancel() {
        let requests = state.withLock { state -> [Task<SyncResponse, any Error>] in
            state.isCancelled = true
            return Array(state.requests.values)
        }
        for request in requests { request.cancel() }
    }

    /// Runs `body` with the tasks of the run's requests, and `body` itself, preferring
    /// `executor` (nil: no preference).
    func preferring<T: Sendable>(
        _ executor: (any TaskExecutor)?, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async throws -> T {
        let earlier = state.withLock { state in
            defer { state.executor = executor }
            return state.executor
        }
        defer { state.withLock { $0.executor = earlier } }
        return try await withTaskExecutorPreference(executor, isolation: isolation, operation: body)
    }

    /// Sends a request in a child task that ``cancel()`` and task cancellation both cancel.
    func send(_ request: SyncRequest, through transport: any SyncTransport) async throws -> SyncResponse {
        let executor = state.withLock { $0.executor }
        let task = Task(executorPreference: executor) { try await transport.send(request) }
        let (number, cancelledAlready) = state.withLock { state -> (Int, Bool) in
            state.lastRequest += 1
            state.requests[state.lastRequest] = task
            return (state.lastRequest, state.isCancelled)
        }
        if cancelledAlready { task.cancel() }
        defer { _ = state.withLock { $0.requests.removeValue(forKey: number) } }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }
}
