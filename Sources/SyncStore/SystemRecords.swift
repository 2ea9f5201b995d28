public import Foundation
public import SyncWire

/// One pending operation of the queue (`__operations`): a local insert, update or delete that
/// has not reached the server yet.
public struct TableOperationRecord: Sendable, Hashable {
    /// What the operation does to the item.
    public enum Kind: Int, Sendable, Hashable, CaseIterable, Codable {
        case insert = 0, update = 1, delete = 2
    }

    /// Where the operation is in its life.
    public enum State: Int, Sendable, Hashable, Codable {
        /// Queued, not sent yet (or sent and to be sent again).
        case pending = 0
        /// Sent, and the server may have applied it: no outcome was recorded (a crash, no answer),
        /// or the answer was a 408 or a 5xx (then an error row describes it).
        case attempted = 1
        /// The last attempt was refused (an error row describes why); the server did not apply it.
        case failed = 2
    }

    /// The queue sequence: operations are pushed in ascending order across all tables.
    public var id: Int64
    /// Insert, update or delete.
    public var kind: Kind
    /// The table of the item.
    public var table: String
    /// The item's id, spelled as it was first written.
    public var itemId: String
    /// The item for deletes (the row is gone locally; its version rides in `If-Match`).
    public var item: JSONObject?
    /// Bumped every time the operation changes (collapse, retype), so a push can tell that the
    /// operation it sent has been edited since.
    public var version: Int64
    /// Pending, attempted (it may have reached the server) or failed.
    public var state: State
    /// When the operation was queued.
    public var createdAt: Date

    /// A record.
    ///
    /// - Parameters:
    ///   - id: The queue sequence.
    ///   - kind: Insert, update or delete.
    ///   - table: The table of the item.
    ///   - itemId: The item's id.
    ///   - item: The item, for deletes.
    ///   - version: The operation's version.
    ///   - state: Its state.
    ///   - createdAt: When it was queued.
    public init(
        id: Int64, kind: Kind, table: String, itemId: String, item: JSONObject? = nil, version: Int64 = 1,
        state: State = .pending, createdAt: Date = Date()
    ) {
        self.id = id
        self.kind = kind
        self.table = table
        self.itemId = itemId
        self.item = item
        self.version = version
        self.state = state
        self.createdAt = createdAt
    }
}

/// A failed push of one operation (`__errors`), kept until resolved or until the next push.
public struct OperationErrorRecord: Sendable, Hashable {
    /// The error's id.
    public var id: String
    /// The operation that failed (``TableOperationRecord/id``).
    public var operationId: Int64
    /// The operation's version when it failed.
    public var operationVersion: Int64
    /// The kind of the operation that failed.
    public var kind: TableOperationRecord.Kind
    /// The table of the item.
    public var table: String
    /// The item's id.
    public var itemId: String
    /// The HTTP status, when the server answered.
    public var statusCode: Int?
    /// What went wrong, in one sentence.
    public var message: String
    /// The local item that was sent.
    public var item: JSONObject?
    /// The server's copy of the item (409 / 412).
    public var serverItem: JSONObject?
    /// The raw response body, when there was one.
    public var rawResponse: String?
    /// When the error was recorded.
    public var createdAt: Date
    /// The kind of conflict, as the sync engine names it (`changedOnServer`, …), or `nil`.
    public var conflict: String?

    /// A record.
    ///
    /// - Parameters:
    ///   - id: The error's id (a new UUID by default).
    ///   - operationId: The operation that failed.
    ///   - operationVersion: The operation's version when it failed.
    ///   - kind: The operation's kind.
    ///   - table: The table of the item.
    ///   - itemId: The item's id.
    ///   - statusCode: The HTTP status, when the server answered.
    ///   - message: What went wrong, in one sentence.
    ///   - item: The local item that was sent.
    ///   - serverItem: The server's copy of the item.
    ///   - rawResponse: The raw response body.
    ///   - createdAt: When the error was recorded.
    ///   - conflict: The kind of conflict, or `nil`.
    public init(
        id: String = UUID().uuidString.lowercased(), operationId: Int64, operationVersion: Int64,
        kind: TableOperationRecord.Kind, table: String, itemId: String, statusCode: Int?, message: String,
        item: JSONObject?, serverItem: JSONObject?, rawResponse: String?, createdAt: Date = Date(), conflict: String? = nil
    ) {
        self.id = id
        self.operationId = operationId
        self.operationVersion = operationVersion
        self.kind = kind
        self.table = table
        self.itemId = itemId
        self.statusCode = statusCode
        self.message = message
        self.item = item
        self.serverItem = serverItem
        self.rawResponse = rawResponse
        self.createdAt = createdAt
        self.conflict = conflict
    }
}
