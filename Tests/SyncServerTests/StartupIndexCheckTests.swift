import Foundation
import PostgresNIO
import SyncTestSupport
import Synchronization
import Testing

@testable import SyncServer

/// The PostgreSQL storage's start-up check for the `updatedAt` indexes runs like every other
/// statement of the engine: counted, and on a connection leased within the storage timeout, so
/// with no connection free it is refused in time (the 503 error) instead of waiting.
@Suite(.timeLimit(.minutes(2))) struct StartupIndexCheckTests {
    @Test func theIndexCheckIsCountedAndRefusedInTimeWhenNoConnectionIsFree() async throws {
        var settings = try await PostgresTestDatabases.create(poolSize: 1)
        // The refusal below comes well before the test's own deadline.
        settings.connectionWait = .seconds(5)
        var failure: (any Error)?
        do {
            let storage = try await open(settings)
            _ = try await storage.ensureColumns("notes", scope: .shared, ["text": .text])
            let before = storage.statements.count
            try await storage.ensureUpdatedAtIndexes()
            #expect(storage.statements.count == before + 1, "the check is one counted statement")

            // The pool's only connection is held until the check has been answered.
            let (leased, leasedSignal) = AsyncStream<Void>.makeStream()
            let (released, release) = AsyncStream<Void>.makeStream()
            let holder = Task {
                // A holder that cannot lease ends the wait below instead of leaving it hanging.
                defer { leasedSignal.finish() }
                try await storage.leased { _ in
                    leasedSignal.yield()
                    for await _ in released { break }
                }
            }
            for await _ in leased { break }
            let started = ContinuousClock.now
            await #expect(throws: StorageUnavailableError.self) {
                try await answer(within: .seconds(15), "the index check while no connection is free") {
                    try await storage.ensureUpdatedAtIndexes()
                }
            }
            #expect(started.duration(to: .now) < .seconds(15))
            release.yield()
            release.finish()
            try await holder.value
            try await storage.close()
        } catch {
            failure = error
        }
        try? await PostgresTestDatabases.drop(settings)
        if let failure { throw failure }
    }

    /// Opens the storage (its first statements need the pool's one connection), tried again while
    /// that connection does not come up within the wait, as on a machine that runs the whole suite
    /// at once: a minute at most, so that the refusal the test checks is the only one it sees.
    private func open(_ settings: PostgresSettings) async throws -> PostgresTableStorage {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                return try await PostgresTableStorage.open(settings, logger: .quiet)
            } catch is StorageUnavailableError where ContinuousClock.now < deadline {
                continue
            }
        }
    }
}
