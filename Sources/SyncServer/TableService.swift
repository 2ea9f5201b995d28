import Foundation
import SyncSQL
import SyncWire

/// The tables protocol over a ``TableStorage``: system columns, versions, soft delete,
/// conflicts. No HTTP here; the controller maps requests to these calls.
struct TableService: Sendable {
    let storage: any TableStorage
    let clock: WriteClock
    let softDelete: Bool

    /// The system columns a client may not send.
    static func checkReserved(_ item: JSONObject) throws(TableError) {
        for key in item.keys where SystemProperty.reserved.contains(where: { $0.caseInsensitiveCompare(key) == .orderedSame }) {
            throw .badRequest("Cannot update item with property '\(key)' as it is reserved")
        }
    }

    /// The columns an item needs, typed from its values; property names must be plain names,
    /// and no two may name one column (SQLite ignores the case of ASCII letters in names).
    static func columns(of item: JSONObject) throws(TableError) -> [String: ColumnType] {
        guard item.count <= 500 else { throw .badRequest("An item may have at most 500 properties") }
        if let (a, b) = ColumnIndex.clash(in: Set(item.keys).union([SystemProperty.id, SystemProperty.version])) {
            throw .badRequest("The properties '\(a.prefix(64))' and '\(b.prefix(64))' differ only by case")
        }
        var columns: [String: ColumnType] = [:]
        for (name, value) in item where name != SystemProperty.id && name != SystemProperty.version {
            guard ODataParser.isName(name) else { throw .badRequest("'\(name.prefix(64))' is not a valid property name") }
            if let type = ColumnType(inferringFrom: value) { columns[name] = type }
        }
        return columns
    }

    func list(_ query: QueryDescription, includeDeleted: Bool) async throws -> QueryResult {
        guard try await storage.columns(of: query.table) != nil else { throw TableError.notFound("The table '\(query.table)' does not exist") }
        let hideDeleted = notDeleted(includeDeleted)
        let items = try await storage.select(query, extraFilter: hideDeleted)
        let count = query.includeTotalCount ? try await storage.count(query, extraFilter: hideDeleted) : nil
        return QueryResult(items: items, totalCount: count)
    }

    func read(table: String, id: String, includeDeleted: Bool) async throws -> JSONObject {
        guard let row = try await storage.row(table: table, id: id), includeDeleted || !isDeleted(row) else { throw TableError.notFound() }
        return row
    }

    func insert(table: String, item: JSONObject) async throws -> JSONObject {
        try Self.checkReserved(item)
        var row = item
        switch item[SystemProperty.id] {
        case nil, .null?: row[SystemProperty.id] = .string(ItemID.generate())
        case .string(let id)? where ItemID.isValid(id): break
        default: throw TableError.badRequest("The item's id must be a string of 1 to 255 characters without control characters or \" + ? \\ / `")
        }
        try await storage.ensureColumns(table, Self.columns(of: item))
        let now = await clock.next()
        row[SystemProperty.createdAt] = .string(now)
        row[SystemProperty.updatedAt] = .string(now)
        row[SystemProperty.version] = .string(WriteClock.newVersion())
        row[SystemProperty.deleted] = .bool(false)
        guard case .string(let id)? = row[SystemProperty.id] else { throw TableError.badRequest("missing id") }
        guard try await storage.insert(table: table, row: row) else {
            let existing = try await storage.row(table: table, id: id)
            throw TableError(.conflict, "An item with id '\(id)' already exists", item: existing)
        }
        return try await read(table: table, id: id, includeDeleted: true)
    }

    func update(table: String, id: String, changes: JSONObject, ifMatch: String?) async throws -> JSONObject {
        try Self.checkReserved(changes)
        if case let bodyID? = changes[SystemProperty.id], bodyID != .string(id) {
            throw TableError.badRequest("The item's id does not match the id in the request URL")
        }
        let current = try await read(table: table, id: id, includeDeleted: false)
        let bodyVersion = changes[SystemProperty.version]?.stringValue
        try checkVersion(current, ifMatch: ifMatch, bodyVersion: bodyVersion)
        try await storage.ensureColumns(table, Self.columns(of: changes))
        var values = changes
        values.removeValue(forKey: SystemProperty.id)
        values.removeValue(forKey: SystemProperty.version)
        return try await write(table: table, current: current, values: values, ifMatch: ifMatch, bodyVersion: bodyVersion)
    }

    func delete(table: String, id: String, ifMatch: String?) async throws -> JSONObject {
        let current = try await read(table: table, id: id, includeDeleted: false)
        try checkVersion(current, ifMatch: ifMatch, bodyVersion: nil)
        if softDelete {
            return try await write(table: table, current: current, values: [SystemProperty.deleted: .bool(true)], ifMatch: ifMatch, bodyVersion: nil)
        }
        guard case .string(let version)? = current[SystemProperty.version],
            try await storage.delete(table: table, id: id, version: version)
        else { throw try await conflict(table: table, id: id, ifMatch: ifMatch) }
        return current
    }

    func undelete(table: String, id: String, ifMatch: String?) async throws -> JSONObject {
        let current = try await read(table: table, id: id, includeDeleted: true)
        try checkVersion(current, ifMatch: ifMatch, bodyVersion: nil)
        guard isDeleted(current) else { return current }
        return try await write(table: table, current: current, values: [SystemProperty.deleted: .bool(false)], ifMatch: ifMatch, bodyVersion: nil)
    }

    // MARK: helpers

    /// Writes `values` plus a new version and updatedAt if nobody changed the row since it was
    /// read. A write with a precondition (If-Match or a body version) that loses a race is a
    /// conflict; one without is retried on the newer row.
    private func write(table: String, current: JSONObject, values: JSONObject, ifMatch: String?, bodyVersion: String?) async throws -> JSONObject {
        var current = current
        for _ in 0..<8 {
            guard case .string(let id)? = current[SystemProperty.id], case .string(let version)? = current[SystemProperty.version] else {
                throw TableError.notFound()
            }
            var stamped = values
            stamped[SystemProperty.updatedAt] = .string(await clock.next())
            stamped[SystemProperty.version] = .string(WriteClock.newVersion())
            if try await storage.update(table: table, id: id, version: version, values: stamped) {
                return try await read(table: table, id: id, includeDeleted: true)
            }
            if ifMatch != nil || bodyVersion != nil {
                throw try await conflict(table: table, id: id, ifMatch: ifMatch)
            }
            current = try await read(table: table, id: id, includeDeleted: false)
        }
        throw TableError(.serviceUnavailable, "The item is being changed by too many requests; try again")
    }

    /// A write lost a race: 412 when the client sent If-Match, 409 otherwise, with the row now stored.
    private func conflict(table: String, id: String, ifMatch: String?) async throws -> TableError {
        guard let row = try await storage.row(table: table, id: id), !isDeleted(row) || !softDelete else { return .notFound() }
        return TableError(ifMatch == nil ? .conflict : .preconditionFailed, "The item was changed by another request", item: row)
    }

    private func checkVersion(_ current: JSONObject, ifMatch: String?, bodyVersion: String?) throws(TableError) {
        let stored = current[SystemProperty.version]?.stringValue
        if let ifMatch, !ETag.ifMatch(ifMatch, matches: stored) {
            throw TableError(.preconditionFailed, "The server's version did not match the passed version", item: current)
        }
        if ifMatch == nil, let bodyVersion, bodyVersion != stored {
            throw TableError(.conflict, "The server's version did not match the passed version", item: current)
        }
    }

    private func isDeleted(_ row: JSONObject) -> Bool { row[SystemProperty.deleted] == .bool(true) }

    private func notDeleted(_ includeDeleted: Bool) -> FilterExpression? {
        includeDeleted ? nil : .binary(.eq, .member(SystemProperty.deleted), .literal(.bool(false)))
    }
}

/// Timestamps for writes: millisecond text, strictly increasing even within one millisecond.
actor WriteClock {
    private var last: Int64 = 0

    func next() -> String {
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        last = max(now, last + 1)
        return WireDate.string(from: Date(timeIntervalSince1970: Double(last) / 1000))
    }

    /// A new opaque version: 12 random bytes, base64.
    static func newVersion() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }
}
