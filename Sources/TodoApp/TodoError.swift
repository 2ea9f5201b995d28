public import SyncKeys

/// What can go wrong in the todo app, each a one-line message.
///
/// A struct around a private code, so that kinds can be added later without breaking callers.
/// Compare with the static members, which match on the kind only (`catch TodoError.offline`,
/// `error == .conflicts`); the prefix, the server's message and the counts of an occurrence are in
/// ``reason`` and ``count``.
public struct TodoError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        case unknownID, ambiguousID, offline, conflicts, unauthorized, server, nothingToChange
        case unknownAttachment, ambiguousAttachment
        case resolutionWouldRepeat, itemIDCaseClash
    }

    package let code: Code
    /// The id prefix given (``unknownID``, ``ambiguousID``), the server's failure (``server``), the
    /// item and the resolution (``resolutionWouldRepeat``) or the clashing ids (``itemIDCaseClash``).
    public let reason: String?
    /// How many: the items an id prefix matches (``ambiguousID``), the changes queued
    /// (``offline``), the conflicts left (``conflicts``).
    public let count: Int?

    init(_ code: Code, reason: String? = nil, count: Int? = nil) {
        self.code = code
        self.reason = reason
        self.count = count
    }

    /// A sentence for the terminal; it never holds a secret.
    public var description: String {
        let prefix = reason ?? ""
        let n = count ?? 0
        switch code {
        case .unknownID: return "No todo item has an id starting with '\(prefix)'."
        case .ambiguousID: return "'\(prefix)' matches \(n) items; give more of the id."
        case .offline: return "offline, \(n) change\(n == 1 ? "" : "s") queued"
        case .conflicts: return "\(n) change\(n == 1 ? "" : "s") conflict with the server; resolve with `todo conflicts`."
        case .unauthorized: return "The server refused the sign-in (HTTP 401): check --auth-token-file; nothing was lost."
        case .server: return "The server failed: \(reason ?? "no detail")"
        case .nothingToChange: return "Nothing to change: give --text and/or --complete."
        case .unknownAttachment: return "The item has no attachment named '\(prefix)'."
        case .ambiguousAttachment: return "The item has \(n) attachments named '\(prefix)'."
        case .resolutionWouldRepeat:
            return "\(prefix) would send the server the change it refused, unchanged, and it would refuse it again; "
                + "nothing was changed. Resolve it with `todo conflicts --resolve cancel` (drops your change; "
                + "`server` or `accept` take the server's side)."
        case .itemIDCaseClash:
            return "The server has items whose ids differ only in letter case (\(prefix)). todo keeps one item per id "
                + "whatever its case, so it left the server's one alone (not merged, not changed) and pulled the rest. "
                + "Rename or delete one of them on the server, then pull again."
        }
    }
}

extension TodoError: Equatable, Hashable, KindedError {
    /// Matches any error against a `TodoError` kind, so that `catch TodoError.offline` works.
    public static func ~= (pattern: TodoError, value: any Error) -> Bool { pattern.matches(value) }
}

extension TodoError {
    /// No item has an id starting with the prefix given (the kind).
    public static let unknownID = TodoError(.unknownID)
    /// Several items have an id starting with the prefix given (the kind).
    public static let ambiguousID = TodoError(.ambiguousID)
    /// The server cannot be reached; changes stay queued (the kind).
    public static let offline = TodoError(.offline)
    /// The push left conflicts to resolve (the kind).
    public static let conflicts = TodoError(.conflicts)
    /// The server refused the request's sign-in (HTTP 401).
    public static let unauthorized = TodoError(.unauthorized)
    /// The server answered with an error (the kind).
    public static let server = TodoError(.server)
    /// Nothing to change was given.
    public static let nothingToChange = TodoError(.nothingToChange)
    /// The item has no attachment with the name given (the kind).
    public static let unknownAttachment = TodoError(.unknownAttachment)
    /// The item has several attachments with the name given (the kind).
    public static let ambiguousAttachment = TodoError(.ambiguousAttachment)
    /// A conflict's resolution would repeat the request the server refused (the kind).
    public static let resolutionWouldRepeat = TodoError(.resolutionWouldRepeat)
    /// A pull met server items whose ids differ only in ASCII case (the kind).
    public static let itemIDCaseClash = TodoError(.itemIDCaseClash)

    /// No item has an id starting with this prefix.
    ///
    /// - Parameter prefix: The prefix given.
    public static func unknownID(_ prefix: String) -> TodoError { TodoError(.unknownID, reason: prefix) }
    /// Several items have an id starting with this prefix.
    ///
    /// - Parameters:
    ///   - prefix: The prefix given.
    ///   - matches: How many items it matches.
    public static func ambiguousID(_ prefix: String, matches: Int) -> TodoError {
        TodoError(.ambiguousID, reason: prefix, count: matches)
    }
    /// The server cannot be reached; this many changes stay queued.
    ///
    /// - Parameter pending: The changes queued.
    public static func offline(pending: Int) -> TodoError { TodoError(.offline, count: pending) }
    /// The push left this many conflicts to resolve.
    ///
    /// - Parameter count: The conflicts.
    public static func conflicts(_ count: Int) -> TodoError { TodoError(.conflicts, count: count) }
    /// The server answered with an error.
    ///
    /// - Parameter message: What the server said (its status and message).
    public static func server(_ message: String) -> TodoError { TodoError(.server, reason: message) }
    /// The resolution of a conflict would send the request the server refused, unchanged.
    ///
    /// - Parameters:
    ///   - itemId: The item of the conflict.
    ///   - resolution: The resolution asked for (`client`, `restore`).
    public static func resolutionWouldRepeat(itemId: String, resolution: String) -> TodoError {
        TodoError(.resolutionWouldRepeat, reason: "Resolving \(itemId) with '\(resolution)'")
    }
    /// A pull met server items whose ids differ only in ASCII case; it kept one of each pair.
    ///
    /// - Parameter clashes: The pairs: the id this device holds and the server's other one (a pair
    ///   given twice is named once).
    public static func itemIDCaseClash(_ clashes: [(local: String, server: String)]) -> TodoError {
        // A pull can meet a pair more than once (a page read again): each pair is named once.
        var seen: Set<String> = []
        let clashes = clashes.filter { seen.insert("\($0.local)\u{0}\($0.server)").inserted }
        let named = clashes.prefix(3).map { "'\($0.local)' here, '\($0.server)' on the server" }
        let more = clashes.count > 3 ? " and \(clashes.count - 3) more" : ""
        return TodoError(.itemIDCaseClash, reason: named.joined(separator: "; ") + more, count: clashes.count)
    }
    /// The item has no attachment with this name.
    ///
    /// - Parameter name: The attachment name given.
    public static func unknownAttachment(_ name: String) -> TodoError { TodoError(.unknownAttachment, reason: name) }
    /// The item has several attachments with this name.
    ///
    /// - Parameters:
    ///   - name: The attachment name given.
    ///   - matches: How many attachments have it.
    public static func ambiguousAttachment(_ name: String, matches: Int) -> TodoError {
        TodoError(.ambiguousAttachment, reason: name, count: matches)
    }
}
