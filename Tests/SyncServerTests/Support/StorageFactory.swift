import Foundation
import Logging
import SyncServer
import SyncTestSupport

/// A storage engine the server tests run on. Every suite that exercises the protocol runs once
/// per factory in ``all``; another engine joins them by adding its factory there.
struct StorageFactory: Sendable, CustomStringConvertible {
    /// The engine's name, shown in test names.
    let description: String
    /// How many server instances can share one database of this engine (SQLite: one process).
    let maximumInstances: Int
    /// Makes a new, empty database.
    let makeDatabase: @Sendable () async throws -> TestDatabase

    /// SQLite in memory: one database per call, one instance over it.
    static let sqlite = StorageFactory(description: "SQLite", maximumInstances: 1) {
        TestDatabase(
            open: { observer in try await SQLiteTableStorage.open(.memory, logger: .quiet, observer: observer) },
            remove: {})
    }

    /// SQLite in a file (single writes share commits): a new file in a directory of its own per
    /// call, removed with it.
    static let sqliteFile = StorageFactory(description: "SQLite file", maximumInstances: 1) {
        let directory = try TemporaryDirectory(prefix: "tables")
        let path = directory.path("server.db")
        return TestDatabase(
            open: { observer in try await SQLiteTableStorage.open(.sqlite(path: path), logger: .quiet, observer: observer) },
            remove: { directory.remove() })
    }

    /// Every storage the server tests run on.
    static let all: [StorageFactory] = [.sqlite, .sqliteFile, .postgres]

    /// The storage of suites that test the HTTP layer rather than the storage.
    static let `default` = StorageFactory.sqlite
}

/// A new, empty database of one engine.
struct TestDatabase: Sendable {
    /// Opens one more storage over the database (at most ``StorageFactory/maximumInstances``);
    /// the observer sees every write of that storage.
    let open: @Sendable (_ observer: (any WriteObserver)?) async throws -> any TableStorage
    /// Removes the database, once every storage over it is closed.
    let remove: @Sendable () async throws -> Void
}

extension Logger {
    /// A logger that logs nothing below critical, for servers and storages under test.
    static var quiet: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }
}
