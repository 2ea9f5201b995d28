import Foundation
import HTTPTypes
import Logging
import SQLiteNIO
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// An SQLite file another process holds locked (a connection of the test's own in a write
/// transaction): writes through the server are answered 503 with a JSON message and
/// `Retry-After` within the storage timeout plus a margin — all of them, not one after another —
/// reads go on, nothing refused is applied, and writes succeed once the lock is gone.
@Suite(.timeLimit(.minutes(2))) struct LockedSQLiteTests {
    static let timeout: Duration = .seconds(1)
    // Generous: the whole suite runs beside this test on two cores. Eight writes waiting for the
    // lock one after another (5 s each, as SQLite's busy wait made them) still fail it by far.
    static let margin: Duration = .seconds(15)

    @Test func writesToALockedFileAreRefusedWithinTheTimeoutAndNotApplied() async throws {
        let directory = try TemporaryDirectory(prefix: "locked")
        defer { directory.remove() }
        let path = directory.path("server.db")
        var configuration = ServerConfiguration.testing()
        configuration.database = .sqlite(path: path)
        configuration.storageTimeout = Self.timeout
        configuration.metrics = ServerMetrics()
        let server = try await RunningServer.start(configuration)
        let client = HTTPTestClient()
        let outside = try await SQLiteConnection.open(storage: .file(path: path), logger: .quiet)
        do {
            let seeded = try await client.send(.post, server.url, "/tables/todo", object: ["id": "seed", "text": "a"])
            try #require(seeded.status == .created)
            _ = try await outside.query("BEGIN IMMEDIATE", [])
            let writers = 8
            let replies = try await withThrowingTaskGroup(of: (Reply, Duration).self) { group in
                for index in 0..<writers {
                    group.addTask {
                        let started = ContinuousClock.now
                        let reply = try await client.send(.post, server.url, "/tables/todo", object: ["id": .string("w\(index)"), "text": "b"])
                        return (reply, started.duration(to: .now))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let read = try await client.send(.get, server.url, "/tables/todo/seed")
            _ = try await outside.query("ROLLBACK", [])
            #expect(read.status == .ok, "reads go on while the file is locked")
            for (reply, duration) in replies {
                #expect(reply.status == .serviceUnavailable, "\(reply.status) \(reply.errorMessage ?? "")")
                #expect(reply.errorMessage?.hasPrefix("The storage is unavailable") == true)
                #expect(reply.headers[.retryAfter] == "1")
                #expect(duration <= Self.timeout + Self.margin, "answered after \(duration)")
            }
            for index in 0..<writers {
                #expect(try await client.send(.get, server.url, "/tables/todo/w\(index)").status == .notFound, "a refused write is not applied")
            }
            let after = try await client.send(.post, server.url, "/tables/todo", object: ["id": "w0", "text": "c"])
            #expect(after.status == .created, "writes succeed once the lock is gone")
            let (_, samples) = try await MetricsTests.scrape(client, server)
            #expect(samples[#"ciphersync_storage_errors_total{kind="busy"}"#] == Double(writers))
            #expect(samples[#"ciphersync_http_requests_total{route="/tables/{table}",method="POST",status="503"}"#] == Double(writers))
        } catch {
            Issue.record(error)
        }
        try? await outside.close()
        try? await client.shutdown()
        await server.stop()
    }
}
