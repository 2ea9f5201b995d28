public import Foundation
import JWTKit

/// The keys a ``JWTVerifier`` accepts signatures from, loaded once at start-up: one HS256 secret,
/// or the RS256 and ES256 public keys of a JWK Set.
///
/// Immutable and `Sendable`; verifying with it never suspends.
public struct JWTKeySet: Sendable {
    /// One key: the algorithm it is for and, in a JWK Set, its `kid`.
    struct Key: Sendable {
        let keyID: String?
        let algorithm: String
        let verifier: any JWTAlgorithm
    }

    /// The algorithm names a key set can hold.
    static let hs256 = "HS256", rs256 = "RS256", es256 = "ES256"

    let keys: [Key]
    /// Whether a token's `kid` is ignored: a lone secret has no id to match.
    let ignoresKeyID: Bool

    /// The fewest bytes an HS256 secret may have (the size of its SHA-256 output, RFC 7518 §3.2).
    public static let minimumSecretLength = 32

    /// The key set `source` names, read from its file.
    ///
    /// - Parameter source: The secret file or the JWK Set file.
    /// - Returns: The loaded keys.
    /// - Throws: ``JWTConfigurationError`` when the file cannot be read or holds no acceptable key;
    ///   the message names the file and the fault, never key material.
    public static func load(_ source: JWTConfiguration.KeySource) async throws(JWTConfigurationError) -> JWTKeySet {
        switch source {
        case .secretFile(let path):
            var bytes = try read(path, role: "JWT secret file")
            // The key keeps its own copy (swift-crypto's, wiped when freed); this one goes now.
            defer { bytes.resetBytes(in: bytes.startIndex..<bytes.endIndex) }
            // The secret is the first line's bytes, as they are (no decoding).
            let end = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            var line = bytes[bytes.startIndex..<end]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            do {
                return try await hs256(secret: line)
            } catch {
                throw JWTConfigurationError("JWT secret file \(path): \(error.message)")
            }
        case .jwksFile(let path):
            let json = try read(path, role: "JWK Set file")
            do {
                return try await jwks(json: json)
            } catch {
                throw JWTConfigurationError("JWK Set file \(path): \(error.message)")
            }
        }
    }

    /// A key set of one HS256 secret. A token's `kid` is not consulted: the secret is the only key.
    ///
    /// - Parameter secret: The shared secret, at least ``minimumSecretLength`` bytes.
    /// - Returns: The key set.
    /// - Throws: ``JWTConfigurationError`` when the secret is too short.
    public static func hs256(secret: some DataProtocol) async throws(JWTConfigurationError) -> JWTKeySet {
        guard secret.count >= minimumSecretLength else {
            throw JWTConfigurationError("an HS256 secret needs at least \(minimumSecretLength) bytes on its first line, and this one is shorter")
        }
        let key = HMACKey(from: secret)
        let verifier = await verifier { await $0.add(hmac: key, digestAlgorithm: .sha256) }
        guard let verifier else { throw JWTConfigurationError("the HS256 secret could not be used") }
        return JWTKeySet(keys: [Key(keyID: nil, algorithm: hs256, verifier: verifier)], ignoresKeyID: true)
    }

    /// The public keys of a JWK Set (RFC 7517): every key RS256 (RSA, at least 2048 bits) or ES256
    /// (EC on P-256), `kid`s distinct, no private parts.
    ///
    /// - Parameter json: The set's JSON text: `{"keys": [ … ]}`.
    /// - Returns: The key set.
    /// - Throws: ``JWTConfigurationError`` naming the first unacceptable key by position and `kid`.
    public static func jwks(json: Data) async throws(JWTConfigurationError) -> JWTKeySet {
        let entries = try JWKSetEntries(json)
        var keys: [Key] = []
        for entry in entries.keys {
            keys.append(try await entry.key())
        }
        return JWTKeySet(keys: keys, ignoresKeyID: false)
    }

    /// The key that must have signed a token whose header says `algorithm` and `keyID`.
    ///
    /// - Throws: ``AuthenticationFailure/unsupportedAlgorithm`` when no key is for `algorithm`
    ///   (or the key `keyID` names is for another), ``AuthenticationFailure/unknownKey`` when
    ///   `keyID` names no key, or is absent and several keys are for `algorithm`.
    func key(algorithm: String, keyID: String?) throws(AuthenticationFailure) -> Key {
        let candidates = keys.filter { $0.algorithm == algorithm }
        guard !candidates.isEmpty else { throw .unsupportedAlgorithm }
        if let keyID, !ignoresKeyID {
            guard let key = keys.first(where: { $0.keyID == keyID }) else { throw .unknownKey }
            guard key.algorithm == algorithm else { throw .unsupportedAlgorithm }
            return key
        }
        guard candidates.count == 1, let key = candidates.first else { throw .unknownKey }
        return key
    }

    /// Reads a key file, at most 1 MiB.
    private static func read(_ path: String, role: String) throws(JWTConfigurationError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw JWTConfigurationError("cannot read the \(role) \(path)")
        }
        guard data.count <= 1 << 20 else { throw JWTConfigurationError("the \(role) \(path) is larger than 1 MiB") }
        return data
    }

    /// The verifying algorithm of a key added to an empty jwt-kit collection by `add`.
    static func verifier(_ add: @Sendable (JWTKeyCollection) async -> Void) async -> (any JWTAlgorithm)? {
        let collection = JWTKeyCollection()
        await add(collection)
        return try? await collection.getKey()
    }
}
