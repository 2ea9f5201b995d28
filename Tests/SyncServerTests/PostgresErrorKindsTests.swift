import Logging
import SyncServer
import Testing

/// A database URL the server cannot use is refused with its own kind of `PostgresSettingsError`,
/// whose message says what is wrong and what the server expects (the text `sync-server` prints).
@Suite struct PostgresSettingsErrorTests {
    @Test func eachBadSettingHasItsKindAndMessage() throws {
        let refused: [(url: String, poolSize: Int, kind: PostgresSettingsError, message: String)] = [
            ("mysql://u@h/db", 5, .notPostgresURL, "The database URL must be postgres://USER@HOST[:PORT][/DB]"),
            (
                "postgres://u:secret@h/db", 5, .passwordInURL,
                "The database URL must not contain a password: give it with --database-password-file or the PGPASSWORD environment variable"
            ),
            ("postgres://localhost/db", 5, .missingUserOrHost, "The database URL must name a user and a host: postgres://USER@HOST[:PORT][/DB]"),
            ("postgres://u@h/db", 0, .invalidPoolSize, "The database pool size must be at least 1"),
            (
                "postgres://u@h/db?sslmode=prefer", 5, .unsupportedQuery,
                "The database URL accepts only sslmode=disable, require or verify-full as its query"
            ),
        ]
        for bad in refused {
            do throws(PostgresSettingsError) {
                _ = try PostgresSettings(url: bad.url, poolSize: bad.poolSize)
                Issue.record("accepted \(bad.url)")
            } catch {
                #expect(error == bad.kind, "\(bad.url)")
                #expect(error.description == bad.message)
                #expect(!error.description.contains("secret"))
            }
        }
    }

    @Test func kindsCompareAndMatchByKind() {
        let error: any Error = PostgresSettingsError.passwordInURL
        #expect(PostgresSettingsError.passwordInURL == .passwordInURL)
        #expect(PostgresSettingsError.passwordInURL != .missingUserOrHost)
        var matched = false
        switch error {
        case PostgresSettingsError.missingUserOrHost: matched = false
        case PostgresSettingsError.passwordInURL: matched = true
        default: matched = false
        }
        #expect(matched)
    }
}

/// A PostgreSQL storage that was closed refuses a health check with
/// `PostgresStorageError.closed`, a kind compared with `==`.
@Suite struct PostgresStorageErrorTests {
    @Test func aClosedStorageRefusesItsHealthCheckAsClosed() async throws {
        let settings = try await PostgresTestDatabases.create()
        let storage = try await PostgresTableStorage.open(settings, logger: .quiet)
        try await storage.ping()
        try await storage.close()
        await #expect(throws: PostgresStorageError.closed) { try await storage.ping() }
        #expect(PostgresStorageError.closed != .noAnswer)
        #expect(PostgresStorageError.closed.description == "The storage is closed")
        #expect(PostgresStorageError.noAnswer.description == "The database did not answer in time")
        try await PostgresTestDatabases.drop(settings)
    }
}
