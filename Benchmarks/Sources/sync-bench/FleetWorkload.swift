#if canImport(Glibc)
import Foundation
import Glibc
import HTTPTypes
import Logging
import SyncSQL
@_spi(Benchmarks) import SyncServer
import BenchProcesses
import SyncWire

/// The fleet workload (`sync-bench --fleet`): single requests are timed on a large shared table
/// without and with many devices holding an idle change stream of a per-user table (each device
/// one of `users` users), in `rounds` interleaved rounds, on SQLite (one instance) and on
/// PostgreSQL (two instances over one database); then `writers` devices write to the per-user
/// table while the streams' events are timed; and a `sync-server` child process holds
/// `heldStreams` streams, its memory measured.
struct FleetWorkload {
    var streams = 1_000
    var writers = 50
    var users = 10
    var rows = 20_000
    var samples = 200
    /// The rounds the timed requests are spread over: each round times its share of `samples`
    /// without the streams and with them (see ``interleave(home:metrics:counters:)``).
    var rounds = 10
    var writesPerWriter = 4
    var heldStreams = 10_000
    /// The servers' keep-alive interval (the server's default unless told).
    var keepAlive = ChangeStreamSettings().keepAliveInterval
    /// How long the streams of each round are left idle before its timed requests; at least one
    /// keep-alive interval more, so that the storage queries are counted across keep-alive ticks.
    var idleSeconds = 3.0
    var postgresURL: String?

    /// The figures of one target.
    struct Result: Codable {
        var target: String
        var streams: Int
        var rows: Int
        var get: Comparison
        var patch: Comparison
        var idleQueriesPerSecond: Double
        var eventLatency: Percentiles
        var events: Int
        var missedEvents: Int
        var failedStreams: Int
    }

    /// A request's times without and with the streams, in milliseconds.
    struct Comparison: Codable {
        var alone: Percentiles
        var withStreams: Percentiles
        var medianRatio: Double { withStreams.p50 / max(alone.p50, 1e-9) }
        var p99Ratio: Double { withStreams.p99 / max(alone.p99, 1e-9) }
    }

    /// Median and 99th percentile, in milliseconds, of `count` samples.
    struct Percentiles: Codable {
        var p50: Double
        var p99: Double
        var count: Int

        init(_ milliseconds: [Double]) {
            let sorted = milliseconds.sorted()
            (p50, p99, count) = (BenchRecord.percentile(0.5, ofSorted: sorted), BenchRecord.percentile(0.99, ofSorted: sorted), sorted.count)
        }
    }

    /// The memory of a `sync-server` holding many idle streams.
    struct Held: Codable {
        var streams: Int
        var bytesPerStream: Double
        var failedStreams: Int
        var delivered: Int
        var descriptorLimit: Int
    }

    /// Every figure of a run.
    struct Report: Codable {
        var keepAliveSeconds: Double
        /// The rounds the timed requests were spread over.
        var rounds: Int
        var targets: [Result]
        var held: Held?
    }

    static let table = "fleetItems"
    static let scoped = "fleetNotes"
    /// The identity of the timed requests (every request of the fleet's servers has one).
    static let device = ["X-ZUMO-AUTH: timing"]

    func run(serverTool: URL?) async throws -> Report {
        let limit = DescriptorLimit.raise() ?? 0
        var targets: [Result] = []
        targets.append(try await measure(title: "SQLite, 1 instance", engine: .sqlite))
        targets.append(try await measure(title: "PostgreSQL, 2 instances", engine: .postgres))
        var held: Held?
        if let serverTool { held = try await onOwnThread { [self] in try hold(tool: serverTool, descriptorLimit: limit) } }
        return Report(keepAliveSeconds: keepAlive.seconds, rounds: rounds, targets: targets, held: held)
    }

    enum Engine { case sqlite, postgres }

    /// Starts the engine's servers in this process, seeds them and measures. The first server,
    /// where the streams open and the requests are timed, serves metrics: its open-streams gauge
    /// says when it has let a round's streams go.
    private func measure(title: String, engine: Engine) async throws -> Result {
        progress("fleet: \(title)")
        var configuration = ServerConfiguration(
            port: 0, authentication: .verifier(FleetIdentity()), perUserTables: .named([Self.scoped]), logger: ServerWorkloads.quiet)
        configuration.changeStream = ChangeStreamSettings(keepAliveInterval: keepAlive)
        var storages: [any TableStorage] = []
        var counters: [@Sendable () -> Int] = []
        switch engine {
        case .sqlite:
            let storage = try await SQLiteTableStorage.open(.memory, logger: ServerWorkloads.quiet)
            (storages, counters) = ([storage], [{ storage.statementCount }])
        case .postgres:
            let settings = try ServerWorkloads(clients: 1, operationsPerClient: 1, pulledItems: 1, postgresURL: postgresURL).postgresSettings()
            for _ in 0..<2 {
                let storage = try await PostgresTableStorage.open(settings, logger: ServerWorkloads.quiet)
                storages.append(storage)
                counters.append { storage.statementCount }
            }
        }
        try await seed(storages[0])
        var servers: [RunningServer] = []
        do {
            for storage in storages {
                var own = configuration
                if servers.isEmpty { own.metrics = ServerMetrics() }
                servers.append(try await RunningServer.start(own, storage: storage))
            }
            guard let metrics = servers[0].metricsURL else { throw BenchError("the fleet's first server serves no metrics") }
            let result = try await measure(title: title, servers.map(\.url), metrics: metrics, counters)
            for server in servers { await server.stop() }
            return result
        } catch {
            for server in servers { await server.stop() }
            for storage in storages.dropFirst(servers.count) { try? await storage.close() }
            throw error
        }
    }

    /// Times the requests on the first server without and with the streams (opened there) in
    /// interleaved rounds, counts the storage's statements while the streams are idle, and times
    /// the events of writes made through the last server to streams opened for them.
    private func measure(title: String, _ urls: [URL], metrics: URL, _ counters: [@Sendable () -> Int]) async throws -> Result {
        let (home, writeThrough) = (urls[0], urls[urls.count - 1])
        let timed = try await interleave(home: home, metrics: metrics, counters: counters)
        let (latencies, missed, failed) = try await withStreams(on: home, metrics: metrics) { fleet in
            let (latencies, missed) = try await fanOut(fleet, through: writeThrough)
            return (latencies, missed, fleet.failed)
        }
        return Result(
            target: title, streams: streams, rows: rows,
            get: Comparison(alone: Percentiles(timed.alone.gets), withStreams: Percentiles(timed.withStreams.gets)),
            patch: Comparison(alone: Percentiles(timed.alone.patches), withStreams: Percentiles(timed.withStreams.patches)),
            idleQueriesPerSecond: Double(timed.idleStatements) / max(timed.idleSeconds, 1e-9), eventLatency: Percentiles(latencies),
            events: latencies.count, missedEvents: missed, failedStreams: timed.failedStreams + failed)
    }

    /// Writes `rows` items of the shared table and one item per user of the per-user table.
    private func seed(_ storage: any TableStorage) async throws {
        _ = try await storage.ensureColumns(Self.table, scope: .shared, ["text": .text, "n": .integer])
        let rows = self.rows
        try await withThrowingTaskGroup(of: Void.self) { group in
            for part in 0..<8 {
                group.addTask {
                    for index in stride(from: part, to: rows, by: 8) {
                        _ = try await storage.insert(
                            table: Self.table, scope: .shared,
                            item: ["id": .string("r\(index)"), "text": .string("row \(index)"), "n": .int(Int64(index))])
                    }
                }
            }
            try await group.waitForAll()
        }
        for user in 0..<users {
            _ = try await storage.ensureColumns(Self.scoped, scope: .owner("user\(user)"), ["text": .text])
            _ = try await storage.insert(table: Self.scoped, scope: .owner("user\(user)"), item: ["id": "first", "text": "first"])
        }
    }

    /// `writers` devices write `writesPerWriter` items each, at once, to the per-user table (writer
    /// `w` as user `w % users`); each write's latency to each stream of its user is the time from
    /// its answer to the first event of that stream carrying its `updatedAt` or a later one.
    /// - Returns: The latencies (ms) and the (write, stream) pairs that never got an event.
    private func fanOut(_ fleet: FleetStreams, through server: URL) async throws -> ([Double], Int) {
        struct Write: Sendable {
            var user: String
            var updatedAt: String
            var answered: ContinuousClock.Instant
        }
        let (writers, writesPerWriter, users) = (self.writers, self.writesPerWriter, self.users)
        let run = UUID().uuidString.prefix(8)  // new ids on every run over the same database
        @Sendable func write(_ writer: Int) throws -> [Write] {
            var sender = try BareSender(server: server)
            defer { sender.close() }
            let user = "user\(writer % users)"
            var done: [Write] = []
            for index in 0..<writesPerWriter {
                let body = Array(#"{"id":"\#(run)-\#(writer)-\#(index)","text":"x"}"#.utf8)
                let (status, answer) = try sender.exchange(
                    sender.request("POST", "/tables/\(Self.scoped)", body: body, headers: ["X-ZUMO-AUTH: \(user)"]))
                let answered = ContinuousClock.now
                guard status == 201, let stamp = try JSONParser.parseObject(answer)[SystemProperty.updatedAt]?.stringValue else {
                    throw BenchError("a fleet write failed with \(status)")
                }
                done.append(Write(user: user, updatedAt: stamp, answered: answered))
            }
            return done
        }
        let writes = try await withThrowingTaskGroup(of: [Write].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    try await onOwnThread { try write(writer) }
                }
            }
            var all: [Write] = []
            for try await done in group { all += done }
            return all
        }
        let newest = Dictionary(writes.map { ($0.user, $0.updatedAt) }, uniquingKeysWith: max)
        // Wait (up to 10 s) until every stream has seen its user's newest write.
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let caughtUp = (0..<fleet.count).allSatisfy { stream in
                guard let user = fleet.users[stream], let last = newest[user] else { return true }
                return fleet.received(stream).contains { $0.updatedAt >= last }
            }
            if caughtUp { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        var latencies: [Double] = []
        var missed = 0
        let byUser = Dictionary(grouping: 0..<fleet.count) { fleet.users[$0] ?? "" }
        let received = (0..<fleet.count).map { fleet.received($0) }
        for write in writes {
            for stream in byUser[write.user] ?? [] {
                guard let event = received[stream].first(where: { $0.updatedAt >= write.updatedAt }) else {
                    missed += 1
                    continue
                }
                let latency = (event.arrived - write.answered).components
                latencies.append(max(0, Double(latency.seconds) * 1000 + Double(latency.attoseconds) / 1e15))
            }
        }
        return (latencies, missed)
    }

    /// Runs `sync-server` (tables in memory) as a child process, opens ``heldStreams`` idle streams
    /// to it, and measures its resident memory before and after; then one write must reach every
    /// stream.
    func hold(tool: URL, descriptorLimit: Int) throws -> Held {
        progress("fleet: \(heldStreams) streams on one sync-server")
        let server = try BenchServer(tool: tool, database: "memory", pageSize: nil)
        defer { server.stop() }
        var writer = try BareSender(server: server.url)
        defer { writer.close() }
        guard try writer.send(writer.request("POST", "/tables/\(Self.scoped)", body: Array(#"{"id":"a"}"#.utf8))) == 201 else {
            throw BenchError("the held server refused a write")
        }
        // Settle the server's allocations with a few streams first.
        let warm = try FleetStreams()
        try warm.open(20, server: server.url, tables: Self.scoped) { _ in nil }
        let before = ProcessStatistics.residentBytes(of: server.processIdentifier) ?? 0
        let fleet = try FleetStreams()
        try fleet.open(heldStreams, server: server.url, tables: Self.scoped) { _ in nil }
        let after = ProcessStatistics.residentBytes(of: server.processIdentifier) ?? 0
        fleet.startReading()
        defer {
            fleet.close()
            warm.close()
        }
        guard try writer.send(writer.request("POST", "/tables/\(Self.scoped)", body: Array(#"{"id":"b"}"#.utf8))) == 201 else {
            throw BenchError("the held server refused a write")
        }
        let deadline = ContinuousClock.now + .seconds(30)
        var delivered = 0
        while ContinuousClock.now < deadline {
            delivered = (0..<fleet.count).filter { !fleet.received($0).isEmpty }.count
            if delivered == fleet.count { break }
            usleep(20_000)
        }
        return Held(
            streams: fleet.count, bytesPerStream: Double(after - before) / Double(max(1, fleet.count)), failedStreams: fleet.failed,
            delivered: delivered, descriptorLimit: descriptorLimit)
    }

    /// A progress line on standard error.
    func progress(_ text: String) {
        FileHandle.standardError.write(Data("sync-bench: \(text)\n".utf8))
    }
}

/// The fleet's devices: the `X-ZUMO-AUTH` token is the user's name (a benchmark on the loopback
/// only; a deployment verifies JWTs).
struct FleetIdentity: IdentityVerifier {
    struct NoToken: Error {}

    func authenticate(headers: HTTPFields) throws -> Identity {
        guard let name = HTTPField.Name(WireHeader.auth), let subject = headers[name], !subject.isEmpty else { throw NoToken() }
        return Identity(subject: subject)
    }
}
#endif
