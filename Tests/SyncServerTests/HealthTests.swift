import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SyncServer
import SyncWire
import Testing

/// `GET /health`, for load balancers: 200 while the storage answers, 503 once it does not; no
/// API version and no authentication needed.
@Suite struct HealthTests {
    @Test(arguments: StorageFactory.all)
    func healthSaysWhetherTheStorageAnswers(_ factory: StorageFactory) async throws {
        let database = try await factory.makeDatabase()
        let storage = try await database.open(nil)
        let configuration = ServerConfiguration.testing(authentication: .sharedToken(UUID().uuidString))
        let app = Application(router: buildRouter(storage: storage, configuration: configuration), logger: .quiet)
        try await app.test(.router) { client in
            let server = TestServer(client: client)
            let healthy = try await server.send(.get, "/health", headers: [:])
            #expect(healthy.status == .ok && healthy.object == ["status": "ok"])
            #expect(healthy.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(try await server.send(.get, "/tables/todo", headers: TestServer.version).status == .unauthorized, "tables still need the token")

            try await storage.close()
            let failing = try await server.send(.get, "/health", headers: [:])
            #expect(failing.status == .serviceUnavailable)
            #expect(failing.errorMessage == "The storage does not answer")
        }
        try await database.remove()
    }
}
