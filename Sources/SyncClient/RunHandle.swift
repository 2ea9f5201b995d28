import Synchronization

/// The cancellation state of one push, pull or purge run, shared between the run and
/// ``SyncContext/cancel()``: a flag plus the request on the wire, so that an explicit cancel also
/// cancels the request in flight.
final class RunHandle: Sendable {
    private struct State {
        var isCancelled = false
        var request: Task<SyncResponse, any Error>?
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

    /// Sends a request in a child task that ``cancel()`` and task cancellation both cancel.
    func send(_ request: SyncRequest, through transport: any SyncTransport) async throws -> SyncResponse {
        let task = Task { try await transport.send(request) }
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
