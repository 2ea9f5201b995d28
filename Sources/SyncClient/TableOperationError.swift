public import Foundation
public import SyncStore
public import SyncWire

/// A pushed operation that failed, kept in the store's errors table until it is resolved or the
/// operation is pushed again.
///
/// It carries what was sent, what the server answered (its item, for 409/412), and the ways to
/// resolve it. Each resolution checks that the operation has not changed since the error was
/// recorded, and throws ``SyncError/operationChanged`` (or ``SyncError/operationNotFound``) if
/// it has.
public struct TableOperationError: Error, Sendable, Identifiable, CustomStringConvertible {
    /// The error's id in the errors table.
    public let id: String
    /// The failed operation's queue id.
    public let operationId: Int64
    /// The operation's version when it failed.
    public let operationVersion: Int64
    /// The operation's kind.
    public let kind: TableOperation.Kind
    /// The item's table.
    public let table: String
    /// The item's id.
    public let itemId: String
    /// The HTTP status, when the server answered.
    public let statusCode: Int?
    /// What went wrong, in one sentence (no item values).
    public let message: String
    /// The local item that was sent.
    public let item: JSONObject?
    /// The server's copy of the item (409, 412, or a deleted copy), when there is one.
    public let serverItem: JSONObject?
    /// The kind of conflict, or `nil` when the server refused the operation for another reason
    /// (or did not answer it).
    public let conflict: Conflict?
    /// The raw response body, when there was one.
    public let rawResponse: String?
    /// When the error was recorded.
    public let createdAt: Date
    let context: SyncContext

    init(_ record: OperationErrorRecord, context: SyncContext) {
        id = record.id
        operationId = record.operationId
        operationVersion = record.operationVersion
        kind = record.kind
        table = record.table
        itemId = record.itemId
        statusCode = record.statusCode
        message = record.message
        item = record.item
        serverItem = record.serverItem
        conflict = Self.conflict(of: record)
        rawResponse = record.rawResponse
        createdAt = record.createdAt
        self.context = context
    }

    /// Whether the server refused the write because its copy of the item differs (any
    /// ``Conflict``).
    public var isConflict: Bool { conflict != nil }

    /// Whether the server has the item deleted (``Conflict/deletedOnServer``): restore it with
    /// ``restoreAndUpdate()`` or accept the delete with ``acceptDelete()``.
    public var isDeletedOnServer: Bool { conflict == .deletedOnServer }

    /// The kind of conflict of a stored error; errors stored before kinds were recorded are a
    /// change on the server when they are a 409 or 412.
    private static func conflict(of record: OperationErrorRecord) -> Conflict? {
        if let stored = record.conflict { return Conflict(rawValue: stored) }
        guard record.statusCode == 409 || record.statusCode == 412 else { return nil }
        return record.serverItem.map(PushAnswer.isDeleted) == true ? .deletedOnServer : .changedOnServer
    }

    /// The kind, table, status and message; never item values.
    public var description: String {
        "TableOperationError(\(kind) on '\(table)'\(statusCode.map { ", HTTP \($0)" } ?? ""): \(message))"
    }

    /// Drops the operation (and its errors) and stores `item` as the local row: "take this
    /// version and forget my change". Typically called with ``serverItem``.
    /// - Throws: ``SyncError/invalidItem`` when `item`'s id is not this error's item id (nothing
    ///   changes), ``SyncError/operationNotFound``, ``SyncError/operationChanged``,
    ///   ``SyncError/localStoreFailed``.
    public func cancelAndUpdate(_ item: JSONObject) async throws {
        try await context.resolve(self, .cancelAndUpdate(item))
    }

    /// Drops the operation (and its errors) and deletes the local row.
    /// - Throws: ``SyncError/operationNotFound``, ``SyncError/operationChanged``,
    ///   ``SyncError/localStoreFailed``.
    public func cancelAndDiscard() async throws {
        try await context.resolve(self, .cancelAndDiscard)
    }

    /// Keeps the operation queued for the next push, with `item` as its new content: stored as
    /// the local row for an insert or update, kept in the operation for a delete. To win a
    /// conflict, pass your values with the server's `version`.
    /// - Throws: ``SyncError/invalidItem`` when `item`'s id is not this error's item id,
    ///   ``SyncError/resolutionWouldRepeat`` when this is a conflict and the operation would send
    ///   the refused request unchanged (the same kind, values and version),
    ///   ``SyncError/operationNotFound``, ``SyncError/operationChanged``,
    ///   ``SyncError/localStoreFailed``.
    public func keepAndUpdate(_ item: JSONObject) async throws {
        try await context.resolve(self, .keep(kind: kind, item: item))
    }

    /// Keeps the operation queued with another kind (for example an insert that met a 409 becomes
    /// an update), optionally with new content. A delete removes the local row; an insert or
    /// update without `item` keeps the current row.
    /// - Throws: as ``keepAndUpdate(_:)``.
    public func changeOperationType(to kind: TableOperation.Kind, item: JSONObject? = nil) async throws {
        try await context.resolve(self, .keep(kind: kind, item: item))
    }
}
