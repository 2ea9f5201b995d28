import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// Loading JWT keys at start-up (every bad file is a clear error that shows no key), the flags,
/// and finding a request's token.
@Suite struct JWTConfigurationTests {
    @Test func theSecretIsTheFirstLineOfItsFile() async throws {
        let directory = try TemporaryDirectory(prefix: "jwt")
        defer { directory.remove() }
        let key = try await TestKey.hmac(Data(String(repeating: "k", count: 31).utf8) + Data([0xC3, 0xA9]))
        let path = directory.path("secret")
        for ending in ["\n", "\r\n", "\nsecond line, not part of the key\n", ""] {
            try (key.secret + Data(ending.utf8)).write(to: URL(fileURLWithPath: path))
            let verifier = try await JWTVerifier.load(JWTConfiguration(keySource: .secretFile(path: path)))
            #expect(accepted(try key.token(), by: verifier)?.subject == "alice")
        }
        // A key over the whole file (both lines) is another key.
        try (key.secret + Data("\nmore".utf8)).write(to: URL(fileURLWithPath: path))
        let verifier = try await JWTVerifier.load(JWTConfiguration(keySource: .secretFile(path: path)))
        expectRefusal(.badSignature, try await TestKey.hmac(key.secret + Data("\nmore".utf8)).token(), by: verifier)
    }

    @Test func aShortOrMissingSecretIsAStartUpError() async throws {
        let directory = try TemporaryDirectory(prefix: "jwt")
        defer { directory.remove() }
        let short = String(repeating: "s3cr3t", count: 5) + "!"
        let path = directory.path("secret")
        for content in [short + "\n" + String(repeating: "x", count: 64), "", "\n" + String(repeating: "x", count: 64)] {
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            let message = await loadError(.secretFile(path: path))
            #expect(message.contains(path) && message.contains("at least 32 bytes"), "\(message)")
            let leaks = message.contains(short) || message.contains("xxxx")
            #expect(!leaks, "the message shows the file's content")
        }
        let missing = await loadError(.secretFile(path: directory.path("absent")))
        #expect(missing == "cannot read the JWT secret file \(directory.path("absent"))")
        #expect(await loadError(.secretFile(path: directory.path(""))).hasPrefix("cannot read"), "a directory")
    }

    @Test func aBadJWKSetIsAStartUpErrorNamingTheKey() async throws {
        let directory = try TemporaryDirectory(prefix: "jwt")
        defer { directory.remove() }
        let rsa = try await TestKey.rs256(keyID: "rsa")
        let ec = try await TestKey.es256(keyID: "ec")
        var generator = SystemRandomNumberGenerator()
        let random = { (count: Int) in base64URL(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })) }
        let smallModulus = random(128), privatePart = random(256), symmetric = random(32), offCurve = random(32)
        func edited(_ key: TestKey, _ changes: [String: JSONValue?]) -> JSONValue {
            var jwk = key.publicJWK
            for (name, value) in changes { jwk[name] = value }
            return .object(jwk)
        }
        let cases: [(json: String, expected: String)] = [
            ("not json", "not a JWK Set"),
            ("[]", "not a JWK Set"),
            ("{\"keys\": {}}", "not a JWK Set"),
            ("{\"keys\": []}", "holds no keys"),
            ("{\"keys\": [1]}", "key 1 is not a JSON object"),
            (try set([.object(rsa.publicJWK), .object(rsa.publicJWK)]), "two keys have the kid \"rsa\""),
            (try set([.object(ec.publicJWK), edited(rsa, ["kid": ""])]), "key 2 has a kid that is not a non-empty string"),
            (try set([edited(rsa, ["d": .string(privatePart)])]), "key 1 (kid \"rsa\") holds private key material (\"d\")"),
            (try set([["kty": "oct", "kid": "hmac", "k": .string(symmetric)]]), "key 1 (kid \"hmac\") holds private key material (\"k\")"),
            (try set([["kty": "OKP", "crv": "Ed25519", "x": .string(random(32))]]), "key 1 is neither an RSA key (RS256) nor an EC key (ES256)"),
            (try set([edited(rsa, ["alg": "RS512"])]), "key 1 (kid \"rsa\") is for another algorithm than RS256"),
            (try set([edited(ec, ["alg": "ES384"])]), "key 1 (kid \"ec\") is for another algorithm than ES256"),
            (try set([edited(rsa, ["use": "enc"])]), "key 1 (kid \"rsa\") is not for signatures"),
            (try set([edited(rsa, ["n": nil])]), "key 1 (kid \"rsa\") lacks its RSA modulus n or exponent e"),
            (try set([edited(rsa, ["n": .string(smallModulus)])]), "key 1 (kid \"rsa\") is not a valid RSA public key of at least 2048 bits"),
            (try set([edited(ec, ["crv": "P-384"])]), "key 1 (kid \"ec\") is not on the curve P-256"),
            (try set([edited(ec, ["y": nil])]), "key 1 (kid \"ec\") lacks its coordinates x and y"),
            (try set([edited(ec, ["x": .string(offCurve)])]), "key 1 (kid \"ec\") is not a valid P-256 public key"),
        ]
        let path = directory.path("keys.json")
        for (json, expected) in cases {
            try Data(json.utf8).write(to: URL(fileURLWithPath: path))
            let message = await loadError(.jwksFile(path: path))
            #expect(message.hasPrefix("JWK Set file \(path): ") && message.contains(expected), "\(message)")
            let leaks = [smallModulus, privatePart, symmetric, offCurve].contains { message.contains($0) }
            #expect(!leaks, "the message shows key material")
        }
        #expect(await loadError(.jwksFile(path: directory.path("absent"))) == "cannot read the JWK Set file \(directory.path("absent"))")
    }

    @Test func theFlagsGoTogetherOneWay() throws {
        #expect(try JWTConfiguration.fromOptions(secretFile: nil, jwksFile: nil, issuer: nil, audience: nil) == nil)
        #expect(
            try JWTConfiguration.fromOptions(secretFile: "s", jwksFile: nil, issuer: "i", audience: "a")
                == JWTConfiguration(keySource: .secretFile(path: "s"), issuer: "i", audience: "a", clockSkew: 60))
        #expect(try JWTConfiguration.fromOptions(secretFile: nil, jwksFile: "k", issuer: nil, audience: nil)?.keySource == .jwksFile(path: "k"))
        let refused: [(String?, String?, String?, String?, String)] = [
            ("s", "k", nil, nil, "not both"), (nil, nil, "i", nil, "need --jwt-secret-file or --jwks-file"),
            (nil, nil, nil, "a", "need --jwt-secret-file or --jwks-file"), ("s", nil, "", nil, "--jwt-issuer must not be empty"),
            (nil, "k", nil, "", "--jwt-audience must not be empty"),
        ]
        for (secret, jwks, issuer, audience, expected) in refused {
            do {
                _ = try JWTConfiguration.fromOptions(secretFile: secret, jwksFile: jwks, issuer: issuer, audience: audience)
                Issue.record("accepted: \(expected)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }

    @Test func theTokenComesFromXZumoAuthOrABearerAuthorization() throws {
        let zumo = try #require(HTTPField.Name(WireHeader.auth))
        func fields(_ pairs: [(HTTPField.Name, String)]) -> HTTPFields { HTTPFields(pairs.map { HTTPField(name: $0.0, value: $0.1) }) }
        let found: [(HTTPFields, String)] = [
            (fields([(zumo, "t.o.k")]), "t.o.k"), (fields([(zumo, "  t.o.k ")]), "t.o.k"),
            (fields([(.authorization, "Bearer t.o.k")]), "t.o.k"), (fields([(.authorization, "bearer   t.o.k")]), "t.o.k"),
            (fields([(.authorization, "BEARER\tt.o.k")]), "t.o.k"),
            (fields([(zumo, "t.o.k"), (.authorization, "Bearer t.o.k")]), "t.o.k"),
            (fields([(zumo, ""), (.authorization, "Bearer t.o.k")]), "t.o.k"),
            (fields([(.authorization, "Basic dXNlcjpwdw=="), (zumo, "t.o.k")]), "t.o.k"),
        ]
        for (headers, token) in found {
            #expect(try JWTVerifier.token(in: headers) == token)
        }
        let refused: [(HTTPFields, AuthenticationFailure)] = [
            (fields([]), .missingToken), (fields([(zumo, "")]), .missingToken), (fields([(zumo, "  ")]), .missingToken),
            (fields([(.authorization, "Basic dXNlcjpwdw==")]), .missingToken), (fields([(.authorization, "Bearertok")]), .missingToken),
            (fields([(.authorization, "Bearer")]), .malformed), (fields([(.authorization, "Bearer  ")]), .malformed),
            (fields([(zumo, "a.b.c"), (.authorization, "Bearer x.y.z")]), .malformed),
            (fields([(zumo, "a.b.c"), (zumo, "x.y.z")]), .malformed),
            (fields([(.authorization, "Bearer a.b.c"), (.authorization, "Bearer x.y.z")]), .malformed),
        ]
        for (headers, failure) in refused {
            #expect(throws: failure) { try JWTVerifier.token(in: headers) }
        }
    }

    @Test func aMiddlewareOfThreeLinesAnswers401WithTheClass() async throws {
        let key = try await TestKey.hs256()
        let verifier = JWTVerifier(keys: try await JWTKeySet.hs256(secret: key.secret))
        let router = Router()
        router.get("whoami") { request, _ -> String in
            try verifier.authenticate(headers: request.headers).subject
        }
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let expired = try key.token(TestClaims.valid(["exp": .int(Int64(Date().timeIntervalSince1970) - 3600)]))
        let alice = try key.token(), bob = try key.token(TestClaims.valid(subject: "bob"))
        let cases: [(HTTPFields, HTTPResponse.Status, String)] = [
            ([.authorization: "Bearer " + alice], .ok, "alice"),
            ([HTTPField.Name(WireHeader.auth)!: bob], .ok, "bob"),
            ([:], .unauthorized, "{\"error\":\"Unauthorized: missingToken\"}"),
            ([.authorization: "Bearer " + expired], .unauthorized, "{\"error\":\"Unauthorized: expired\"}"),
            ([.authorization: "Bearer x.y.z"], .unauthorized, "{\"error\":\"Unauthorized: malformed\"}"),
        ]
        try await Application(router: router, logger: quiet).test(.router) { client in
            for (headers, status, body) in cases {
                try await client.execute(uri: "/whoami", method: .get, headers: headers) { response in
                    #expect(response.status == status)
                    #expect(String(buffer: response.body) == body)
                    if status == .unauthorized {
                        #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                        #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                    }
                }
            }
        }
    }
}

/// A JWK Set of `keys` as JSON text.
private func set(_ keys: [JSONValue]) throws -> String {
    try JSONCoding.string(["keys": .array(keys)])
}

/// The message of the error that loading `source` throws ("" when it loads).
private func loadError(_ source: JWTConfiguration.KeySource) async -> String {
    do {
        _ = try await JWTKeySet.load(source)
        Issue.record("the keys loaded")
        return ""
    } catch {
        return error.message
    }
}
