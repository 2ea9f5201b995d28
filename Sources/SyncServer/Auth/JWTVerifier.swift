public import Foundation
public import HTTPTypes
import JWTKit
import SyncWire

/// Verifies the JSON Web Tokens that sign requests in, and turns a good one into an ``Identity``.
///
/// A token is accepted when, in this order: it is a compact JWS (three base64url parts, header
/// and claims JSON objects, no `crit`); its `alg` is one a configured key is for (never `none`;
/// an HMAC token against a public key is refused); its `kid` picks that key (without a `kid`,
/// exactly one key may be for the algorithm; an HS256 secret ignores `kid`); the signature
/// verifies; `exp` is present and not past, and `nbf`, when present, is not ahead, each with
/// ``JWTConfiguration/clockSkew``; `iss` and `aud` are the required ones, when configured; and
/// `sub` is a valid subject (``Identity/isValidSubject(_:)``). Claims are read only after the
/// signature verified. Each refusal is one ``AuthenticationFailure`` class.
///
/// Keys are loaded once (``load(_:now:)``); the verifier is immutable, `Sendable`, and never
/// suspends or logs.
public struct JWTVerifier: Sendable {
    /// The keys signatures are checked with.
    public let keys: JWTKeySet
    /// The required `iss`, if any.
    public let issuer: String?
    /// The audience `aud` must name, if any.
    public let audience: String?
    /// The allowed clock skew, in seconds.
    public let clockSkew: TimeInterval
    private let now: @Sendable () -> Date

    /// Creates a verifier over loaded keys.
    ///
    /// - Parameters:
    ///   - keys: The keys signatures are checked with.
    ///   - issuer: The required `iss`, if any.
    ///   - audience: The audience `aud` must name, if any.
    ///   - clockSkew: The allowed clock skew in seconds (negative counts as 0).
    ///   - now: The clock `exp` and `nbf` are compared with.
    public init(
        keys: JWTKeySet, issuer: String? = nil, audience: String? = nil,
        clockSkew: TimeInterval = JWTConfiguration.defaultClockSkew, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.clockSkew = max(0, clockSkew)
        self.now = now
    }

    /// Loads the configured keys and creates the verifier: what the server does once at start-up.
    ///
    /// - Parameters:
    ///   - configuration: The key file, issuer, audience and clock skew.
    ///   - now: The clock `exp` and `nbf` are compared with.
    /// - Returns: The verifier.
    /// - Throws: ``JWTConfigurationError`` when the key file cannot be read or holds no acceptable
    ///   key; the message names the file and the fault, never key material.
    public static func load(
        _ configuration: JWTConfiguration, now: @escaping @Sendable () -> Date = { Date() }
    ) async throws(JWTConfigurationError) -> JWTVerifier {
        JWTVerifier(
            keys: try await JWTKeySet.load(configuration.keySource), issuer: configuration.issuer, audience: configuration.audience,
            clockSkew: configuration.clockSkew, now: now)
    }

    /// Verifies `token` and returns who it names.
    ///
    /// - Parameter token: A compact JWS, as a request carried it.
    /// - Returns: The identity of the token's `sub` (and `iss`).
    /// - Throws: The ``AuthenticationFailure`` class of the first check that fails.
    public func verify(_ token: String) throws(AuthenticationFailure) -> Identity {
        let parts = try CompactToken(token)
        let key = try keys.key(algorithm: try parts.algorithm(), keyID: try parts.keyID())
        guard (try? key.verifier.verify(parts.signature, signs: parts.signingInput)) == true else { throw .badSignature }
        return try identity(from: try parts.claims(), at: now())
    }

    /// Finds the request's token (``token(in:)``) and verifies it: all a middleware needs.
    ///
    /// - Parameter headers: The request's header fields.
    /// - Returns: The identity of the token.
    /// - Throws: ``AuthenticationFailure``: `missingToken` when there is none, otherwise the class
    ///   of the first check that fails.
    public func authenticate(headers: HTTPFields) throws(AuthenticationFailure) -> Identity {
        try verify(try Self.token(in: headers))
    }

    /// The token a request carries: the value of `X-ZUMO-AUTH` (the Mobile Apps header) or of
    /// `Authorization: Bearer <token>` (the scheme in any case). An empty value carries no token,
    /// and an `Authorization` field of another scheme is not a token source.
    ///
    /// - Parameter headers: The request's header fields.
    /// - Returns: The token.
    /// - Throws: ``AuthenticationFailure/missingToken`` when there is none;
    ///   ``AuthenticationFailure/malformed`` when two fields carry different tokens, or a `Bearer`
    ///   field has no token.
    public static func token(in headers: HTTPFields) throws(AuthenticationFailure) -> String {
        var tokens: [Substring] = []
        if let zumo = HTTPField.Name(WireHeader.auth) {
            tokens += headers[values: zumo].map { trimmed($0[...]) }.filter { !$0.isEmpty }
        }
        for value in headers[values: .authorization] {
            let field = trimmed(value[...])
            let scheme = field.prefix { $0 != " " && $0 != "\t" }
            guard scheme.lowercased() == "bearer" else { continue }
            let token = trimmed(field[scheme.endIndex...])
            guard !token.isEmpty else { throw .malformed }
            tokens.append(token)
        }
        guard let first = tokens.first else { throw .missingToken }
        guard tokens.allSatisfy({ $0 == first }) else { throw .malformed }
        return String(first)
    }

    /// `text` without leading and trailing spaces and tabs (optional whitespace, RFC 9110 §5.6.3).
    private static func trimmed(_ text: Substring) -> Substring {
        let isContent: (Character) -> Bool = { $0 != " " && $0 != "\t" }
        guard let start = text.firstIndex(where: isContent), let end = text.lastIndex(where: isContent) else { return text[text.endIndex...] }
        return text[start...end]
    }

    /// The identity the verified `claims` name, if they pass the lifetime, issuer, audience and
    /// subject checks at `date`.
    func identity(from claims: JSONObject, at date: Date) throws(AuthenticationFailure) -> Identity {
        let time = date.timeIntervalSince1970
        guard let expiryClaim = claims["exp"] else { throw .malformed }
        let expiry = try Self.numericDate(expiryClaim)
        guard time < expiry + clockSkew else { throw .expired }
        if let notBeforeClaim = claims["nbf"] {
            let notBefore = try Self.numericDate(notBeforeClaim)
            guard time + clockSkew >= notBefore else { throw .notYetValid }
        }
        if let issuer, claims["iss"] != .string(issuer) { throw .wrongIssuer }
        if let audience {
            switch claims["aud"] {
            case .string(let named)? where named == audience: break
            case .array(let named)? where named.contains(.string(audience)): break
            default: throw .wrongAudience
            }
        }
        guard case .string(let subject)? = claims["sub"], Identity.isValidSubject(subject) else { throw .missingSubject }
        return Identity(subject: subject, issuer: claims["iss"]?.stringValue)
    }

    /// A NumericDate (RFC 7519 §2): seconds since the epoch, an integer or a finite real.
    private static func numericDate(_ value: JSONValue) throws(AuthenticationFailure) -> TimeInterval {
        switch value {
        case .int(let seconds): return TimeInterval(seconds)
        case .double(let seconds) where seconds.isFinite: return seconds
        default: throw .malformed
        }
    }
}

/// A verifier is what `Authentication.verifier` takes: each table request proves its identity
/// with a signed token, and a refusal is the 401 of its ``AuthenticationFailure`` class.
extension JWTVerifier: IdentityVerifier {}
