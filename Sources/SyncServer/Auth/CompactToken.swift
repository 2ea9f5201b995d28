import Foundation
import SyncWire

/// A token split into its three JWS compact parts (RFC 7515 §7.1), each checked to be unpadded
/// base64url. Nothing here trusts the token: the header is read to pick a key, the claims only
/// after the signature verified.
struct CompactToken {
    /// The longest token accepted, in bytes; a longer one is malformed.
    static let maximumLength = 8192

    /// `BASE64URL(header) "." BASE64URL(payload)`: the bytes the signature covers.
    let signingInput: Data
    let header: JSONObject
    let signature: Data
    private let encodedPayload: Substring

    init(_ token: String) throws(AuthenticationFailure) {
        guard token.utf8.count <= Self.maximumLength else { throw .malformed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty,
            let headerBytes = Base64URL.decode(parts[0]), let signature = Base64URL.decode(parts[2]),
            Base64URL.decode(parts[1]) != nil
        else { throw .malformed }
        header = try Self.object(headerBytes)
        // RFC 7515 §4.1.11: a header naming extensions the recipient must understand is refused,
        // and this verifier understands none.
        guard header["crit"] == nil else { throw .malformed }
        signingInput = Data(parts[0].utf8) + Data(".".utf8) + Data(parts[1].utf8)
        self.signature = signature
        encodedPayload = parts[1]
    }

    /// The header's `alg`, which must be a string.
    func algorithm() throws(AuthenticationFailure) -> String {
        guard case .string(let algorithm)? = header["alg"] else { throw .malformed }
        return algorithm
    }

    /// The header's `kid`, when present; it must be a string.
    func keyID() throws(AuthenticationFailure) -> String? {
        switch header["kid"] {
        case nil: return nil
        case .string(let keyID)?: return keyID
        default: throw .malformed
        }
    }

    /// The payload's claims. Read them only once the signature has verified.
    func claims() throws(AuthenticationFailure) -> JSONObject {
        guard let bytes = Base64URL.decode(encodedPayload) else { throw .malformed }
        return try Self.object(bytes)
    }

    private static func object(_ bytes: Data) throws(AuthenticationFailure) -> JSONObject {
        guard let object = try? JSONCoding.decode(JSONObject.self, from: bytes) else { throw .malformed }
        return object
    }
}

/// Unpadded base64url (RFC 4648 §5), as JOSE writes it.
enum Base64URL {
    /// The bytes `text` encodes, or `nil` when it has padding, a character outside the alphabet,
    /// or an impossible length.
    static func decode(_ text: some StringProtocol) -> Data? {
        guard text.utf8.count % 4 != 1 else { return nil }
        var standard = [UInt8]()
        standard.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(byte)
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard))
    }
}
