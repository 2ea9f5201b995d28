public import Foundation
public import SyncStore
public import SyncWire

/// A pending operation of the queue, as the app sees it: a local insert, update or delete that
/// has not reached the server yet.
public struct TableOperation: Sendable, Hashable, Identifiable {
    /// What an operation does to its item.
    public typealias Kind = TableOperationRecord.Kind
    /// Where an operation is in its life (pending, sent, failed).
    public typealias State = TableOperationRecord.State

    /// The queue sequence: operations are pushed in ascending order, across all tables.
    public let id: Int64
    /// Insert, update or delete.
    public let kind: Kind
    /// The table of the item.
    public let table: String
    /// The id of the item.
    public let itemId: String
    /// The item kept with a delete (the row is gone locally); `nil` for inserts and updates,
    /// whose item is read from the local table when pushed.
    public let item: JSONObject?
    /// Pending, attempted (sent, and the server may have applied it: no outcome recorded, or a
    /// 408 or 5xx) or failed (refused).
    public let state: State
    /// Bumped on every change of the operation (collapse, resolution).
    public let version: Int64
    /// When the operation was first queued.
    public let createdAt: Date

    init(_ record: TableOperationRecord) {
        id = record.id
        kind = record.kind
        table = record.table
        itemId = record.itemId
        item = record.item
        state = record.state
        version = record.version
        createdAt = record.createdAt
    }
}
