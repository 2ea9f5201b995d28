import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SyncServer
import SyncWire
import Testing

/// A server on a fresh database of a storage engine, driven through Hummingbird's router test
/// client.
struct TestServer {
    let client: any TestClientProtocol

    /// Runs `body` against a server with `configuration` over a new database of `storage`, then
    /// closes the storage and removes the database, whether `body` throws or not.
    static func run(
        _ configuration: ServerConfiguration = ServerConfiguration(), storage factory: StorageFactory = .default,
        _ body: @Sendable (TestServer) async throws -> Void
    ) async throws {
        let database = try await factory.makeDatabase()
        let storage = try await database.open(nil)
        var failure: (any Error)?
        do {
            let app = Application(router: buildRouter(storage: storage, configuration: configuration), logger: .quiet)
            try await app.test(.router) { client in try await body(TestServer(client: client)) }
        } catch {
            failure = error
        }
        try await storage.close()
        try await database.remove()
        if let failure { throw failure }
    }

    static let version: HTTPFields = [HTTPField.Name("ZUMO-API-VERSION")!: "2.0.0"]

    /// Sends a request with the API version header (unless `headers` replaces it).
    @discardableResult
    func send(
        _ method: HTTPRequest.Method, _ uri: String, json: String? = nil, headers: HTTPFields = TestServer.version
    ) async throws -> Reply {
        try await client.execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) }) { response in
            Reply(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
        }
    }

    /// Sends an object as JSON.
    @discardableResult
    func send(_ method: HTTPRequest.Method, _ uri: String, object: JSONObject, headers: HTTPFields = TestServer.version) async throws -> Reply {
        try await send(method, uri, json: String(decoding: try JSONCoding.encode(object), as: UTF8.self), headers: headers)
    }

    /// `headers` plus an `If-Match` of `version`.
    static func ifMatch(_ version: String) -> HTTPFields {
        var fields = TestServer.version
        fields[.ifMatch] = "\"\(version)\""
        return fields
    }
}

/// A response, decoded on demand.
struct Reply: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: Data

    var object: JSONObject { (try? JSONCoding.decode(JSONObject.self, from: body)) ?? [:] }
    var array: [JSONObject] { (try? JSONCoding.decode([JSONObject].self, from: body)) ?? [] }
    var errorMessage: String? { object["error"]?.stringValue }
    var eTag: String? { headers[.eTag] }
}

extension ServerConfiguration {
    static func testing(
        pageSize: Int = 50, maxTop: Int = 1000, softDelete: Bool = true, maxBodySize: Int = 1 << 20,
        authentication: Authentication = .none, perUserTables: PerUserTables = .none
    ) -> ServerConfiguration {
        var configuration = ServerConfiguration(
            port: 0, pageSize: pageSize, maxTop: maxTop, softDelete: softDelete, maxBodySize: maxBodySize, authentication: authentication,
            perUserTables: perUserTables, logger: .quiet)
        // The suite runs its tests side by side on two cores (see PostgresTestDatabases); the
        // storage bound is tested by the tests that set their own.
        configuration.storageTimeout = .seconds(120)
        return configuration
    }
}
