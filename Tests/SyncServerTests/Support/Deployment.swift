import Foundation
import HTTPTypes
import Logging
import SyncServer
import SyncWire

/// Servers listening on 127.0.0.1 (port 0) over one database of a storage engine: as many
/// instances as the engine allows, up to the number asked for, and a real HTTP client.
struct Deployment: Sendable {
    let servers: [RunningServer]
    let client: HTTPTestClient

    /// The URL of server `index`, counted round the instances (writers and readers spread over them).
    func server(_ index: Int) -> URL { servers[index % servers.count].url }

    /// Starts the servers, runs `body`, then stops them, closes their storages and removes the
    /// database, whether `body` throws or not.
    static func run(
        _ factory: StorageFactory, instances: Int = 2, configuration: ServerConfiguration = .testing(maxTop: 0),
        observer: (any WriteObserver)? = nil, _ body: @Sendable (Deployment) async throws -> Void
    ) async throws {
        let database = try await factory.makeDatabase()
        var servers: [RunningServer] = []
        let client = HTTPTestClient()
        var failure: (any Error)?
        do {
            for _ in 0..<max(1, min(instances, factory.maximumInstances)) {
                servers.append(try await RunningServer.start(configuration, storage: try await database.open(observer)))
            }
            try await body(Deployment(servers: servers, client: client))
        } catch {
            failure = error
        }
        try? await client.shutdown()
        for server in servers { await server.stop() }
        try? await database.remove()
        if let failure { throw failure }
    }

    /// Every row of `table`, deleted or not, by id, paged in id order from the first server.
    func allRows(_ table: String) async throws -> [String: JSONObject] {
        var rows: [String: JSONObject] = [:]
        while true {
            let uri = "/tables/\(table)?$orderby=id&$top=50&$skip=\(rows.count)&__includeDeleted=true"
            let page = try await client.send(.get, server(0), uri).array
            if page.isEmpty { return rows }
            for row in page {
                if let id = row[SystemProperty.id]?.stringValue { rows[id] = row }
            }
        }
    }
}
