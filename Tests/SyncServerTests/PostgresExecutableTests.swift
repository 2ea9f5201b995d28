import Foundation
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `sync-server --database postgres://…`: serves a PostgreSQL database, and refuses a password
/// anywhere but a file or `PGPASSWORD`, without repeating it.
@Suite struct PostgresExecutableTests {
    @Test func theExecutableServesAPostgresDatabaseAndStopsCleanly() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let settings = try await PostgresTestDatabases.create()
        do {
            let server = try await ServerProcess.start(database: settings.description, arguments: ["--database-pool-size", "2"])
            var insert = URLRequest(url: server.url.appendingPathComponent("tables/todo"))
            insert.httpMethod = "POST"
            insert.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
            insert.setValue("application/json", forHTTPHeaderField: "Content-Type")
            insert.httpBody = Data(#"{"id":"one","text":"stored in PostgreSQL"}"#.utf8)
            let (_, created) = try await URLSession.shared.data(for: insert)
            #expect((created as? HTTPURLResponse)?.statusCode == 201)
            let (health, _) = try await URLSession.shared.data(from: server.url.appendingPathComponent("health"))
            #expect(String(decoding: health, as: UTF8.self).contains("ok"))
            let (status, _) = server.stop()
            #expect(status == 0, "a graceful shutdown on SIGTERM")
            // Another process over the same database sees the item.
            let storage = try await PostgresTableStorage.open(settings, logger: .quiet)
            let row = try await storage.row(table: "todo", id: "ONE", scope: .shared)
            try await storage.close()
            #expect(row?["text"] == "stored in PostgreSQL")
        } catch {
            Issue.record(error)
        }
        try await PostgresTestDatabases.drop(settings)
    }

    @Test func aPasswordInTheURLIsRefusedAndNeverRepeated() throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let secret = "pw" + UUID().uuidString
        let refused = try runProgram(ServerProcess.tool.url.path, ["--port", "0", "--database", "postgres://sync:\(secret)@127.0.0.1:5432/sync"])
        #expect(refused.status != 0)
        #expect(refused.error.contains("must not contain a password"), "\(refused.error)")
        #expect(!refused.error.contains(secret) && !refused.output.contains(secret))

        let missing = try runProgram(
            ServerProcess.tool.url.path,
            ["--port", "0", "--database", "postgres://sync@127.0.0.1/sync", "--database-password-file", "/nonexistent/pw"])
        #expect(missing.status != 0 && missing.error.contains("cannot read --database-password-file"))
        let elsewhere = try runProgram(ServerProcess.tool.url.path, ["--port", "0", "--database-password-file", "/nonexistent/pw"])
        #expect(elsewhere.status != 0 && elsewhere.error.contains("needs a postgres:// --database"))
    }

    @Test func settingsNeverShowThePassword() throws {
        let settings = try PostgresSettings(url: "postgres://sync@db.example:6543/app?sslmode=require", password: "hunter2", poolSize: 3)
        #expect(settings.host == "db.example" && settings.port == 6543 && settings.database == "app" && settings.tls == .require)
        for text in [
            settings.description, settings.debugDescription, "\(settings)", String(reflecting: ServerConfiguration.Database.postgres(settings)),
        ] {
            #expect(!text.contains("hunter2"), "\(text)")
        }
        #expect(try PostgresSettings(url: "postgresql://me@localhost").database == "me")
        for bad in ["postgres://localhost/db", "mysql://u@h/db", "postgres://u@h/db?sslmode=prefer", "postgres://u@h/db?application_name=x"] {
            #expect(throws: PostgresSettingsError.self, "\(bad)") { try PostgresSettings(url: bad) }
        }
        #expect(throws: PostgresSettingsError.self) { try PostgresSettings(url: "postgres://u@h/db", poolSize: 0) }
    }
}
