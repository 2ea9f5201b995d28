/// A database URL or setting the server cannot use.
///
/// A struct of kinds, so that kinds can be added later without breaking callers; compare with the
/// static members, which match on the kind (`error == .passwordInURL`, `catch
/// PostgresSettingsError.invalidPoolSize`). The ``description`` says what is wrong and what the
/// server expects; it never holds a password.
public struct PostgresSettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Code: String, Sendable, Hashable {
        case notPostgresURL, passwordInURL, missingUserOrHost, invalidPoolSize, unsupportedQuery
    }

    let code: Code

    init(_ code: Code) {
        self.code = code
    }

    /// The URL is not a `postgres://` or `postgresql://` URL.
    public static let notPostgresURL = PostgresSettingsError(.notPostgresURL)
    /// The URL holds a password, which belongs in a file or `PGPASSWORD`.
    public static let passwordInURL = PostgresSettingsError(.passwordInURL)
    /// The URL names no user or no host.
    public static let missingUserOrHost = PostgresSettingsError(.missingUserOrHost)
    /// The pool size is below 1.
    public static let invalidPoolSize = PostgresSettingsError(.invalidPoolSize)
    /// The URL's query is other than `sslmode=disable|require|verify-full`.
    public static let unsupportedQuery = PostgresSettingsError(.unsupportedQuery)

    /// What is wrong, and what the server expects.
    public var description: String {
        switch code {
        case .notPostgresURL: return "The database URL must be \(PostgresSettings.urlForm)"
        case .passwordInURL:
            return "The database URL must not contain a password: give it with --database-password-file or the PGPASSWORD environment variable"
        case .missingUserOrHost: return "The database URL must name a user and a host: \(PostgresSettings.urlForm)"
        case .invalidPoolSize: return "The database pool size must be at least 1"
        case .unsupportedQuery: return "The database URL accepts only sslmode=disable, require or verify-full as its query"
        }
    }

    /// Errors are equal when they are the same kind of error.
    public static func == (lhs: PostgresSettingsError, rhs: PostgresSettingsError) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind of error.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Matches any error against a `PostgresSettingsError` kind, so that `catch
    /// PostgresSettingsError.passwordInURL` works.
    public static func ~= (pattern: PostgresSettingsError, value: any Error) -> Bool {
        (value as? PostgresSettingsError)?.code == pattern.code
    }
}
