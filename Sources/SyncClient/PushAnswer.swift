import Foundation
import SyncWire

/// How a push reads the server's answer to one operation beyond its status (docs/protocol.md §1.4.2):
/// the server's copy of the item behind a refusal, an item deleted on the server, and whether a
/// copy is what the client sent (an operation that already reached the server).
enum PushAnswer {
    /// What the server holds for an item, as a refused write shows it.
    struct ServerCopy: Sendable {
        enum State: Sendable {
            /// The server has the item (``item``), not deleted.
            case present
            /// The server has the item soft-deleted (``item`` when it sent it).
            case deleted
            /// The server does not have the item.
            case missing
            /// The server did not say (its copy could not be read).
            case unknown
        }

        var item: JSONObject?
        var state: State

        /// A copy the server sent: deleted or not, by its `deleted` flag.
        init(item: JSONObject) {
            self.item = item
            self.state = PushAnswer.isDeleted(item) ? .deleted : .present
        }

        init(state: State) {
            self.item = nil
            self.state = state
        }
    }

    /// Whether an answer leaves open whether the server applied the request: a 408 or a 5xx
    /// (a gateway may time out after the backend wrote; a backend may fail after it wrote).
    static func leavesOutcomeOpen(_ statusCode: Int) -> Bool {
        statusCode == 408 || (500..<600).contains(statusCode)
    }

    /// Whether an item carries the protocol's soft-delete flag set.
    static func isDeleted(_ item: JSONObject) -> Bool {
        item[SystemProperty.deleted]?.boolValue == true
    }

    /// The error for a refused write, given what the server holds; the status is the answer's.
    static func refusal(statusCode: Int, copy: ServerCopy) -> SyncError {
        switch copy.state {
        case .deleted:
            return SyncError(
                .deletedOnServer, reason: "The server has the item deleted.", statusCode: statusCode, serverItem: copy.item)
        case .missing:
            return SyncError(.missingOnServer, reason: "The server does not have the item.", statusCode: statusCode)
        case .present, .unknown:
            switch statusCode {
            case 412:
                return SyncError(
                    .preconditionFailed, reason: "The server's version did not match the passed version.", statusCode: 412,
                    serverItem: copy.item)
            case 409:
                return SyncError(.conflict, reason: "The server has a conflicting item.", statusCode: 409, serverItem: copy.item)
            default:
                return SyncError(.requestFailed, reason: "The server answered an error status.", statusCode: statusCode)
            }
        }
    }

    // MARK: the server's copy of what was sent

    /// Whether the server's copy holds the user values that were sent: the rule that settles an
    /// operation which may already have reached the server (the SyncClient article "The offline flow, with conflicts").
    ///
    /// - The system properties (`createdAt`, `updatedAt`, `version`, `deleted`, any case) are
    ///   not compared; the ids match whatever their ASCII case.
    /// - Property names match whatever their ASCII case (a server's column keeps its spelling).
    /// - A property that one side lacks counts as `null`: a column the server has and the client
    ///   never sent (another device added it) is no difference while it is `null`.
    /// - Values compare as JSON: numbers by value (`1` is `1.0`), strings exactly, Booleans are
    ///   not numbers, arrays in order, objects by member.
    /// - Parameters:
    ///   - sent: the body that was sent (the item without system properties).
    ///   - server: the server's copy.
    static func holds(_ sent: JSONObject, in server: JSONObject) -> Bool {
        if let mine = sent[SystemProperty.id]?.stringValue, let theirs = server[SystemProperty.id]?.stringValue,
            ItemID.key(mine) != ItemID.key(theirs)
        {
            return false
        }
        let mine = userValues(sent), theirs = userValues(server)
        for name in Set(mine.keys).union(theirs.keys) where !same(mine[name] ?? .null, theirs[name] ?? .null) {
            return false
        }
        return true
    }

    /// An item's user values by folded name (system properties and the id left out).
    private static func userValues(_ item: JSONObject) -> [String: JSONValue] {
        let skipped = Set(([SystemProperty.id] + SystemProperty.all).map(ASCIICase.fold))
        var values: [String: JSONValue] = [:]
        for (name, value) in item {
            let key = ASCIICase.fold(name)
            if !skipped.contains(key) { values[key] = value }
        }
        return values
    }

    /// JSON equality with numbers compared by value.
    static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .double(let y)), (.double(let y), .int(let x)):
            return y.rounded(.towardZero) == y && abs(y) < 9.2e18 && Int64(y) == x
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy(same)
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { name, value in y[name].map { same(value, $0) } ?? false }
        default:
            return a == b
        }
    }
}
