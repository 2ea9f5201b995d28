import Foundation
import PostgresNIO
import SQLiteNIO
import SyncSQL
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// The `updatedAt` index a change watcher reads a scope through — (`"$owner"`, `updatedAt`) for a
/// per-user table — exists on both engines, and a database that lacks it gets it when opened.
@Suite(.timeLimit(.minutes(2))) struct ChangeWatcherIndexTests {
    @Test func aSQLiteFileWithoutTheIndexGetsItWhenOpened() async throws {
        let directory = try TemporaryDirectory(prefix: "index")
        defer { directory.remove() }
        let path = directory.path("server.db")
        let storage = try await SQLiteTableStorage.open(.sqlite(path: path), logger: .quiet)
        _ = try await storage.ensureColumns("notes", scope: .owner("alice"), ["text": .text])
        try await storage.close()

        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: .quiet)
        _ = try await connection.query(#"DROP INDEX "notes_updatedAt""#, [])
        #expect(try await Self.sqliteIndexColumns(connection).isEmpty)
        try await connection.close()

        let reopened = try await SQLiteTableStorage.open(.sqlite(path: path), logger: .quiet)
        try await reopened.close()
        let check = try await SQLiteConnection.open(storage: .file(path: path), logger: .quiet)
        #expect(try await Self.sqliteIndexColumns(check) == [TableSchema.ownerColumn, SystemProperty.updatedAt])
        try await check.close()
    }

    @Test func aPostgreSQLTableWithoutTheIndexGetsItWhenOpened() async throws {
        let settings = try await PostgresTestDatabases.create()
        var failure: (any Error)?
        do {
            let storage = try await PostgresTableStorage.open(settings, logger: .quiet)
            _ = try await storage.ensureColumns("notes", scope: .owner("alice"), ["text": .text])
            #expect(try await Self.postgresIndex(settings)?.contains(#"("$owner", "updatedAt""#) == true)
            try await storage.close()
            try await Self.postgres(settings, #"DROP INDEX "notes$updatedAt""#)
            #expect(try await Self.postgresIndex(settings) == nil)
            let reopened = try await PostgresTableStorage.open(settings, logger: .quiet)
            try await reopened.close()
            #expect(try await Self.postgresIndex(settings)?.contains(#"("$owner", "updatedAt""#) == true)
        } catch {
            failure = error
        }
        try? await PostgresTestDatabases.drop(settings)
        if let failure { throw failure }
    }

    static func sqliteIndexColumns(_ connection: SQLiteConnection) async throws -> [String] {
        try await connection.query(#"SELECT name FROM pragma_index_info('notes_updatedAt') ORDER BY seqno"#, [])
            .compactMap { $0.column("name")?.string }
    }

    /// The definition of `notes$updatedAt`, or `nil`.
    static func postgresIndex(_ settings: PostgresSettings) async throws -> String? {
        var definition: String?
        try await withConnection(settings) { connection in
            let rows = try await connection.query(
                #"SELECT indexdef FROM pg_indexes WHERE indexname = 'notes$updatedAt'"#, logger: .quiet
            ).collect()
            definition = try rows.first?.decode(String.self)
        }
        return definition
    }

    static func postgres(_ settings: PostgresSettings, _ sql: String) async throws {
        try await withConnection(settings) { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: .quiet).collect()
        }
    }

    static func withConnection(_ settings: PostgresSettings, _ body: (PostgresConnection) async throws -> Void) async throws {
        let configuration = PostgresConnection.Configuration(
            host: settings.host, port: settings.port, username: settings.user, password: settings.password,
            database: settings.database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: .quiet)
        do {
            try await body(connection)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
