import Foundation
import JWTKit
import SyncWire

/// The keys of a JWK Set (RFC 7517 §5), each checked before any is used. A message about a key
/// names it by position and `kid`, never by its material.
struct JWKSetEntries {
    /// One key of the set, as written.
    struct Entry {
        /// 1-based.
        let position: Int
        let keyID: String?
        let fields: JSONObject
    }

    let keys: [Entry]

    /// The parameters that only a private (or symmetric) key has.
    static let privateParameters = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    init(_ json: Data) throws(JWTConfigurationError) {
        guard let root = try? JSONCoding.decode(JSONObject.self, from: json), case .array(let values)? = root["keys"] else {
            throw JWTConfigurationError("not a JWK Set (a JSON object with a \"keys\" array)")
        }
        guard !values.isEmpty else { throw JWTConfigurationError("the set holds no keys") }
        var keyIDs = Set<String>()
        var keys: [Entry] = []
        for (index, value) in values.enumerated() {
            guard case .object(let fields) = value else { throw JWTConfigurationError("key \(index + 1) is not a JSON object") }
            let keyID: String?
            switch fields["kid"] {
            case nil: keyID = nil
            case .string(let text)? where !text.isEmpty: keyID = text
            default: throw JWTConfigurationError("key \(index + 1) has a kid that is not a non-empty string")
            }
            if let keyID, !keyIDs.insert(keyID).inserted {
                throw JWTConfigurationError("two keys have the kid \"\(keyID)\"; a token's kid must pick one key")
            }
            keys.append(Entry(position: index + 1, keyID: keyID, fields: fields))
        }
        self.keys = keys
    }
}

extension JWKSetEntries.Entry {
    /// How messages name the key: `key 2 (kid "a")`.
    var name: String {
        keyID.map { "key \(position) (kid \"\($0)\")" } ?? "key \(position)"
    }

    /// The verifying key: RS256 for an RSA key, ES256 for an EC key on P-256.
    func key() async throws(JWTConfigurationError) -> JWTKeySet.Key {
        if let parameter = JWKSetEntries.privateParameters.first(where: { fields[$0] != nil }) {
            throw JWTConfigurationError("\(name) holds private key material (\"\(parameter)\"); the set must hold public keys only")
        }
        if let use = fields["use"], use != .string("sig") {
            throw JWTConfigurationError("\(name) is not for signatures (its use is not \"sig\")")
        }
        switch fields["kty"] {
        case .string("RSA")?:
            try expectAlgorithm(JWTKeySet.rs256)
            guard let modulus = fields["n"]?.stringValue, let exponent = fields["e"]?.stringValue else {
                throw JWTConfigurationError("\(name) lacks its RSA modulus n or exponent e")
            }
            guard let publicKey = try? JWTKit.Insecure.RSA.PublicKey(modulus: modulus, exponent: exponent) else {
                throw JWTConfigurationError("\(name) is not a valid RSA public key of at least 2048 bits")
            }
            return try await make(JWTKeySet.rs256) { await $0.add(rsa: publicKey, digestAlgorithm: .sha256) }
        case .string("EC")?:
            try expectAlgorithm(JWTKeySet.es256)
            guard fields["crv"] == .string("P-256") else { throw JWTConfigurationError("\(name) is not on the curve P-256 (ES256)") }
            guard let x = fields["x"]?.stringValue, let y = fields["y"]?.stringValue else {
                throw JWTConfigurationError("\(name) lacks its coordinates x and y")
            }
            guard let publicKey = try? ES256PublicKey(parameters: (x, y)) else {
                throw JWTConfigurationError("\(name) is not a valid P-256 public key")
            }
            return try await make(JWTKeySet.es256) { await $0.add(ecdsa: publicKey) }
        default:
            throw JWTConfigurationError("\(name) is neither an RSA key (RS256) nor an EC key (ES256); its kty is not supported")
        }
    }

    /// A key's `alg`, when it has one, must be the one its type is used with here.
    private func expectAlgorithm(_ algorithm: String) throws(JWTConfigurationError) {
        guard let declared = fields["alg"], declared != .string(algorithm) else { return }
        throw JWTConfigurationError("\(name) is for another algorithm than \(algorithm); only RS256 and ES256 keys are supported")
    }

    private func make(
        _ algorithm: String, _ add: @Sendable (JWTKeyCollection) async -> Void
    ) async throws(JWTConfigurationError) -> JWTKeySet.Key {
        guard let verifier = await JWTKeySet.verifier(add) else { throw JWTConfigurationError("\(name) could not be used") }
        return JWTKeySet.Key(keyID: keyID, algorithm: algorithm, verifier: verifier)
    }
}
