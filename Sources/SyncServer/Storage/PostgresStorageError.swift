/// A failure of the PostgreSQL storage itself (the engine's own errors are PostgresNIO's).
///
/// A struct of kinds, so that kinds can be added later without breaking callers; compare with the
/// static members, which match on the kind (`error == .closed`, `catch
/// PostgresStorageError.noAnswer`).
public struct PostgresStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Code: String, Sendable, Hashable {
        case closed, noAnswer
    }

    let code: Code

    init(_ code: Code) {
        self.code = code
    }

    /// The storage was closed.
    public static let closed = PostgresStorageError(.closed)
    /// The database did not answer a health check in time.
    public static let noAnswer = PostgresStorageError(.noAnswer)

    /// What happened.
    public var description: String {
        switch code {
        case .closed: return "The storage is closed"
        case .noAnswer: return "The database did not answer in time"
        }
    }

    /// Errors are equal when they are the same kind of error.
    public static func == (lhs: PostgresStorageError, rhs: PostgresStorageError) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind of error.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Matches any error against a `PostgresStorageError` kind, so that `catch
    /// PostgresStorageError.closed` works.
    public static func ~= (pattern: PostgresStorageError, value: any Error) -> Bool {
        (value as? PostgresStorageError)?.code == pattern.code
    }
}
