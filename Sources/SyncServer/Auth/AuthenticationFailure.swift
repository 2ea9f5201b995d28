public import HTTPTypes
public import Hummingbird
public import SyncKeys
public import SyncWire

/// Why a request's token was refused. Each kind is a class of failure, never a detail: no
/// message says anything about the token or its claims, so a refusal can be logged and sent back
/// as it is.
///
/// A struct of kinds, so that classes can be added later without breaking callers; compare with
/// the static members, which match on the class (`failure == .expired`, `catch
/// AuthenticationFailure.expired`).
///
/// As an `HTTPResponseError` it answers 401 with `{"error": "Unauthorized: <class>"}`
/// (``responseBody``) and a `WWW-Authenticate: Bearer` challenge, so a middleware can let it
/// propagate.
public struct AuthenticationFailure: Error, Sendable, Hashable, CaseIterable, CustomStringConvertible, KindedError {
    package enum Code: String, Sendable, Hashable, CaseIterable {
        case missingToken, malformed, unsupportedAlgorithm, unknownKey, badSignature, expired, notYetValid
        case wrongIssuer, wrongAudience, missingSubject
    }

    package let code: Code

    init(_ code: Code) {
        self.code = code
    }

    /// The request carries no token (no `X-ZUMO-AUTH`, no `Authorization: Bearer`).
    public static let missingToken = AuthenticationFailure(.missingToken)
    /// Not a signed compact JWT, unreadable JSON, two different tokens in one request, an
    /// unsupported critical header, or a required claim (`exp`) missing or not a number.
    public static let malformed = AuthenticationFailure(.malformed)
    /// `alg` is `none` or an algorithm no configured key is for (an HMAC token against a public
    /// key is one).
    public static let unsupportedAlgorithm = AuthenticationFailure(.unsupportedAlgorithm)
    /// `kid` names no configured key, or the token has no `kid` and more than one key fits.
    public static let unknownKey = AuthenticationFailure(.unknownKey)
    /// The signature does not verify with the key.
    public static let badSignature = AuthenticationFailure(.badSignature)
    /// `exp` is past, beyond the allowed clock skew.
    public static let expired = AuthenticationFailure(.expired)
    /// `nbf` is still ahead, beyond the allowed clock skew.
    public static let notYetValid = AuthenticationFailure(.notYetValid)
    /// An issuer is required and `iss` is not it.
    public static let wrongIssuer = AuthenticationFailure(.wrongIssuer)
    /// An audience is required and `aud` (a string or an array) does not name it.
    public static let wrongAudience = AuthenticationFailure(.wrongAudience)
    /// `sub` is missing, not a string, empty, too long or has control characters.
    public static let missingSubject = AuthenticationFailure(.missingSubject)

    /// Every class, e.g. to label a metric by class before any refusal happened.
    public static var allCases: [AuthenticationFailure] { Code.allCases.map(AuthenticationFailure.init) }

    /// The class's name, as the 401's message gives it (`expired`).
    public var name: String { code.rawValue }

    /// The class and what it means, e.g. `expired: the token's exp is past`.
    public var description: String {
        "\(name): \(explanation)"
    }

    /// The message of a 401: `Unauthorized: <class>`.
    public var responseMessage: String {
        "Unauthorized: \(name)"
    }

    /// The body of a 401: `{"error": "Unauthorized: <class>"}`.
    public var responseBody: JSONObject {
        ["error": .string(responseMessage)]
    }

    /// The 401 response for `failure`: ``responseBody`` as JSON, with a `WWW-Authenticate`
    /// challenge (RFC 6750).
    ///
    /// - Parameter failure: Why the request was refused.
    /// - Returns: The response to send.
    /// - Throws: An encoding error (not expected: the body is a fixed shape).
    public static func unauthorizedResponse(for failure: AuthenticationFailure) throws -> Response {
        let challenge = failure == .missingToken ? "Bearer" : "Bearer error=\"invalid_token\""
        return try JSONResponse.make(failure.responseBody, status: .unauthorized, headers: [.wwwAuthenticate: challenge])
    }

    private var explanation: String {
        switch code {
        case .missingToken: "the request carries no token"
        case .malformed: "the token is not a well-formed signed JWT with the required claims"
        case .unsupportedAlgorithm: "no configured key is for the token's algorithm"
        case .unknownKey: "the token's key id names no configured key, or names none where several fit"
        case .badSignature: "the token's signature does not verify"
        case .expired: "the token's exp is past"
        case .notYetValid: "the token's nbf is ahead"
        case .wrongIssuer: "the token's iss is not the required issuer"
        case .wrongAudience: "the token's aud does not name the required audience"
        case .missingSubject: "the token has no usable sub"
        }
    }

    /// Matches any error against an `AuthenticationFailure` class, so that `catch
    /// AuthenticationFailure.expired` works.
    public static func ~= (pattern: AuthenticationFailure, value: any Error) -> Bool { pattern.matches(value) }
}

extension AuthenticationFailure: HTTPResponseError {
    /// Always 401 Unauthorized.
    public var status: HTTPResponse.Status { .unauthorized }

    /// The 401 of ``unauthorizedResponse(for:)``.
    ///
    /// - Parameters:
    ///   - request: The refused request (unused).
    ///   - context: Its context (unused).
    /// - Returns: The 401 response.
    /// - Throws: An encoding error (not expected).
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try Self.unauthorizedResponse(for: self)
    }
}
