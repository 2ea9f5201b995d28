/// A query that cannot be parsed or run: a syntax error, an unknown column or function, a value
/// out of range. The message is one line, safe to return to a client in a 400 body.
public struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
