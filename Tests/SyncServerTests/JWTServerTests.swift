import Foundation
import HTTPTypes
import Logging
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server with sign-in tokens: each verified token's subject owns its rows of per-user tables;
/// each refused token is a 401 naming its class, and nothing it asked for happens.
@Suite struct JWTServerTests {
    static func headers(_ token: String?) -> HTTPFields {
        var headers = TestServer.version
        if let token { headers[.authorization] = "Bearer " + token }
        return headers
    }

    @Test(arguments: StorageFactory.all)
    func eachSignedInUserSeesOnlyTheirOwnRows(_ factory: StorageFactory) async throws {
        let directory = try TemporaryDirectory(prefix: "jwt-server")
        defer { directory.remove() }
        let key = try await TestKey.es256(keyID: "ec-1")
        try jwkSet([key]).write(to: directory.file("keys.json"))
        let verifier = try await JWTVerifier.load(
            JWTConfiguration(keySource: .jwksFile(path: directory.path("keys.json")), issuer: "https://id.example"))
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = ServerConfiguration(port: 0, authentication: .verifier(verifier), perUserTables: .all, logger: logger)
        try await TestServer.run(configuration, storage: factory) { server in
            let claims = ["iss": JSONValue.string("https://id.example")]
            let alice = try key.token(TestClaims.valid(["iss": claims["iss"], "sub": "alice"]))
            let bob = try key.token(TestClaims.valid(["iss": claims["iss"], "sub": "bob"]))
            #expect(
                try await server.send(.post, "/tables/todo", object: ["id": "a", "text": "alice's"], headers: Self.headers(alice)).status == .created)
            #expect(
                try await server.send(.post, "/tables/todo", object: ["id": "a", "text": "bob's"], headers: Self.headers(bob)).status == .created)
            #expect(try await server.send(.get, "/tables/todo", headers: Self.headers(alice)).array.map { $0["text"] } == ["alice's"])
            #expect(try await server.send(.get, "/tables/todo", headers: Self.headers(bob)).array.map { $0["text"] } == ["bob's"])

            let expired = try key.token(TestClaims.valid(["iss": claims["iss"], "exp": .int(Int64(Date().timeIntervalSince1970) - 3600)]))
            let foreign = try key.token(TestClaims.valid(["iss": "https://elsewhere.example"]))
            for (token, kind) in [(nil, "missingToken"), (expired, "expired"), (foreign, "wrongIssuer"), (alice + "x", "badSignature")] {
                let refused = try await server.send(.post, "/tables/todo", object: ["id": "z"], headers: Self.headers(token))
                #expect(refused.status == .unauthorized)
                #expect(refused.errorMessage == "Unauthorized: \(kind)")
                #expect(!String(decoding: refused.body, as: UTF8.self).contains("alice"), "a refusal repeats nothing of the token")
            }
            #expect(try await server.send(.get, "/tables/todo/z", headers: Self.headers(alice)).status == .notFound, "nothing refused was stored")
        }
    }

    @Test func theExecutableVerifiesTokensWithTheSecretOfItsFile() async throws {
        let directory = try TemporaryDirectory(prefix: "jwt-server")
        defer { directory.remove() }
        var generator = SystemRandomNumberGenerator()
        let secret = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }).map { String(format: "%02x", $0) }.joined()
        try Data((secret + "\n").utf8).write(to: directory.file("secret"))
        let key = try await TestKey.hmac(Data(secret.utf8))
        let server = try await ServerProcess.start(arguments: ["--jwt-secret-file", directory.path("secret"), "--per-user-tables", "all"])
        defer { server.stop() }
        let other = try await TestKey.hs256()
        for (token, status) in [(nil, 401), (try other.token(), 401), (try key.token(), 200)] {
            var request = URLRequest(url: server.url.appendingPathComponent("tables/todo"))
            request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
            if let token { request.setValue(token, forHTTPHeaderField: "X-ZUMO-AUTH") }
            let (_, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == status)
        }

        try Data("short\n".utf8).write(to: directory.file("short"))
        let short = try runProgram(ServerProcess.tool.url.path, ["--port", "0", "--jwt-secret-file", directory.path("short")])
        #expect(short.status != 0 && short.error.contains(directory.path("short")))
        #expect(!short.output.contains("listening"))
        let both = try runProgram(
            ServerProcess.tool.url.path,
            ["--port", "0", "--jwt-secret-file", directory.path("secret"), "--auth-token-file", directory.path("secret")])
        #expect(both.status != 0 && both.error.contains("exclude each other") && !both.error.contains(secret))
    }
}
