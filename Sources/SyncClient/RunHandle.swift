import Synchronization

/// The cancellation state of one push, pull or purge run, shared between the run and
/// ``SyncContext/cancel()``: a flag plus the request on the wire, so that an explicit cancel also
/// cancels the request in flight.
final class RunHandle: Sendable {
    private struct State {
        var isCancelled = false
        var request: Task<SyncResponse, any Error>?
        /// Where the tasks of its requests run (nil: no preference).
        var executor: (any TaskExecutor)?
    }

    private let state = Mutex(State())

    /// Whether the run was cancelled explicitly, or the current task was.
    var isCancelled: Bool {
        state.withLock { $0.isCancelled } || Task.isCancelled
    }

    /// Marks the run cancelled and cancels its request in flight.
    func cancel() {
        let request = state.withLock { state -> Task<SyncResponse, any Error>? in
            state.isCancelled = true
            return state.request
        }
        request?.cancel()
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
        let cancelledAlready = state.withLock { state -> Bool in
            state.request = task
            return state.isCancelled
        }
        if cancelledAlready { task.cancel() }
        defer { state.withLock { $0.request = nil } }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }
}
