import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import SyncSQL
import SyncServer
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// PostgreSQL stopped and started again under a load of concurrent reads and writes from many
/// clients (a private cluster, so no other test is disturbed): every request is answered within
/// the storage timeout plus a margin — 503 with a JSON message and `Retry-After` while the
/// database is down —, no write answered 503 is ever applied, `/health` follows, and requests
/// succeed again after the restart without restarting the server.
///
/// Every wait of the test has a deadline of its own (``answer(within:_:_:)``): a request, a
/// `pg_ctl`, a direct read of the database or the server's shutdown that does not end fails the
/// test with a message naming it, never hangs it.
@Suite(.timeLimit(.minutes(5))) struct PostgresOutageTests {
    /// The server's storage timeout in this test (it also bounds the server's first connection at
    /// start-up, which takes over a second when the whole suite runs on two busy cores).
    static let timeout: Duration = .seconds(3)
    /// What a request may take beyond the timeout on a busy shared machine (answering, scheduling).
    static let margin: Duration = .seconds(5)
    /// How long a request may stay unanswered before the test gives up on it (a hang).
    static let noAnswer: Duration = .seconds(30)
    static let clients = 16
    static let seeds = 20

    @Test func requestsDuringAnOutageAreRefusedInTimeAndRefusedWritesAreNeverApplied() async throws {
        let cluster = try await onOwnThread { try PostgresCluster.privateCluster() }
        var configuration = ServerConfiguration.testing()
        configuration.database = .postgres(try PostgresSettings(url: cluster.url(), poolSize: 5))
        configuration.storageTimeout = Self.timeout
        // Its first connection may take longer than the timeout on a busy machine.
        let server = try await opening(within: .seconds(60)) { try await RunningServer.start(configuration) }
        let client = HTTPTestClient(connections: 64)
        let log = LoadLog()
        do {
            for seed in 0..<Self.seeds {
                let reply = try await Self.send(client, .post, server.url, "/tables/load", ["id": .string("seed-\(seed)"), "n": .int(1)])
                try #require(reply.status == .created)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<Self.clients {
                    group.addTask { await Self.load(client: index, server.url, client, log) }
                }
                defer { log.finish() }
                try await Self.outage(cluster, server.url, client, log)
                log.finish()
                try await group.waitForAll()
            }
            try await Self.check(log, cluster)
        } catch {
            Issue.record(error)
        }
        await #expect(throws: Never.self) { try await answer(within: .seconds(60), "the server's shutdown") { await server.stop() } }
        try? await answer(within: .seconds(30), "the HTTP client's shutdown") { try await client.shutdown() }
        try? await answer(within: .seconds(60), "pg_ctl stop") { try await onOwnThread { try cluster.stop() } }
    }

    /// A request with its deadline: an answer it never gets fails the test with ``NoAnswer``.
    static func send(
        _ client: HTTPTestClient, _ method: HTTPRequest.Method, _ url: URL, _ uri: String, _ object: JSONObject? = nil
    ) async throws -> Reply {
        try await answer(within: noAnswer, "\(method) \(uri)") { try await client.send(method, url, uri, object: object) }
    }

    /// Stops the database once the load runs, waits until `/health` says 503 and requests that
    /// started after the stop have been answered, starts it again and waits until `/health` says
    /// 200 and reads and writes succeed again.
    static func outage(_ cluster: PostgresCluster, _ url: URL, _ client: HTTPTestClient, _ log: LoadLog) async throws {
        try await log.wait(for: .seconds(60), "40 answers before the outage") { $0.filter { $0.status / 100 == 2 }.count >= 40 }
        try await answer(within: .seconds(60), "pg_ctl stop") { try await onOwnThread { try cluster.stop() } }
        let stopped = ContinuousClock.now
        log.mark(.down)
        var health = try await send(client, .get, url, "/health")
        while health.status == .ok, stopped.duration(to: .now) < .seconds(30) {
            health = try await send(client, .get, url, "/health")
        }
        #expect(health.status == .serviceUnavailable, "/health says 503 while the database is down")
        try await log.wait(for: .seconds(30), "40 answers during the outage") { $0.filter { $0.phase == .down }.count >= 40 }
        try await answer(within: .seconds(60), "pg_ctl start") { try await onOwnThread { try cluster.restart() } }
        log.mark(.back)
        let restarted = ContinuousClock.now
        // The pool reconnects after its back-off (from 100 ms, growing 1.25× per failed attempt).
        health = try await send(client, .get, url, "/health")
        while health.status != .ok, restarted.duration(to: .now) < .seconds(60) {
            try await Task.sleep(for: .milliseconds(100))
            health = try await send(client, .get, url, "/health")
        }
        #expect(health.status == .ok, "/health says 200 once the database is back")
        try await log.wait(for: .seconds(60), "reads and writes succeeding after the restart") { entries in
            let back = entries.filter { $0.phase == .back && $0.status / 100 == 2 }
            return back.contains { $0.isWrite } && back.contains { !$0.isWrite } && back.count >= 20
        }
    }

    /// One client: alternately a write of a new item and a read of a seeded one, each timed; an
    /// error or a missing answer is logged (status 0) and the client goes on.
    static func load(client index: Int, _ url: URL, _ client: HTTPTestClient, _ log: LoadLog) async {
        var count = 0
        while log.isRunning {
            count += 1
            let isWrite = count % 2 == 0
            let id = isWrite ? "w-\(index)-\(count)" : "seed-\((index + count) % seeds)"
            let phase = log.phase
            let started = ContinuousClock.now
            let entry: LoadLog.Entry
            do {
                let reply =
                    isWrite
                    ? try await send(client, .post, url, "/tables/load", ["id": .string(id), "n": .int(Int64(count))])
                    : try await send(client, .get, url, "/tables/load/\(id)")
                entry = LoadLog.Entry(
                    id: id, isWrite: isWrite, phase: phase, status: reply.status.code, duration: started.duration(to: .now),
                    message: reply.errorMessage, retryAfter: reply.headers[.retryAfter])
            } catch {
                entry = LoadLog.Entry(
                    id: id, isWrite: isWrite, phase: phase, status: 0, duration: started.duration(to: .now), message: "\(error)",
                    retryAfter: nil)
            }
            log.record(entry)
        }
    }

    /// Every answer in time and of an expected kind, no refused write applied, every created one there.
    static func check(_ log: LoadLog, _ cluster: PostgresCluster) async throws {
        let entries = log.entries
        let failed = entries.filter { $0.status == 0 }
        #expect(failed.isEmpty, "requests without an answer: \(failed.count), e.g. \(failed.prefix(3))")
        let slowest = entries.max { $0.duration < $1.duration }
        #expect(slowest.map { $0.duration <= timeout + margin } ?? false, "the slowest request: \(slowest.map { "\($0)" } ?? "none")")
        let refused = entries.filter { $0.status == 503 }
        #expect(refused.contains { $0.isWrite } && refused.contains { !$0.isWrite }, "reads and writes were refused during the outage")
        // `Retry-After` is the storage timeout in whole seconds.
        let retryAfter = "\(timeout.components.seconds)"
        for entry in refused {
            #expect(entry.message?.hasPrefix("The storage is unavailable") == true && entry.retryAfter == retryAfter, "\(entry)")
        }
        let unknown = StorageOutcomeUnknownError().description
        let unexpected = entries.filter { ![0, 200, 201, 503].contains($0.status) && !($0.status == 500 && $0.message == unknown) }
        #expect(unexpected.isEmpty, "\(unexpected.prefix(5))")
        let applied = try await answer(within: .seconds(60), "the read of the written ids") { try await appliedIDs(cluster) }
        let refusedWrites = Set(refused.filter(\.isWrite).map(\.id))
        #expect(refusedWrites.intersection(applied).isEmpty, "refused and applied: \(refusedWrites.intersection(applied).sorted().prefix(5))")
        let created = Set(entries.filter { $0.status == 201 }.map(\.id))
        #expect(created.isSubset(of: applied), "every write answered 201 is stored")
    }

    /// The ids of the written items in the database, read directly.
    static func appliedIDs(_ cluster: PostgresCluster) async throws -> Set<String> {
        let configuration = PostgresClient.Configuration(
            host: cluster.host, port: cluster.port, username: cluster.user, password: nil, database: cluster.database, tls: .disable)
        let client = PostgresClient(configuration: configuration, backgroundLogger: .quiet)
        return try await withThrowingTaskGroup(of: Set<String>?.self, returning: Set<String>.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            var ids = Set<String>()
            let rows = try await client.query(#"SELECT id FROM "load" WHERE id LIKE 'w-%'"#)
            for try await id in rows.decode(String.self) {
                ids.insert(id)
            }
            return ids
        }
    }
}

/// The answers of a load, each with the phase of the outage it started in.
final class LoadLog: Sendable {
    enum Phase: Sendable { case up, down, back }

    struct Entry: Sendable, CustomStringConvertible {
        let id: String
        let isWrite: Bool
        let phase: Phase
        /// The HTTP status, 0 for no answer (the message says why).
        let status: Int
        let duration: Duration
        let message: String?
        let retryAfter: String?

        var description: String { "\(isWrite ? "POST" : "GET") \(id) \(phase): \(status) in \(duration) \(message ?? "")" }
    }

    /// A condition the log did not reach in time.
    struct Timeout: Error, CustomStringConvertible {
        let what: String
        let entries: Int
        var description: String { "The load did not reach \(what) in time (\(entries) answers logged)" }
    }

    private let state = Mutex<(phase: Phase, entries: [Entry], isRunning: Bool)>((.up, [], true))

    var phase: Phase { state.withLock { $0.phase } }
    var entries: [Entry] { state.withLock { $0.entries } }
    /// Whether the load goes on (until ``finish()``).
    var isRunning: Bool { state.withLock { $0.isRunning } }

    func mark(_ phase: Phase) { state.withLock { $0.phase = phase } }

    func finish() { state.withLock { $0.isRunning = false } }

    func record(_ entry: Entry) { state.withLock { $0.entries.append(entry) } }

    /// Returns once `condition` holds for the entries, checked every 50 ms; throws ``Timeout``
    /// naming `what` after `limit`.
    func wait(for limit: Duration, _ what: String, until condition: ([Entry]) -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !condition(entries) {
            guard ContinuousClock.now < deadline else { throw Timeout(what: what, entries: entries.count) }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
