import Foundation
import HTTPTypes
import SyncSQL
import SyncWire

/// The tables protocol over a ``TableStorage``: request checks, versions and preconditions,
/// soft delete, conflicts. No HTTP here; the controller maps requests to these calls, and the
/// storage stamps every write (see ``TableStorage``).
///
/// Every item body it returns or throws (in a 409 or 412) is rendered through the request's
/// ``ColumnView``, and every query is checked against it: a per-user table shows each owner only
/// the columns that owner wrote (``OwnerColumns``).
struct TableService: Sendable {
    let storage: any TableStorage
    let softDelete: Bool
    /// The largest attachment accepted, in bytes (a metadata row's `size`).
    var maxAttachmentBytes: Int64 = ServerConfiguration.defaultMaxAttachmentBytes

    /// The record of each owner's columns.
    var owners: OwnerColumns { OwnerColumns(storage: storage) }

    /// The page of items a list request returns, written, and the total count when the query
    /// asks for it.
    func list(_ query: QueryDescription, scope: RowScope, includeDeleted: Bool) async throws -> (page: ItemPage, totalCount: Int?) {
        let hideDeleted = notDeleted(includeDeleted)
        let view = try await owners.view(of: query.table, scope: scope)
        // Checked before the table is looked for: an unknown column is refused alike whether or
        // not other users made the per-user table.
        try view.check(query, extraFilter: hideDeleted)
        guard try await storage.schema(of: query.table) != nil else {
            // Whether a per-user table exists says something about other users: it lists empty.
            guard scope.owner == nil else { return (try ItemPage(items: []), query.includeTotalCount ? 0 : nil) }
            throw TableError.notFound("The table '\(query.table)' does not exist")
        }
        let page: ItemPage
        if view.isRestricted {
            page = try ItemPage(items: try await storage.select(query, scope: scope, extraFilter: hideDeleted).map(view.render))
        } else {
            page = try await storage.selectPage(query, scope: scope, extraFilter: hideDeleted)
        }
        let count = query.includeTotalCount ? try await storage.count(query, scope: scope, extraFilter: hideDeleted) : nil
        return (page, count)
    }

    func read(table: String, id: String, scope: RowScope, includeDeleted: Bool) async throws -> JSONObject {
        let view = try await owners.view(of: table, scope: scope)
        return view.render(try await stored(table: table, id: id, scope: scope, includeDeleted: includeDeleted))
    }

    /// The stored row `id` of the scope, as the storage returns it; 404 when missing (or deleted).
    private func stored(table: String, id: String, scope: RowScope, includeDeleted: Bool) async throws -> JSONObject {
        guard let row = try await storage.row(table: table, id: id, scope: scope), includeDeleted || !isDeleted(row) else {
            throw TableError.notFound()
        }
        return row
    }

    func insert(table: String, scope: RowScope, item: JSONObject) async throws -> JSONObject {
        let view = try await owners.view(of: table, scope: scope)
        let stored = try await rendering(view) {
            guard TableName.attachmentOwner(of: table) != nil else { return try await insert(table: table, scope: scope, item: item, view: view) }
            // The item is checked and the attachment row written in one transaction, the item's
            // row locked meanwhile: a delete of the item comes before or after both.
            return try await inTransaction({ try await storage.inTransaction($0) }) {
                try await insert(table: table, scope: scope, item: item, view: view)
            }
        }
        return try await owners.record(item, table: table, scope: scope, view: view).render(stored)
    }

    private func insert(table: String, scope: RowScope, item: JSONObject, view: ColumnView) async throws -> JSONObject {
        try ItemValues.checkReserved(item)
        try await checkAttachmentInsert(table: table, scope: scope, item: item)
        var row = item
        switch item[SystemProperty.id] {
        case nil, .null?: row[SystemProperty.id] = .string(ItemID.generate())
        case .string(let id)? where ItemID.isValid(id): break
        default: throw TableError.badRequest("The item's id must be a string of 1 to 255 characters without control characters or \" + ? \\ / `")
        }
        row.removeValue(forKey: SystemProperty.version)
        let existing = try await storage.schema(of: table)
        let columns = try ItemValues.columns(of: item, against: existing)
        // Checked before a column is added, and again after (a column another request just made).
        if let existing { try ItemValues.checkTypes(row, against: existing, naming: view) }
        if let existing, existing.missingColumns(columns).isEmpty {
            // Every column is there: no schema change, so no second call to the storage.
            try existing.check(scope)
        } else {
            try ItemValues.checkTypes(row, against: try await storage.ensureColumns(table, scope: scope, columns), naming: view)
        }
        switch try await storage.insert(table: table, scope: scope, item: row) {
        case .written(let stored): return stored
        case .conflict(let existing):
            throw TableError(.conflict, "An item with id '\(existing[SystemProperty.id]?.stringValue ?? "")' already exists", item: existing)
        case .missing: throw TableError.notFound()
        }
    }

    func update(table: String, id: String, scope: RowScope, changes: JSONObject, ifMatch: String?) async throws -> JSONObject {
        let view = try await owners.view(of: table, scope: scope)
        let stored = try await rendering(view) {
            try await update(table: table, id: id, scope: scope, changes: changes, ifMatch: ifMatch, view: view)
        }
        return try await owners.record(changes, table: table, scope: scope, view: view).render(stored)
    }

    private func update(
        table: String, id: String, scope: RowScope, changes: JSONObject, ifMatch: String?, view: ColumnView
    ) async throws -> JSONObject {
        try ItemValues.checkReserved(changes)
        if let bodyID = changes[SystemProperty.id] {
            guard case .string(let text) = bodyID, ItemID.sameItem(text, id) else {
                throw TableError.badRequest("The item's id does not match the id in the request URL")
            }
        }
        try await checkAttachmentUpdate(table: table, id: id, scope: scope, changes: changes)
        let bodyVersion = ifMatch == nil ? changes[SystemProperty.version]?.stringValue : nil
        let version = try await expectedVersion(table: table, id: id, scope: scope, ifMatch: ifMatch) ?? bodyVersion
        guard let schema = try await storage.schema(of: table) else { throw TableError.notFound() }
        var values = changes
        values.removeValue(forKey: SystemProperty.id)
        values.removeValue(forKey: SystemProperty.version)
        try ItemValues.checkTypes(values, against: schema, naming: view)
        let columns = try ItemValues.columns(of: changes, against: schema)
        if !schema.missingColumns(columns).isEmpty {
            // A column is added only for a row that is there to take it.
            _ = try await stored(table: table, id: id, scope: scope, includeDeleted: false)
            try ItemValues.checkTypes(values, against: try await storage.ensureColumns(table, scope: scope, columns), naming: view)
        }
        let result = try await storage.update(
            table: table, id: id, scope: scope, values: values, condition: WriteCondition(version: version, deleted: false))
        return try written(result, ifMatch: ifMatch)
    }

    func delete(table: String, id: String, scope: RowScope, ifMatch: String?) async throws -> JSONObject {
        let view = try await owners.view(of: table, scope: scope)
        return view.render(
            try await rendering(view) {
                try await deletingAttachments(table: table, id: id, scope: scope) {
                    try await deleteRow(table: table, id: id, scope: scope, ifMatch: ifMatch)
                }
            })
    }

    private func deleteRow(table: String, id: String, scope: RowScope, ifMatch: String?) async throws -> JSONObject {
        let version = try await expectedVersion(table: table, id: id, scope: scope, ifMatch: ifMatch)
        let condition = WriteCondition(version: version, deleted: false)
        if softDelete {
            let result = try await storage.update(
                table: table, id: id, scope: scope, values: [SystemProperty.deleted: .bool(true)], condition: condition)
            return try written(result, ifMatch: ifMatch)
        }
        return try written(try await storage.delete(table: table, id: id, scope: scope, condition: condition), ifMatch: ifMatch)
    }

    func undelete(table: String, id: String, scope: RowScope, ifMatch: String?) async throws -> JSONObject {
        let view = try await owners.view(of: table, scope: scope)
        return view.render(try await rendering(view) { try await undeleteRow(table: table, id: id, scope: scope, ifMatch: ifMatch) })
    }

    private func undeleteRow(table: String, id: String, scope: RowScope, ifMatch: String?) async throws -> JSONObject {
        let version = try await expectedVersion(table: table, id: id, scope: scope, ifMatch: ifMatch)
        let result = try await storage.update(
            table: table, id: id, scope: scope, values: [SystemProperty.deleted: .bool(false)],
            condition: WriteCondition(version: version, deleted: true))
        switch result {
        case .written(let row): return row
        case .missing: throw TableError.notFound()
        case .conflict(let current):
            if let version, current[SystemProperty.version]?.stringValue != version {
                throw TableError(.preconditionFailed, "The server's version did not match the passed version", item: current)
            }
            return current  // not deleted: nothing to restore
        }
    }

    // MARK: helpers

    /// What `body` returns, with the item of a 409 or 412 it throws rendered through `view`.
    private func rendering(_ view: ColumnView, _ body: () async throws -> JSONObject) async throws -> JSONObject {
        do {
            return try await body()
        } catch let error as TableError where error.item != nil && view.isRestricted {
            throw TableError(error.status, error.message, item: error.item.map(view.render))
        }
    }

    /// The version `If-Match` requires, `nil` for `*` or no header. A tag that can match no
    /// version (a weak one) is answered at once: 404 when the row is not there, else 412 with it.
    private func expectedVersion(table: String, id: String, scope: RowScope, ifMatch: String?) async throws -> String? {
        guard let ifMatch, !ETag.isWildcard(ifMatch) else { return nil }
        if let version = ETag.version(from: ifMatch) { return version }
        let current = try await stored(table: table, id: id, scope: scope, includeDeleted: false)
        throw TableError(.preconditionFailed, "The server's version did not match the passed version", item: current)
    }

    /// The response to an update or delete: the stored row; 404 for a row that is missing or
    /// deleted; 412 (with If-Match) or 409 (a body version) with the row as it is when its
    /// version did not match.
    private func written(_ result: WriteResult, ifMatch: String?) throws -> JSONObject {
        switch result {
        case .written(let row): return row
        case .missing: throw TableError.notFound()
        case .conflict(let current):
            if isDeleted(current) { throw TableError.notFound() }
            throw TableError(ifMatch == nil ? .conflict : .preconditionFailed, "The server's version did not match the passed version", item: current)
        }
    }

    private func isDeleted(_ row: JSONObject) -> Bool { row[SystemProperty.deleted] == .bool(true) }

    private func notDeleted(_ includeDeleted: Bool) -> FilterExpression? {
        includeDeleted ? nil : .binary(.eq, .member(SystemProperty.deleted), .literal(.bool(false)))
    }
}
