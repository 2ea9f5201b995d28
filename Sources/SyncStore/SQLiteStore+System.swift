import Foundation
import SyncSQL
import SyncSQLite
import SyncWire

extension StoreSession {
    // MARK: operations

    private func operation(from row: [SQLValue]) -> TableOperationRecord {
        TableOperationRecord(
            id: row[0].integerValue ?? 0,
            kind: TableOperationRecord.Kind(rawValue: Int(row[1].integerValue ?? 0)) ?? .update,
            table: row[3].textValue ?? "",
            itemId: row[4].textValue ?? "",
            item: ValueCoding.object(row[5]),
            version: row[6].integerValue ?? 1,
            state: TableOperationRecord.State(rawValue: Int(row[2].integerValue ?? 0)) ?? .pending,
            createdAt: ValueCoding.date(row[7]))
    }

    func operations(table: String?) throws -> [TableOperationRecord] {
        let rows = try table.map { try self.rows(StoreSQL.operationsOfTable, [.text($0)]) } ?? self.rows(StoreSQL.allOperations)
        return rows.map(operation(from:))
    }

    func operation(id: Int64) throws -> TableOperationRecord? {
        try rows(StoreSQL.operationByID, [.integer(id)]).first.map(operation(from:))
    }

    func operation(table: String, itemId: String) throws -> TableOperationRecord? {
        try rows(StoreSQL.operationByItem, [.text(table), .text(itemId)]).first.map(operation(from:))
    }

    func operation(after id: Int64) throws -> TableOperationRecord? {
        try rows(StoreSQL.operationAfter, [.integer(id)]).first.map(operation(from:))
    }

    func operations(after id: Int64, limit: Int) throws -> [TableOperationRecord] {
        guard limit > 0 else { return [] }
        return try rows(StoreSQL.operationsAfter, [.integer(id), .integer(Int64(limit))]).map(operation(from:))
    }

    func operations(ids: [Int64]) throws -> [TableOperationRecord] {
        var found: [TableOperationRecord] = []
        for chunk in Self.chunks(of: ids) {
            found += try rows(StoreSQL.operationsByIDs(chunk.count), chunk.map(SQLValue.integer)).map(operation(from:))
        }
        return ids.count > StoreSQL.idsPerStatement ? found.sorted { $0.id < $1.id } : found
    }

    func operationCount(table: String?) throws -> Int {
        let rows = try table.map { try self.rows(StoreSQL.countOperationsOfTable, [.text($0)]) } ?? self.rows(StoreSQL.countOperations)
        return Int(rows.first?.first?.integerValue ?? 0)
    }

    func addOperation(
        kind: TableOperationRecord.Kind, table: String, itemId: String, item: JSONObject?
    ) throws -> TableOperationRecord {
        var record = TableOperationRecord(id: 0, kind: kind, table: table, itemId: itemId, item: item)
        try run(
            StoreSQL.insertOperation,
            [
                .integer(Int64(kind.rawValue)), .integer(Int64(record.state.rawValue)), .text(table), .text(itemId),
                try ValueCoding.text(item), .integer(record.version), ValueCoding.dateText(record.createdAt),
            ])
        record.id = connection.lastInsertRowID
        return record
    }

    func updateOperation(_ operation: TableOperationRecord) throws {
        try run(
            StoreSQL.updateOperation,
            [
                .integer(Int64(operation.kind.rawValue)), .integer(Int64(operation.state.rawValue)),
                .text(operation.table), .text(operation.itemId), try ValueCoding.text(operation.item),
                .integer(operation.version), ValueCoding.dateText(operation.createdAt), .integer(operation.id),
            ])
    }

    func deleteOperation(id: Int64) throws {
        try run(StoreSQL.deleteErrorsOfOperation, [.integer(id)])
        try run(StoreSQL.deleteOperation, [.integer(id)])
    }

    func setState(_ state: TableOperationRecord.State, ofOperations ids: [Int64]) throws {
        for chunk in Self.chunks(of: ids) {
            try run(StoreSQL.setOperationsState(chunk.count), [.integer(Int64(state.rawValue))] + chunk.map(SQLValue.integer))
        }
    }

    func deleteOperations(ids: [Int64]) throws {
        for chunk in Self.chunks(of: ids) {
            let arguments = chunk.map(SQLValue.integer)
            try run(StoreSQL.deleteErrorsOfOperations(chunk.count), arguments)
            try run(StoreSQL.deleteOperationsByIDs(chunk.count), arguments)
        }
    }

    /// `values` in slices of at most ``StoreSQL/idsPerStatement``, one statement's worth each.
    static func chunks<T>(of values: [T]) -> [ArraySlice<T>] {
        stride(from: 0, to: values.count, by: StoreSQL.idsPerStatement).map {
            values[$0..<min($0 + StoreSQL.idsPerStatement, values.count)]
        }
    }

    func deleteOperations(table: String) throws {
        try run(StoreSQL.deleteErrorsOfTable, [.text(table)])
        try run(StoreSQL.deleteOperationsOfTable, [.text(table)])
    }

    // MARK: errors

    private func operationError(from row: [SQLValue]) -> OperationErrorRecord {
        OperationErrorRecord(
            id: row[0].textValue ?? "",
            operationId: row[1].integerValue ?? 0,
            operationVersion: row[2].integerValue ?? 0,
            kind: TableOperationRecord.Kind(rawValue: Int(row[3].integerValue ?? 0)) ?? .update,
            table: row[4].textValue ?? "",
            itemId: row[5].textValue ?? "",
            statusCode: row[6].integerValue.map(Int.init),
            message: row[7].textValue ?? "",
            item: ValueCoding.object(row[8]),
            serverItem: ValueCoding.object(row[9]),
            rawResponse: row[10].textValue,
            createdAt: ValueCoding.date(row[11]),
            conflict: row[12].textValue)
    }

    func operationErrors() throws -> [OperationErrorRecord] {
        try rows(StoreSQL.allErrors).map(operationError(from:))
    }

    func operationErrors(operationId: Int64) throws -> [OperationErrorRecord] {
        try rows(StoreSQL.errorsOfOperation, [.integer(operationId)]).map(operationError(from:))
    }

    func addOperationError(_ error: OperationErrorRecord) throws {
        try run(
            StoreSQL.insertError,
            [
                .text(error.id), .integer(error.operationId), .integer(error.operationVersion),
                .integer(Int64(error.kind.rawValue)), .text(error.table), .text(error.itemId),
                error.statusCode.map { .integer(Int64($0)) } ?? .null, .text(error.message),
                try ValueCoding.text(error.item), try ValueCoding.text(error.serverItem),
                error.rawResponse.map(SQLValue.text) ?? .null, ValueCoding.dateText(error.createdAt),
                error.conflict.map(SQLValue.text) ?? .null,
            ])
    }

    func deleteOperationErrors(operationId: Int64) throws {
        try run(StoreSQL.deleteErrorsOfOperation, [.integer(operationId)])
    }

    func deleteOperationError(id: String) throws {
        try run(StoreSQL.deleteError, [.text(id)])
    }

    // MARK: config

    func configValue(forKey key: String) throws -> String? {
        try rows(StoreSQL.configValue, [.text(key)]).first?.first?.textValue
    }

    func setConfigValue(_ value: String, forKey key: String) throws {
        try run(StoreSQL.setConfigValue, [.text(key), .text(value)])
    }

    func deleteConfigValue(forKey key: String) throws {
        try run(StoreSQL.deleteConfigValue, [.text(key)])
    }

    func deleteConfigValues(withPrefix prefix: String) throws {
        try run(StoreSQL.deleteConfigPrefix, [.integer(Int64(prefix.unicodeScalars.count)), .text(prefix)])
    }
}
