import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import SQLiteNIO
import SyncServer
import SyncTestSupport

/// The engines whose database a test can also reach with SQL of its own (to add a trigger that
/// makes one statement of the server fail): an SQLite file and PostgreSQL.
enum ReachableEngine: String, CaseIterable, CustomStringConvertible, Sendable {
    case sqliteFile = "SQLite file"
    case postgres = "PostgreSQL"

    var description: String { rawValue }
}

/// The test's own way into the server's database.
struct DatabaseAccess: Sendable {
    /// Runs SQL in the database, on a connection of the test's own.
    let execute: @Sendable (String) async throws -> Void
    /// The directory of the content files of an SQLite file's server; `nil` for PostgreSQL.
    let contentDirectory: String?

    /// Makes every later write (`event`: INSERT, UPDATE or DELETE) of a row of `table` that
    /// `condition` matches fail with an error of the engine (`condition` is SQL naming the row's
    /// columns as `ROW."column"`).
    func failWrites(of table: String, on event: String, when condition: String = "TRUE", engine: ReachableEngine) async throws {
        let name = "fail_\(event.lowercased())_\(table.filter(\.isLetter))"
        let condition = condition.replacingOccurrences(of: "ROW.", with: event == "DELETE" ? "OLD." : "NEW.")
        switch engine {
        case .sqliteFile:
            try await execute(
                "CREATE TRIGGER \"\(name)\" BEFORE \(event) ON \"\(table)\" WHEN \(condition) BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
            )
        case .postgres:
            try await execute(
                "CREATE OR REPLACE FUNCTION \"\(name)\"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$"
            )
            try await execute(
                "CREATE TRIGGER \"\(name)\" BEFORE \(event) ON \"\(table)\" FOR EACH ROW WHEN (\(condition)) EXECUTE FUNCTION \"\(name)\"()"
            )
        }
    }
}

extension TestServer {
    /// Runs `body` against a server with `configuration` over a new database of `engine`, with
    /// the test's own access to that database; then closes the storage and removes the database.
    static func run(
        _ configuration: ServerConfiguration, reaching engine: ReachableEngine, _ body: @Sendable (TestServer, DatabaseAccess) async throws -> Void
    ) async throws {
        let storage: any TableStorage
        let access: DatabaseAccess
        let remove: @Sendable () async throws -> Void
        switch engine {
        case .sqliteFile:
            let directory = try TemporaryDirectory(prefix: "reach")
            let path = directory.path("server.db")
            storage = try await SQLiteTableStorage.open(.sqlite(path: path), logger: .quiet)
            access = DatabaseAccess(execute: { sql in try await Self.sqlite(path, sql) }, contentDirectory: path + ".attachments")
            remove = { directory.remove() }
        case .postgres:
            let settings = try await PostgresTestDatabases.create()
            storage = try await PostgresTableStorage.open(settings, logger: .quiet)
            access = DatabaseAccess(execute: { sql in try await Self.postgres(settings, sql) }, contentDirectory: nil)
            remove = { try await PostgresTestDatabases.drop(settings) }
        }
        var failure: (any Error)?
        do {
            let app = Application(router: buildRouter(storage: storage, configuration: configuration), logger: .quiet)
            try await app.test(.router) { client in try await body(TestServer(client: client), access) }
        } catch {
            failure = error
        }
        try await storage.close()
        try await remove()
        if let failure { throw failure }
    }

    private static func sqlite(_ path: String, _ sql: String) async throws {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: .quiet)
        do {
            // The server's connection may hold the write lock for a moment (a commit group).
            _ = try await connection.query("PRAGMA busy_timeout = 30000")
            _ = try await connection.query(sql)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    private static func postgres(_ settings: PostgresSettings, _ sql: String) async throws {
        let configuration = PostgresConnection.Configuration(
            host: settings.host, port: settings.port, username: settings.user, password: settings.password,
            database: settings.database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: .quiet)
        do {
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: .quiet).collect()
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
