import Foundation
import PostgresNIO
import SyncTestSupport
import SyncWire
import Testing

@testable import SyncServer

/// A statement of the PostgreSQL storage on a connection whose session has ended (the database
/// shutting down, a terminated backend) is refused at once with the 503 error, instead of being
/// dropped by the driver and waited for forever; the storage serves the next call on a new
/// connection.
@Suite(.timeLimit(.minutes(2))) struct ClosedConnectionTests {
    @Test func aWriteOnAConnectionClosedUnderItsTransactionIsRefusedInsteadOfHanging() async throws {
        let settings = try await PostgresTestDatabases.create(poolSize: 2)
        var failure: (any Error)?
        do {
            let storage = try await PostgresTableStorage.open(settings, logger: .quiet)
            _ = try await storage.ensureColumns("notes", scope: .shared, ["text": .text])
            await #expect(throws: StorageUnavailableError.self) {
                try await answer(within: .seconds(30), "a write on a connection closed under its transaction") {
                    try await storage.inTransaction {
                        let connection = try #require(storage.transactionConnection)
                        let backend = try await storage.leased { connection in
                            try await connection.query("SELECT pg_backend_pid()", logger: .quiet).collect().first?.decode(Int32.self)
                        }
                        let pid = try #require(backend)
                        try await PostgresTestDatabases.administer("SELECT pg_terminate_backend(\(pid))")
                        try await connection.closeFuture.get()
                        return try await storage.insert(table: "notes", scope: .shared, item: ["id": .string("lost"), "text": .string("x")])
                    }
                }
            }
            let written = try await answer(within: .seconds(30), "a write after the connection was lost") {
                try await storage.insert(table: "notes", scope: .shared, item: ["id": .string("kept"), "text": .string("y")])
            }
            guard case .written = written else { throw Unexpected(result: "\(written)") }
            #expect(try await storage.row(table: "notes", id: "lost", scope: .shared) == nil, "the refused write was not applied")
            try await storage.close()
        } catch {
            failure = error
        }
        try? await PostgresTestDatabases.drop(settings)
        if let failure { throw failure }
    }

    /// A write that did not answer as written.
    struct Unexpected: Error {
        let result: String
    }
}
