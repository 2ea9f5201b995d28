public import Foundation
public import SyncClient
public import SyncWire
import Synchronization

/// A scripted transport for client tests (in the spirit of the iOS SDK's MSTestFilter): it
/// records every request and answers with the next scripted response, in order.
///
/// A request with no scripted response left throws ``FakeTransportError/unexpectedRequest``,
/// which the engine sees as a network failure, so an unplanned request fails the test visibly.
public final class FakeSyncTransport: SyncTransport {
    /// Produces the answer to one request; may suspend (for in-flight tests) or throw (network).
    public typealias Responder = @Sendable (SyncRequest) async throws -> SyncResponse

    private struct State {
        var script: [Responder] = []
        var requests: [SyncRequest] = []
        var waiters: [(count: Int, gate: AsyncGate)] = []
    }

    private let state = Mutex(State())

    /// Creates a transport with an empty script.
    public init() {}

    /// Scripts the next answer.
    public func enqueue(_ responder: @escaping Responder) {
        state.withLock { $0.script.append(responder) }
    }

    /// Scripts a response with a JSON body (or none).
    public func enqueue(status: Int, json: JSONValue? = nil, headers: [String: String] = [:]) {
        let body = json.map { (try? JSONCoding.encode($0)) ?? Data() } ?? Data()
        enqueue(status: status, body: body, headers: headers)
    }

    /// Scripts a response with a raw body.
    public func enqueue(status: Int, body: Data, headers: [String: String] = [:]) {
        let response = SyncResponse(statusCode: status, headers: headers, body: body)
        enqueue { _ in response }
    }

    /// Scripts a 200 answer with a JSON array of items (a pull page).
    public func enqueuePage(_ items: [JSONObject], headers: [String: String] = [:]) {
        enqueue(status: 200, json: .array(items.map(JSONValue.object)), headers: headers)
    }

    /// Scripts a 200/201 answer echoing the request's item with a server version and timestamps.
    public func enqueueEcho(status: Int = 201, version: String = "1", updatedAt: String = "2001-01-01T00:00:00.000Z") {
        enqueue { request in
            var item = request.jsonObject ?? [:]
            item[SystemProperty.version] = .string(version)
            item[SystemProperty.updatedAt] = .string(updatedAt)
            item[SystemProperty.createdAt] = .string(updatedAt)
            return SyncResponse(statusCode: status, headers: ["ETag": "\"\(version)\""], body: try JSONCoding.encode(item))
        }
    }

    /// Scripts a transport failure (no answer).
    public func enqueueNetworkError() {
        enqueue { _ in throw URLError(.notConnectedToInternet) }
    }

    /// The requests received so far, in order.
    public var requests: [SyncRequest] { state.withLock { $0.requests } }

    /// The number of scripted answers not used yet.
    public var pendingResponses: Int { state.withLock { $0.script.count } }

    /// Returns once at least `count` requests have arrived, or the task is cancelled (so that a
    /// test whose requests never come ends at its time limit instead of hanging).
    public func waitForRequests(_ count: Int) async {
        let gate = AsyncGate()
        let arrived = state.withLock { state -> Bool in
            if state.requests.count >= count { return true }
            state.waiters.append((count, gate))
            return false
        }
        if !arrived { await gate.wait() }
    }

    /// Records the request and answers with the next scripted response.
    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        let (responder, ready) = state.withLock { state -> (Responder?, [AsyncGate]) in
            state.requests.append(request)
            let count = state.requests.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.gate)
            state.waiters.removeAll { $0.count <= count }
            return (state.script.isEmpty ? nil : state.script.removeFirst(), ready)
        }
        for gate in ready { gate.open() }
        guard let responder else { throw FakeTransportError.unexpectedRequest(request.method.rawValue) }
        return try await responder(request)
    }
}

/// The failure of an unscripted request.
public enum FakeTransportError: Error, Sendable {
    case unexpectedRequest(String)
}

/// A one-shot gate: tasks wait until the test opens it (no sleeps), or until the waiting task is
/// cancelled (a test's time limit then ends the wait instead of leaving it hanging).
public final class AsyncGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var lastWaiter = 0
    }
    private let state = Mutex(State())
    /// Creates a closed gate.
    public init() {}
    /// Suspends until ``open()`` (returns at once if already open) or until the task is cancelled.
    public func wait() async {
        let id = state.withLock { state in
            state.lastWaiter += 1
            return state.lastWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.isOpen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
    /// Opens the gate and releases every waiter.
    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }
}

extension SyncRequest {
    /// The body decoded as a JSON object, if it is one.
    public var jsonObject: JSONObject? {
        body.flatMap { try? JSONCoding.decode(JSONObject.self, from: $0) }
    }

    /// The path of the URL (`/tables/todo/1`), percent-decoded.
    public var path: String { url.path }
}
