import CryptoExtras
import Foundation
import JWTKit
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// A signing key made for one test: an HS256 secret, or an RS256 / ES256 key pair whose public
/// half is written into a JWK Set. It signs whatever header and claims a test gives it, so tests
/// can forge every kind of bad token.
struct TestKey: Sendable {
    let algorithm: String
    let keyID: String?
    let signer: any JWTAlgorithm
    /// The public key as a JWK (empty for HS256).
    let publicJWK: JSONObject
    /// The shared secret (HS256 only).
    let secret: Data

    /// A random 32-byte HS256 secret.
    static func hs256(length: Int = 32) async throws -> TestKey {
        var generator = SystemRandomNumberGenerator()
        let secret = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return try await hmac(secret)
    }

    /// An HS256 key over `secret`, whatever it is (an attacker's key, say).
    static func hmac(_ secret: Data, keyID: String? = nil) async throws -> TestKey {
        let key = HMACKey(from: secret)
        let collection = JWTKeyCollection()
        await collection.add(hmac: key, digestAlgorithm: .sha256)
        return TestKey(algorithm: "HS256", keyID: keyID, signer: try await collection.getKey(), publicJWK: [:], secret: secret)
    }

    /// A fresh 2048-bit RSA key pair for RS256.
    static func rs256(keyID: String?) async throws -> TestKey {
        let privateKey = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let collection = JWTKeyCollection()
        await collection.add(rsa: privateKey, digestAlgorithm: .sha256)
        let (modulus, exponent) = try privateKey.publicKey.getKeyPrimitives()
        var jwk: JSONObject = ["kty": "RSA", "use": "sig", "alg": "RS256", "n": .string(base64URL(modulus)), "e": .string(base64URL(exponent))]
        if let keyID { jwk["kid"] = .string(keyID) }
        return TestKey(algorithm: "RS256", keyID: keyID, signer: try await collection.getKey(), publicJWK: jwk, secret: Data())
    }

    /// A fresh P-256 key pair for ES256.
    static func es256(keyID: String?) async throws -> TestKey {
        let privateKey = ES256PrivateKey()
        let collection = JWTKeyCollection()
        await collection.add(ecdsa: privateKey)
        let coordinates = try #require(privateKey.parameters)
        var jwk: JSONObject = ["kty": "EC", "crv": "P-256", "x": .string(coordinates.x), "y": .string(coordinates.y)]
        if let keyID { jwk["kid"] = .string(keyID) }
        return TestKey(algorithm: "ES256", keyID: keyID, signer: try await collection.getKey(), publicJWK: jwk, secret: Data())
    }

    /// This key under another `kid` (the same key material).
    func named(_ keyID: String?) -> TestKey {
        var jwk = publicJWK
        jwk["kid"] = keyID.map(JSONValue.string)
        return TestKey(algorithm: algorithm, keyID: keyID, signer: signer, publicJWK: jwk, secret: secret)
    }

    /// The header this key signs with by default: `alg`, `typ` and its `kid`.
    var header: JSONObject {
        var header: JSONObject = ["alg": .string(algorithm), "typ": "JWT"]
        if let keyID { header["kid"] = .string(keyID) }
        return header
    }

    /// A token of `claims` (``TestClaims/valid`` by default) under this key's ``header`` changed
    /// by `edit`.
    func token(_ claims: JSONObject = TestClaims.valid(), header edit: (inout JSONObject) -> Void = { _ in }) throws -> String {
        var header = self.header
        edit(&header)
        return try sign(header: header, claims: claims)
    }

    /// Signs any header and claims, as they are.
    func sign(header: JSONObject, claims: JSONObject) throws -> String {
        try sign(header: header, payload: try JSONCoding.encode(claims))
    }

    /// Signs any header and payload bytes (JSON or not).
    func sign(header: JSONObject, payload: Data) throws -> String {
        let input = base64URL(try JSONCoding.encode(header)) + "." + base64URL(payload)
        return input + "." + base64URL(Data(try signer.sign(Data(input.utf8))))
    }
}

/// Claims for test tokens.
enum TestClaims {
    /// A subject, an expiry five minutes ahead of `now`, and `iat`.
    static func valid(subject: String = "alice", now: Date = Date()) -> JSONObject {
        let seconds = Int64(now.timeIntervalSince1970)
        return ["sub": .string(subject), "exp": .int(seconds + 300), "iat": .int(seconds)]
    }

    /// ``valid(subject:now:)`` with `changes` applied (a `nil` removes the claim).
    static func valid(now: Date = Date(), _ changes: [String: JSONValue?]) -> JSONObject {
        var claims = valid(now: now)
        for (name, value) in changes { claims[name] = value }
        return claims
    }
}

/// A JWK Set of `keys`' public halves.
func jwkSet(_ keys: [TestKey]) throws -> Data {
    try JSONCoding.encode(["keys": JSONValue.array(keys.map { .object($0.publicJWK) })] as JSONObject)
}

/// Unpadded base64url.
func base64URL(_ bytes: Data) -> String {
    bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// Whether `verifier` accepts `token`, and as whom; a refusal is recorded as an issue naming its
/// class (never the token).
func accepted(_ token: String, by verifier: JWTVerifier, sourceLocation: SourceLocation = #_sourceLocation) -> Identity? {
    do {
        return try verifier.verify(token)
    } catch {
        Issue.record("refused: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Expects `verifier` to refuse `token` with `expected`, and the failure's texts to hold no part
/// of the token and none of `secrets` (claims, say).
func expectRefusal(
    _ expected: AuthenticationFailure, _ token: String, by verifier: JWTVerifier, secrets: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        _ = try verifier.verify(token)
        Issue.record("accepted a token that should be refused as \(expected.name)", sourceLocation: sourceLocation)
    } catch {
        #expect(error == expected, sourceLocation: sourceLocation)
        let texts = [error.description, error.responseMessage, String(describing: error)]
        let fragments = (token.split(separator: ".").map(String.init) + secrets).filter { $0.count >= 4 }
        let leaks = fragments.contains { fragment in texts.contains { $0.contains(fragment) } }
        #expect(!leaks, "the failure's text echoes the token or a claim", sourceLocation: sourceLocation)
    }
}

/// Loads a verifier from a JWK Set file of `keys` written in `directory`.
func jwksVerifier(
    _ keys: [TestKey], in directory: TemporaryDirectory, issuer: String? = nil, audience: String? = nil,
    clockSkew: TimeInterval = JWTConfiguration.defaultClockSkew, now: @escaping @Sendable () -> Date = { Date() }
) async throws -> JWTVerifier {
    let path = directory.path("jwks-\(UUID().uuidString).json")
    try jwkSet(keys).write(to: URL(fileURLWithPath: path))
    let configuration = JWTConfiguration(keySource: .jwksFile(path: path), issuer: issuer, audience: audience, clockSkew: clockSkew)
    return try await JWTVerifier.load(configuration, now: now)
}
