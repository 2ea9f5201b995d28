/// A query that cannot be parsed or run: a syntax error, an unknown column or function, a value
/// out of range. The message is one line, safe to return to a client in a 400 body.
public struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in one line.
    public let message: String

    /// An error.
    ///
    /// - Parameter message: What is wrong, in one line, with no secret in it.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
