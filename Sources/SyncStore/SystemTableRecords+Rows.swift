import Foundation
import SyncWire

/// The rows of the system tables, and the records they hold.
extension SystemTables {
    static func row(of operation: TableOperationRecord) throws -> JSONObject {
        [
            SystemProperty.id: .string(String(operation.id)), "sequence": .int(operation.id),
            "kind": .int(Int64(operation.kind.rawValue)), "state": .int(Int64(operation.state.rawValue)),
            "tableName": .string(operation.table), "tableKey": .string(ItemID.key(operation.table)),
            "itemId": .string(operation.itemId), "itemKey": .string(ItemID.key(operation.itemId)),
            "item": try text(operation.item), "version": .int(operation.version),
            "createdAt": .int(milliseconds(operation.createdAt)),
        ]
    }

    static func operation(from row: JSONObject) -> TableOperationRecord {
        TableOperationRecord(
            id: row["sequence"]?.intValue ?? 0,
            kind: TableOperationRecord.Kind(rawValue: Int(row["kind"]?.intValue ?? 0)) ?? .update,
            table: row["tableName"]?.stringValue ?? "",
            itemId: row["itemId"]?.stringValue ?? "",
            item: object(row["item"]),
            version: row["version"]?.intValue ?? 1,
            state: TableOperationRecord.State(rawValue: Int(row["state"]?.intValue ?? 0)) ?? .pending,
            createdAt: date(row["createdAt"]?.intValue ?? 0))
    }

    static func row(of error: OperationErrorRecord, sequence: Int64) throws -> JSONObject {
        [
            SystemProperty.id: .string(error.id), "sequence": .int(sequence), "operationId": .int(error.operationId),
            "operationVersion": .int(error.operationVersion), "kind": .int(Int64(error.kind.rawValue)),
            "tableName": .string(error.table), "itemId": .string(error.itemId),
            "statusCode": error.statusCode.map { .int(Int64($0)) } ?? .null, "message": .string(error.message),
            "item": try text(error.item), "serverItem": try text(error.serverItem),
            "rawResponse": error.rawResponse.map(JSONValue.string) ?? .null,
            "createdAt": .int(milliseconds(error.createdAt)), "conflict": error.conflict.map(JSONValue.string) ?? .null,
        ]
    }

    static func error(from row: JSONObject) -> OperationErrorRecord {
        OperationErrorRecord(
            id: row[SystemProperty.id]?.stringValue ?? "",
            operationId: row["operationId"]?.intValue ?? 0,
            operationVersion: row["operationVersion"]?.intValue ?? 0,
            kind: TableOperationRecord.Kind(rawValue: Int(row["kind"]?.intValue ?? 0)) ?? .update,
            table: row["tableName"]?.stringValue ?? "",
            itemId: row["itemId"]?.stringValue ?? "",
            statusCode: row["statusCode"]?.intValue.map(Int.init),
            message: row["message"]?.stringValue ?? "",
            item: object(row["item"]),
            serverItem: object(row["serverItem"]),
            rawResponse: row["rawResponse"]?.stringValue,
            createdAt: date(row["createdAt"]?.intValue ?? 0),
            conflict: row["conflict"]?.stringValue)
    }

    /// An item as JSON text, or `null`.
    private static func text(_ object: JSONObject?) throws -> JSONValue {
        try object.map { .string(try JSONCoding.string($0)) } ?? .null
    }

    /// The item of a JSON text, or `nil` (for `null`, or a text that is no JSON object).
    private static func object(_ value: JSONValue?) -> JSONObject? {
        value?.stringValue.flatMap { try? JSONCoding.object(from: $0) }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
