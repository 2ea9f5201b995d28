/// What can go wrong in the todo app, each a one-line message.
public enum TodoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No item has an id starting with this prefix.
    case unknownID(String)
    /// Several items have an id starting with this prefix.
    case ambiguousID(String, matches: Int)
    /// The server cannot be reached; this many changes stay queued.
    case offline(pending: Int)
    /// The push left this many conflicts to resolve.
    case conflicts(Int)
    /// The server refused the request's sign-in (HTTP 401).
    case unauthorized
    /// The server answered with an error.
    case server(String)
    /// Nothing to change was given.
    case nothingToChange
    /// The item has no attachment with this name.
    case unknownAttachment(String)
    /// The item has several attachments with this name.
    case ambiguousAttachment(String, matches: Int)

    /// A sentence for the terminal; it never holds a secret.
    public var description: String {
        switch self {
        case .unknownID(let prefix): return "No todo item has an id starting with '\(prefix)'."
        case .ambiguousID(let prefix, let n): return "'\(prefix)' matches \(n) items; give more of the id."
        case .offline(let pending): return "offline, \(pending) change\(pending == 1 ? "" : "s") queued"
        case .conflicts(let n):
            return "\(n) change\(n == 1 ? "" : "s") conflict with the server; resolve with `todo conflicts`."
        case .unauthorized: return "The server refused the sign-in (HTTP 401): check --auth-token-file; nothing was lost."
        case .server(let message): return "The server failed: \(message)"
        case .nothingToChange: return "Nothing to change: give --text and/or --complete."
        case .unknownAttachment(let name): return "The item has no attachment named '\(name)'."
        case .ambiguousAttachment(let name, let n): return "The item has \(n) attachments named '\(name)'."
        }
    }
}
