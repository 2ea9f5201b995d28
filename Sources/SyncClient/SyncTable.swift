import SyncStore
public import SyncWire

/// An offline table: reads and writes go to the local store, and every write is queued for the
/// next push. Pulls bring server changes in; purges drop local rows.
///
/// A small value (a name plus its ``SyncContext``); safe to share. Get one from
/// ``SyncContext/syncTable(_:)``.
public struct SyncTable: Sendable {
    /// The table name.
    public let name: String
    /// The context that owns the queue.
    public let context: SyncContext

    init(name: String, context: SyncContext) {
        self.name = name
        self.context = context
    }

    /// Inserts an item locally and queues an insert. An item without `id` gets a new GUID id.
    /// - Returns: the stored item, with its id.
    /// - Throws: ``SyncError/invalidItemID`` (a non-string or invalid id),
    ///   ``SyncError/itemAlreadyExists`` (the id exists locally), ``SyncError/operationNotAllowed``
    ///   (an operation for the id is pending), ``SyncError/localStoreFailed``. Nothing changes.
    @discardableResult
    public func insert(_ item: JSONObject) async throws -> JSONObject {
        try await context.insert(item, table: name)
    }

    /// Updates an item locally and queues an update, or folds into the item's pending insert or
    /// update. The update goes over the stored row's version (`If-Match`): system properties that
    /// are `null` in `item` keep their stored values, and a non-null `version` in `item` is taken.
    /// - Throws: ``SyncError/invalidItemID`` (missing or invalid id),
    ///   ``SyncError/itemNotFound`` (the local table does not have the id and `item` has no
    ///   `version`), ``SyncError/operationNotAllowed`` (a delete is pending),
    ///   ``SyncError/localStoreFailed``. Nothing changes when it throws.
    public func update(_ item: JSONObject) async throws {
        try await context.update(item, table: name)
    }

    /// Deletes an item locally and queues a delete that carries the stored row overlaid with
    /// `item`'s values (`null` system properties left out; its version rides in `If-Match`). A pending insert that cannot be on the server (never sent, or clearly
    /// refused) is cancelled instead, and nothing is sent. The item's attachments are deleted
    /// locally in the same transaction (the server deletes them with the item).
    /// - Throws: ``SyncError/invalidItemID``, ``SyncError/itemNotFound`` (the local table does
    ///   not have the id and `item` has no `version`), ``SyncError/operationNotAllowed`` (a delete
    ///   is already pending, or the item's insert may already be on the server — it was sent and got
    ///   no answer, a 408 or a 5xx: push first, or discard the insert), ``SyncError/localStoreFailed``.
    public func delete(_ item: JSONObject) async throws {
        try await context.deleteWithAttachments(item, table: name)
    }

    /// Deletes the item with `id`; see ``delete(_:)``.
    public func delete(id: String) async throws {
        try await context.deleteWithAttachments([SystemProperty.id: .string(id)], table: name)
    }

    /// The local item with `id`, or `nil`.
    /// - Throws: ``SyncError/localStoreFailed``.
    public func lookup(id: String) async throws -> JSONObject? {
        try await context.read { try $0.lookup(table: name, id: id) }
    }

    /// Runs a query on the local table (a table never written reads as empty).
    /// - Throws: ``SyncError/invalidQuery`` (unknown column, unsupported expression),
    ///   ``SyncError/localStoreFailed``.
    public func read(_ query: Query = Query()) async throws -> QueryResult {
        let description = query.description(table: name)
        return try await context.read { try $0.read(description) }
    }

    /// Pulls the server's items into the local table, page by page (one transaction per page).
    ///
    /// Pending operations of the table are pushed first, then the content of the attachments
    /// whose rows that push sent (as ``SyncContext/push()`` does; an upload the server refuses
    /// for good is parked in the attachment queue, and the pull goes on); if that push reports
    /// any error, the pull stops before sending anything. Items with `deleted: true` are deleted
    /// locally, items with a pending local operation are skipped (the local edit wins until
    /// pushed), items without an id are ignored, and local rows the server did not return stay.
    /// A pull of an attachments table (``attachmentsTable``) removes the content of attachments
    /// whose row is gone, and, under an eager ``AttachmentDownloadPolicy``, queues a download of
    /// each attachment whose content is not here.
    ///
    /// With a `queryId`, the pull is incremental: it asks only for items updated since the
    /// query's delta token (`updatedAt ge …`, ordered by `updatedAt`) and saves the token after
    /// every page that advances it, so the next pull continues from there.
    ///
    /// - Parameters:
    ///   - query: the filter (and, without a query id, order, top and skip) of the items wanted;
    ///     `top` is the total number of items wanted.
    ///   - queryId: names an incremental pull (1–255 characters, no `|`); `nil` pulls everything.
    ///   - pageSize: items asked for per request (default 1,000; non-positive values mean
    ///     1,000). A server that caps its pages lower is paged with `$skip` or its `Link`.
    /// - Returns: the number of items written or deleted locally: each item of each page once,
    ///   except that an item an incremental pull reads again because it has the delta token's
    ///   own timestamp is not counted again. Rows without a valid id, and rows skipped for a
    ///   pending operation, are not counted; an item that changed on the server during the pull,
    ///   and is read again with a later `updatedAt`, counts each time. (Only the ids at the
    ///   current token are remembered: the pull's memory does not grow with its size.)
    /// - Throws: ``SyncError/invalidQueryID``, ``SyncError/invalidPullQuery`` (before any request);
    ///   the implicit push's error; ``SyncError/transportFailed``,
    ///   ``SyncError/authenticationRequired``, ``SyncError/requestFailed`` (e.g. 404 for a table
    ///   the server does not have), ``SyncError/malformedServerResponse``,
    ///   ``SyncError/pullCancelled``, ``SyncError/localStoreFailed``.
    @discardableResult
    public func pull(_ query: Query = Query(), queryId: String? = nil, pageSize: Int = 1000) async throws -> Int {
        try await context.pull(table: name, query: query, queryId: queryId, pageSize: pageSize)
    }

    /// Deletes local rows: all of them, or those `query`'s filter matches.
    ///
    /// The content of attachments whose item or metadata row is purged is removed too.
    ///
    /// Refused while the table has pending operations, unless `force`: a force purge also drops
    /// the table's pending operations, their errors and every delta token of the table (a
    /// filtered force purge is refused while operations are pending). With a `queryId`, that
    /// query's delta token is reset so the next pull with it starts over.
    /// - Throws: ``SyncError/purgeBlockedByPendingOperations``, ``SyncError/invalidPurgeQuery``,
    ///   ``SyncError/invalidQueryID``, ``SyncError/invalidQuery``, ``SyncError/localStoreFailed``,
    ///   ``SyncError/purgeCancelled`` (the task was cancelled while a push or pull ran).
    ///   Nothing changes when it throws.
    public func purge(_ query: Query? = nil, queryId: String? = nil, force: Bool = false) async throws {
        try await context.purge(table: name, query: query, queryId: queryId, force: force)
        try await context.reconcileAttachments(of: TableName.attachmentOwner(of: name) ?? name)
    }
}

extension SyncContext {
    func insert(_ item: JSONObject, table: String) async throws -> JSONObject {
        var item = item
        let id = try ItemValidation.id(of: item, generateIfMissing: true)
        item[SystemProperty.id] = .string(id)
        let row = item
        return try await write { try PendingOperationQueue.insert(row, id: id, table: table, in: $0) }
    }

    func update(_ item: JSONObject, table: String) async throws {
        let id = try ItemValidation.id(of: item, generateIfMissing: false)
        try await write { try PendingOperationQueue.update(item, id: id, table: table, in: $0) }
    }

    func delete(_ item: JSONObject, table: String) async throws {
        let id = try ItemValidation.id(of: item, generateIfMissing: false)
        try await write { try PendingOperationQueue.delete(item, id: id, table: table, in: $0) }
    }
}

/// Checks of item ids before anything is written (docs/protocol.md §2.6).
enum ItemValidation {
    /// The item's string id; a new one when it has none and `generateIfMissing`.
    static func id(of item: JSONObject, generateIfMissing: Bool) throws -> String {
        switch item[SystemProperty.id] {
        case nil, .null?:
            guard generateIfMissing else { throw SyncError(.invalidItemID, reason: "The item has no id.") }
            return ItemID.generate()
        case .string(let id)?:
            guard ItemID.isValid(id) else {
                throw SyncError(.invalidItemID, reason: "An id has 1–255 characters, none of them control characters or \" + ? \\ / `.")
            }
            return id
        default:
            throw SyncError(.invalidItemID, reason: "Offline tables need string ids.")
        }
    }
}
