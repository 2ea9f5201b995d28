import BenchProcesses
import Foundation
import Logging
import SyncClient
import SyncServer
import SyncStore
import SyncWire

/// The server's workloads, over real HTTP on the loopback with the servers in this process:
/// requests per second of a mixed load of concurrent clients (inserts, conditional updates,
/// filtered reads) on SQLite, on PostgreSQL with one instance and with two instances over one
/// database; and a full pull into a plain store. PostgreSQL is the URL given, or a private
/// cluster started for the run (`initdb` in a temporary directory, removed at exit).
struct ServerWorkloads {
    let clients: Int
    let operationsPerClient: Int
    let pulledItems: Int
    let postgresURL: String?

    /// One measured figure.
    struct Result: Codable {
        var workload: String
        var requests: Int
        var seconds: Double
        var requestsPerSecond: Double
        var failures: Int
    }

    /// The storages a workload runs on.
    enum Target: CaseIterable {
        case sqlite, postgresOne, postgresTwo

        var title: String {
            switch self {
            case .sqlite: return "SQLite, 1 instance"
            case .postgresOne: return "PostgreSQL, 1 instance"
            case .postgresTwo: return "PostgreSQL, 2 instances"
            }
        }
    }

    func run() async throws -> [Result] {
        var results: [Result] = []
        for target in Target.allCases {
            results.append(try await withServers(target) { urls in try await mixedLoad(urls, title: "mixed load, \(target.title)") })
        }
        for target in [Target.sqlite, .postgresOne] {
            results.append(try await withServers(target) { urls in try await fullPull(urls[0], title: "full pull, \(target.title)") })
        }
        return results
    }

    /// Starts the target's servers over a fresh database, runs `body` with their URLs, stops them.
    private func withServers(_ target: Target, _ body: ([URL]) async throws -> Result) async throws -> Result {
        let configuration = ServerConfiguration(port: 0, pageSize: 1_000, maxTop: 0, logger: Self.quiet)
        var servers: [RunningServer] = []
        do {
            switch target {
            case .sqlite:
                servers.append(try await RunningServer.start(configuration))
            case .postgresOne, .postgresTwo:
                let settings = try postgresSettings()
                for _ in 0..<(target == .postgresTwo ? 2 : 1) {
                    let storage = try await PostgresTableStorage.open(settings, logger: Self.quiet)
                    servers.append(try await RunningServer.start(configuration, storage: storage))
                }
            }
            let result = try await body(servers.map(\.url))
            for server in servers { await server.stop() }
            return result
        } catch {
            for server in servers { await server.stop() }
            throw error
        }
    }

    func postgresSettings() throws -> PostgresSettings {
        let password = ProcessInfo.processInfo.environment["PGPASSWORD"]
        if let postgresURL { return try PostgresSettings(url: postgresURL, password: password) }
        return try PostgresSettings(url: try PostgresCluster.shared().url(), password: password)
    }

    /// `clients` clients at once, each `operationsPerClient` requests in turn: insert an item of
    /// its own, update it with its version (`If-Match`), read its items through a filter.
    private func mixedLoad(_ urls: [URL], title: String) async throws -> Result {
        let table = "mixed_" + UUID().uuidString.prefix(8).lowercased()
        let operations = operationsPerClient
        let started = ContinuousClock.now
        let failures = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<clients {
                let remote = try MobileServiceClient(url: urls[index % urls.count]).table(table)
                group.addTask {
                    var failures = 0
                    var last: JSONObject?
                    for operation in 0..<operations {
                        do {
                            switch operation % 3 {
                            case 0:
                                last = try await remote.insert([
                                    "id": .string("c\(index)-\(operation)"), "text": .string("item \(operation)"), "n": .int(Int64(operation)),
                                    "owner": .string("c\(index)"),
                                ])
                            case 1:
                                var item = last ?? [:]
                                item["n"] = .int(Int64(operation))
                                last = try await remote.update(item)
                            default:
                                let filter = FilterExpression.binary(
                                    .and, .binary(.eq, .member("owner"), .literal(.string("c\(index)"))),
                                    .binary(.ge, .member("n"), .literal(.int(Int64(operation - 30)))))
                                _ = try await remote.read(Query(QueryOptions(filter: filter, orderBy: [OrderBy("n", ascending: false)], top: 20)))
                            }
                        } catch {
                            failures += 1
                        }
                    }
                    return failures
                }
            }
            return try await group.reduce(0, +)
        }
        let seconds = Self.seconds(since: started)
        let requests = clients * operations
        return Result(workload: title, requests: requests, seconds: seconds, requestsPerSecond: Double(requests) / seconds, failures: failures)
    }

    /// `pulledItems` items inserted (50 at a time, not timed), then one pull of them all into a
    /// new plain store, in pages of 1,000.
    private func fullPull(_ url: URL, title: String) async throws -> Result {
        let table = "pull_" + UUID().uuidString.prefix(8).lowercased()
        let remote = try MobileServiceClient(url: url).table(table)
        for start in stride(from: 0, to: pulledItems, by: 50) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in start..<min(start + 50, pulledItems) {
                    group.addTask {
                        _ = try await remote.insert([
                            "id": .string(String(format: "item-%08d", i)), "text": .string("pulled item \(i)"), "n": .int(Int64(i)),
                        ])
                    }
                }
                try await group.waitForAll()
            }
        }
        let directory = try TemporaryDirectory(prefix: "sync-bench-pull")
        defer { directory.remove() }
        let store = try await SQLiteStore.open(at: directory.file("store.db"), encryption: .none, options: StoreOptions(createIfMissing: true))
        do {
            let context = SyncContext(client: MobileServiceClient(url: url), store: store)
            let started = ContinuousClock.now
            let pulled = try await context.syncTable(table).pull(Query(), queryId: "all", pageSize: 1_000)
            let seconds = Self.seconds(since: started)
            try await store.close()
            return Result(
                workload: "\(title), \(pulledItems) items", requests: pulled, seconds: seconds, requestsPerSecond: Double(pulled) / seconds,
                failures: pulledItems - pulled)
        } catch {
            try? await store.close()
            throw error
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).seconds
    }

    static var quiet: Logger {
        var logger = Logger(label: "sync-bench")
        logger.logLevel = .critical
        return logger
    }

    /// The results as a table.
    static func report(_ results: [Result], clients: Int) -> String {
        var lines = ["workload".padding(toLength: 52, withPad: " ", startingAt: 0) + "  requests   seconds    per second  failures"]
        for result in results {
            lines.append(
                result.workload.padding(toLength: 52, withPad: " ", startingAt: 0)
                    + String(format: "  %8d  %8.2f  %12.0f  %8d", result.requests, result.seconds, result.requestsPerSecond, result.failures))
        }
        lines.append("\(clients) concurrent clients over HTTP on the loopback, servers in this process; a full pull's rate is items per second")
        return lines.joined(separator: "\n")
    }
}
