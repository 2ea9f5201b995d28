import Foundation
import SyncClient
import SyncKeys
import SyncStore
import SyncWire
import Synchronization

/// Live sync latency: the time from device A's `push` returning to device B's observed query
/// showing the item, B running live sync against a `sync-server` on loopback.
enum LiveLatency {
    /// The latencies in seconds of `samples` items, one at a time, on two stores of one kind
    /// (encrypted ones with `key`, each store a copy's worth of its own file).
    static func measure(server: URL, directory: URL, encrypted: Bool, key: SecretBytes, samples: Int) async throws -> [Double] {
        let table = "latency\(encrypted ? "Encrypted" : "Plain")"
        let a = try await Device(name: "a", server: server, directory: directory, encrypted: encrypted, key: key)
        let b = try await Device(name: "b", server: server, directory: directory, encrypted: encrypted, key: key)
        // The server makes a table at its first insert: one goes in before B listens.
        let tableA = try a.context.syncTable(table)
        _ = try await tableA.insert([SystemProperty.id: .string("warm-up"), "text": .string("warm-up")])
        try await a.context.push()
        let live = try b.context.startLiveSync([LiveSyncTable(table)])
        let sightings = Sightings()
        let (connected, isConnected) = AsyncStream<Void>.makeStream()
        let events = Task {
            var problems: [String] = []
            for await event in live.events {
                switch event {
                case .connected: isConnected.yield()
                case .failed(let error), .disconnected(let error): problems.append("\(error)")
                case .pollingFallback:
                    problems.append("the server has no change notifications")
                    isConnected.yield()
                case .pushed, .pulled, .transferred: break
                }
            }
            return problems
        }
        let observer = Task {
            defer { sightings.cancel() }  // an observation that ends fails the wait for its next item
            for try await result in try b.context.syncTable(table).observe() {
                sightings.record(result.items.compactMap { $0[SystemProperty.id]?.stringValue })
            }
        }
        var latencies: [Double] = []
        do {
            var waitForConnection = connected.makeAsyncIterator()
            await waitForConnection.next()
            for index in 0..<samples {
                let id = "sample-\(index)"
                _ = try await tableA.insert([SystemProperty.id: .string(id), "text": .string("sample \(index)")])
                try await a.context.push()
                let pushed = ContinuousClock.now
                let shown = try await sightings.wait(for: id)
                latencies.append(max(0, (shown - pushed).seconds))
            }
        } catch {
            try? await end()
            throw error
        }
        try await end()
        let problems = await events.value
        if let first = problems.first { throw BenchError("live sync met \(problems.count) problems, the first: \(first)") }
        return latencies

        func end() async throws {
            observer.cancel()
            _ = await observer.result
            await live.stop()
            sightings.cancel()
            try await a.close()
            try await b.close()
        }
    }

    /// A device: a fresh store and a sync context for the server.
    private struct Device {
        let store: SQLiteStore
        let context: SyncContext
        let url: URL

        init(name: String, server: URL, directory: URL, encrypted: Bool, key: SecretBytes) async throws {
            url = directory.appendingPathComponent("live-\(name)-\(encrypted).db")
            store = try await SQLiteStore.open(
                at: url, encryption: encrypted ? .key(key) : .none, options: StoreOptions(createIfMissing: true))
            context = SyncContext(client: MobileServiceClient(url: server), store: store)
        }

        func close() async throws {
            try await store.close()
            KeyToolBench.removeStore(at: url)
        }
    }
}

/// When each id first appeared in B's observed query, and who waits for which.
private final class Sightings: Sendable {
    private struct State {
        var firstSeen: [String: ContinuousClock.Instant] = [:]
        var waiting: [String: CheckedContinuation<ContinuousClock.Instant, any Error>] = [:]
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Notes the ids of one observed result, waking whoever waits for a new one.
    func record(_ ids: [String]) {
        let now = ContinuousClock.now
        let woken = state.withLock { state in
            ids.compactMap { id -> CheckedContinuation<ContinuousClock.Instant, any Error>? in
                guard state.firstSeen[id] == nil else { return nil }
                state.firstSeen[id] = now
                return state.waiting.removeValue(forKey: id)
            }
        }
        for waiter in woken { waiter.resume(returning: now) }
    }

    /// The instant `id` was first seen, once it is.
    func wait(for id: String) async throws -> ContinuousClock.Instant {
        try await withCheckedThrowingContinuation { continuation in
            let answer: Result<ContinuousClock.Instant, any Error>? = state.withLock { state in
                if let seen = state.firstSeen[id] { return .success(seen) }
                if state.cancelled { return .failure(CancellationError()) }
                state.waiting[id] = continuation
                return nil
            }
            if let answer { continuation.resume(with: answer) }
        }
    }

    /// Fails every wait, now and later.
    func cancel() {
        let waiting = state.withLock { state in
            state.cancelled = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiter in waiting { waiter.resume(throwing: CancellationError()) }
    }
}
