import Foundation
import Logging
import PostgresNIO
import SyncSQL
import SyncServer
import SyncTestSupport
import Synchronization

/// Databases for tests in the process's PostgreSQL (``PostgresCluster``): each test gets a new,
/// empty database, dropped afterwards, made through one administrative client.
enum PostgresTestDatabases {
    /// The process's cluster and its administrative client, made by the first caller (the
    /// client's background task runs until the process ends).
    private static let admin = Mutex<Task<(cluster: PostgresCluster, client: PostgresClient), any Error>?>(nil)

    /// The process's cluster (``PostgresCluster/shared()``) and the administrative client, once
    /// the cluster has started. The start (`initdb`, `pg_ctl`: seconds, more on a busy machine)
    /// blocks a thread of its own, never one of the cooperative pool, where every test waiting for
    /// it would stall the whole suite.
    private static func administration() async throws -> (cluster: PostgresCluster, client: PostgresClient) {
        let made = admin.withLock { task in
            if let task { return task }
            let started = Task {
                let cluster = try await onOwnThread { try PostgresCluster.shared() }
                let configuration = PostgresClient.Configuration(
                    host: cluster.host, port: cluster.port, username: cluster.user, password: password, database: cluster.database,
                    tls: .disable)
                let client = PostgresClient(configuration: configuration, backgroundLogger: .quiet)
                Task.detached { await client.run() }
                return (cluster: cluster, client: client)
            }
            task = started
            return started
        }
        return try await made.value
    }

    /// The password of a server named by `CIPHERSYNC_PGTEST_URL` (`PGPASSWORD`), if any.
    static var password: String? { ProcessInfo.processInfo.environment["PGPASSWORD"] }

    /// Creates a new database and returns the settings that reach it.
    static func create(poolSize: Int = 5) async throws -> PostgresSettings {
        let (cluster, client) = try await administration()
        let name = "ciphersync_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(SQLIdentifier.quote(name))"))
        var settings = try PostgresSettings(url: cluster.url(database: name), password: password, poolSize: poolSize)
        // The whole suite runs its tests side by side on two cores, where a statement can wait
        // longer than a deployment's 5 s bound for a turn of the cooperative pool; the bound itself
        // is tested by the outage tests, which set their own.
        settings.connectionWait = .seconds(120)
        return settings
    }

    /// Runs a statement as the administrator (in the maintenance database).
    static func administer(_ sql: String) async throws {
        try await administration().client.query(PostgresQuery(unsafeSQL: sql))
    }

    /// Drops a database made by ``create(poolSize:)``, closing any connection still open to it.
    static func drop(_ settings: PostgresSettings) async throws {
        try await administer("DROP DATABASE IF EXISTS \(SQLIdentifier.quote(settings.database)) WITH (FORCE)")
    }
}

extension StorageFactory {
    /// PostgreSQL: a new database per call in the process's cluster, shared by two instances.
    static let postgres = StorageFactory(description: "PostgreSQL", maximumInstances: 2) {
        let settings = try await PostgresTestDatabases.create()
        return TestDatabase(
            open: { observer in try await PostgresTableStorage.open(settings, logger: .quiet, observer: observer) },
            remove: { try await PostgresTestDatabases.drop(settings) })
    }
}
