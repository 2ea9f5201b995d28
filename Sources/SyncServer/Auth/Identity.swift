/// Who a request comes from: the subject of a verified token.
///
/// The server trusts an identity only when ``JWTVerifier`` made it from a token whose signature,
/// lifetime, issuer and audience it checked.
public struct Identity: Sendable, Hashable {
    /// The token's `sub` claim: non-empty, at most ``maximumSubjectLength`` Unicode scalars, no
    /// control characters.
    public let subject: String
    /// The token's `iss` claim, when it has one.
    public let issuer: String?

    /// The longest subject accepted, in Unicode scalars.
    public static let maximumSubjectLength = 255

    /// Creates an identity.
    ///
    /// - Parameters:
    ///   - subject: Who the identity is; ``isValidSubject(_:)`` should hold.
    ///   - issuer: Who vouched for it, when known.
    public init(subject: String, issuer: String? = nil) {
        self.subject = subject
        self.issuer = issuer
    }

    /// Whether `subject` can name a user: non-empty, at most ``maximumSubjectLength`` Unicode
    /// scalars, and no control characters (C0, DEL or C1), so it is safe in a column and a log line.
    ///
    /// - Parameter subject: The candidate, usually a token's `sub` claim.
    /// - Returns: `true` when the subject is acceptable.
    public static func isValidSubject(_ subject: String) -> Bool {
        let scalars = subject.unicodeScalars
        return !scalars.isEmpty && scalars.count <= maximumSubjectLength
            && !scalars.contains { $0.properties.generalCategory == .control }
    }
}
