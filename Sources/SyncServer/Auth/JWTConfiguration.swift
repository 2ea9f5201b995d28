public import Foundation

/// How the server verifies JSON Web Tokens: where the keys are, and which issuer, audience and
/// clock skew it requires.
public struct JWTConfiguration: Sendable, Hashable {
    /// Where the keys come from.
    public enum KeySource: Sendable, Hashable {
        /// An HS256 shared secret: the first line of the file, as bytes, at least 32 of them.
        case secretFile(path: String)
        /// A JWK Set (RFC 7517) of RS256 and ES256 public keys, chosen by a token's `kid`.
        case jwksFile(path: String)
    }

    /// The clock skew allowed by default: 60 seconds either way on `exp` and `nbf`.
    public static let defaultClockSkew: TimeInterval = 60

    /// Where the keys come from.
    public var keySource: KeySource
    /// The `iss` every token must have; `nil` accepts any.
    public var issuer: String?
    /// The audience every token's `aud` must name (a string or one of an array); `nil` accepts any.
    public var audience: String?
    /// How far the server's clock and the issuer's may disagree, in seconds: a token is still
    /// accepted this long after its `exp` and this long before its `nbf`. Negative counts as 0.
    public var clockSkew: TimeInterval

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - keySource: The secret file or the JWK Set file.
    ///   - issuer: The required `iss`, if any.
    ///   - audience: The required audience, if any.
    ///   - clockSkew: The allowed clock skew in seconds (60 by default).
    public init(keySource: KeySource, issuer: String? = nil, audience: String? = nil, clockSkew: TimeInterval = defaultClockSkew) {
        self.keySource = keySource
        self.issuer = issuer
        self.audience = audience
        self.clockSkew = clockSkew
    }

    /// The configuration of the command-line flags `--jwt-secret-file`, `--jwks-file`,
    /// `--jwt-issuer` and `--jwt-audience`, checked together.
    ///
    /// - Parameters:
    ///   - secretFile: `--jwt-secret-file`, if given.
    ///   - jwksFile: `--jwks-file`, if given.
    ///   - issuer: `--jwt-issuer`, if given.
    ///   - audience: `--jwt-audience`, if given.
    /// - Returns: `nil` when no flag was given (JWT authentication off).
    /// - Throws: ``JWTConfigurationError`` when both key files are given, when an issuer or an
    ///   audience is given without a key file, or when one of them is empty.
    public static func fromOptions(
        secretFile: String?, jwksFile: String?, issuer: String?, audience: String?
    ) throws(JWTConfigurationError) -> JWTConfiguration? {
        if issuer?.isEmpty == true { throw JWTConfigurationError("--jwt-issuer must not be empty") }
        if audience?.isEmpty == true { throw JWTConfigurationError("--jwt-audience must not be empty") }
        switch (secretFile, jwksFile) {
        case (nil, nil):
            guard issuer == nil, audience == nil else {
                throw JWTConfigurationError("--jwt-issuer and --jwt-audience need --jwt-secret-file or --jwks-file")
            }
            return nil
        case (let path?, nil):
            return JWTConfiguration(keySource: .secretFile(path: path), issuer: issuer, audience: audience)
        case (nil, let path?):
            return JWTConfiguration(keySource: .jwksFile(path: path), issuer: issuer, audience: audience)
        case (_?, _?):
            throw JWTConfigurationError("give --jwt-secret-file or --jwks-file, not both")
        }
    }
}

/// Why JWT verification cannot be set up: a flag combination, or a key file that cannot be read
/// or holds no acceptable key. The message names the file and the fault, never key material.
public struct JWTConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for a person.
    public let message: String

    /// Creates an error.
    ///
    /// - Parameter message: What is wrong; it must not contain key material.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
