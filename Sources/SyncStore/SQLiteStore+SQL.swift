import SyncSQL

/// Every SQL string of the store, in one place, in SQLite's dialect (SQLCipher 3.4.1 is SQLite
/// 3.15.2: no UPSERT, no RETURNING). Identifiers go through `SQLIdentifier.quote`; values are
/// always bound.
enum StoreSQL {
    static let operationsTable = "__operations"
    static let errorsTable = "__errors"
    static let configTable = "__config"

    static let createSystemTables = """
        CREATE TABLE IF NOT EXISTS "__operations" (
            "id" INTEGER PRIMARY KEY AUTOINCREMENT,
            "kind" INTEGER NOT NULL,
            "state" INTEGER NOT NULL DEFAULT 0,
            "tableName" TEXT NOT NULL,
            "itemId" TEXT NOT NULL,
            "item" TEXT,
            "version" INTEGER NOT NULL DEFAULT 1,
            "createdAt" TEXT NOT NULL
        );
        DROP INDEX IF EXISTS "__operations_item";
        DROP INDEX IF EXISTS "__operations_table_item";
        CREATE INDEX IF NOT EXISTS "__operations_table_item_nocase" ON "__operations" ("tableName" COLLATE NOCASE, "itemId" COLLATE NOCASE);
        CREATE TABLE IF NOT EXISTS "__errors" (
            "id" TEXT PRIMARY KEY NOT NULL,
            "operationId" INTEGER NOT NULL,
            "operationVersion" INTEGER NOT NULL,
            "kind" INTEGER NOT NULL,
            "tableName" TEXT NOT NULL,
            "itemId" TEXT NOT NULL,
            "statusCode" INTEGER,
            "message" TEXT NOT NULL,
            "item" TEXT,
            "serverItem" TEXT,
            "rawResponse" TEXT,
            "createdAt" TEXT NOT NULL,
            "conflict" TEXT
        );
        CREATE INDEX IF NOT EXISTS "__errors_operation" ON "__errors" ("operationId");
        CREATE TABLE IF NOT EXISTS "__config" (
            "key" TEXT PRIMARY KEY NOT NULL,
            "value" TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS "__attachments" (
            "tableName" TEXT NOT NULL,
            "attachmentId" TEXT NOT NULL COLLATE NOCASE,
            "file" TEXT NOT NULL,
            "wrappedKey" BLOB,
            PRIMARY KEY ("tableName", "attachmentId")
        );
        CREATE TABLE IF NOT EXISTS "__attachment_transfers" (
            "tableName" TEXT NOT NULL,
            "attachmentId" TEXT NOT NULL COLLATE NOCASE,
            "direction" INTEGER NOT NULL,
            "attempts" INTEGER NOT NULL DEFAULT 0,
            "notBefore" TEXT NOT NULL,
            "lastError" TEXT,
            PRIMARY KEY ("tableName", "attachmentId", "direction")
        );
        CREATE TABLE IF NOT EXISTS "__attachment_partials" (
            "tableName" TEXT NOT NULL,
            "attachmentId" TEXT NOT NULL COLLATE NOCASE,
            "file" TEXT NOT NULL,
            "wrappedKey" BLOB,
            "length" INTEGER NOT NULL,
            PRIMARY KEY ("tableName", "attachmentId")
        );
        """

    // MARK: schema

    static let userTables = """
        SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_\\_%' ESCAPE '\\'
        AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
        """

    static func tableInfo(_ table: String) -> String { "PRAGMA table_info(\(SQLIdentifier.quote(table)))" }

    /// A user table: its `id` matches whatever the ASCII case (`NOCASE`), like the item ids of
    /// the backends, and keeps the spelling first written.
    static func createTable(_ table: String, columns: [(String, ColumnTypeName)]) -> String {
        let defs = columns.map { "\(SQLIdentifier.quote($0.0)) \($0.1)" }
        return
            "CREATE TABLE \(SQLIdentifier.quote(table)) (\"id\" TEXT PRIMARY KEY NOT NULL COLLATE NOCASE\(defs.isEmpty ? "" : ", ")\(defs.joined(separator: ", ")))"
    }

    static func addColumn(_ table: String, column: String, type: ColumnTypeName) -> String {
        "ALTER TABLE \(SQLIdentifier.quote(table)) ADD COLUMN \(SQLIdentifier.quote(column)) \(type)"
    }

    // MARK: items

    static func lookup(_ table: String) -> String { "SELECT * FROM \(SQLIdentifier.quote(table)) WHERE \"id\" = ?" }
    /// The rows of `count` ids (matched as the `id` column's `NOCASE` matches them).
    static func lookupMany(_ table: String, count: Int) -> String {
        "SELECT * FROM \(SQLIdentifier.quote(table)) WHERE \"id\" IN (\(marks(count)))"
    }

    /// `INSERT OR IGNORE` of a row: `?1` is the id, `?2…` the columns' values in order.
    static func insertIgnoringExisting(_ table: String, columns: [String]) -> String {
        let names = (["id"] + columns).map(SQLIdentifier.quote).joined(separator: ", ")
        let marks = (1...(columns.count + 1)).map { "?\($0)" }.joined(separator: ", ")
        return "INSERT OR IGNORE INTO \(SQLIdentifier.quote(table)) (\(names)) VALUES (\(marks))"
    }

    /// `UPDATE` of a row's columns, bound like ``insertIgnoringExisting(_:columns:)``: `?1` is
    /// the id, `?2…` the values.
    static func updateByFirstArgument(_ table: String, columns: [String]) -> String {
        let assignments = columns.enumerated().map { "\(SQLIdentifier.quote($0.element)) = ?\($0.offset + 2)" }
        return "UPDATE \(SQLIdentifier.quote(table)) SET \(assignments.joined(separator: ", ")) WHERE \"id\" = ?1"
    }

    static func deleteByID(_ table: String) -> String { "DELETE FROM \(SQLIdentifier.quote(table)) WHERE \"id\" = ?" }
    static func deleteAll(_ table: String) -> String { "DELETE FROM \(SQLIdentifier.quote(table))" }

    // MARK: operations

    static let operationColumns = "\"id\", \"kind\", \"state\", \"tableName\", \"itemId\", \"item\", \"version\", \"createdAt\""
    static let allOperations = "SELECT \(operationColumns) FROM \"__operations\" ORDER BY \"id\""
    static let operationsOfTable = "SELECT \(operationColumns) FROM \"__operations\" WHERE \"tableName\" = ? COLLATE NOCASE ORDER BY \"id\""
    static let operationByID = "SELECT \(operationColumns) FROM \"__operations\" WHERE \"id\" = ?"
    static let operationByItem = """
        SELECT \(operationColumns) FROM "__operations" WHERE "tableName" = ? COLLATE NOCASE AND "itemId" = ? COLLATE NOCASE
        ORDER BY "id" DESC LIMIT 1
        """
    static let operationAfter = "SELECT \(operationColumns) FROM \"__operations\" WHERE \"id\" > ? ORDER BY \"id\" LIMIT 1"
    static let operationsAfter = "SELECT \(operationColumns) FROM \"__operations\" WHERE \"id\" > ? ORDER BY \"id\" LIMIT ?"
    /// The most ids one statement names (`IN (?, …)`), well inside SQLite's 999 host parameters.
    static let idsPerStatement = 500
    /// `?, ?, …` for `count` values.
    static func marks(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ", ") }
    static func operationsByIDs(_ count: Int) -> String {
        "SELECT \(operationColumns) FROM \"__operations\" WHERE \"id\" IN (\(marks(count))) ORDER BY \"id\""
    }
    static func setOperationsState(_ count: Int) -> String {
        "UPDATE \"__operations\" SET \"state\" = ? WHERE \"id\" IN (\(marks(count)))"
    }
    static func deleteOperationsByIDs(_ count: Int) -> String { "DELETE FROM \"__operations\" WHERE \"id\" IN (\(marks(count)))" }
    static func deleteErrorsOfOperations(_ count: Int) -> String {
        "DELETE FROM \"__errors\" WHERE \"operationId\" IN (\(marks(count)))"
    }
    static let countOperations = "SELECT count(*) FROM \"__operations\""
    static let countOperationsOfTable = "SELECT count(*) FROM \"__operations\" WHERE \"tableName\" = ? COLLATE NOCASE"
    static let insertOperation = """
        INSERT INTO "__operations" ("kind", "state", "tableName", "itemId", "item", "version", "createdAt")
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """
    static let updateOperation = """
        UPDATE "__operations" SET "kind" = ?, "state" = ?, "tableName" = ?, "itemId" = ?, "item" = ?, "version" = ?,
        "createdAt" = ? WHERE "id" = ?
        """
    static let deleteOperation = "DELETE FROM \"__operations\" WHERE \"id\" = ?"
    static let deleteOperationsOfTable = "DELETE FROM \"__operations\" WHERE \"tableName\" = ? COLLATE NOCASE"

    // MARK: errors

    static let errorColumns = """
        "id", "operationId", "operationVersion", "kind", "tableName", "itemId", "statusCode", "message", "item",
        "serverItem", "rawResponse", "createdAt", "conflict"
        """
    static let allErrors = "SELECT \(errorColumns) FROM \"__errors\" ORDER BY \"createdAt\", rowid"
    static let errorsOfOperation = "SELECT \(errorColumns) FROM \"__errors\" WHERE \"operationId\" = ? ORDER BY rowid"
    static let insertError = "INSERT OR REPLACE INTO \"__errors\" (\(errorColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    static let deleteErrorsOfOperation = "DELETE FROM \"__errors\" WHERE \"operationId\" = ?"
    static let deleteErrorsOfTable = "DELETE FROM \"__errors\" WHERE \"tableName\" = ? COLLATE NOCASE"
    static let deleteError = "DELETE FROM \"__errors\" WHERE \"id\" = ?"

    // MARK: config

    static let configValue = "SELECT \"value\" FROM \"__config\" WHERE \"key\" = ?"
    static let setConfigValue = "INSERT OR REPLACE INTO \"__config\" (\"key\", \"value\") VALUES (?, ?)"
    static let deleteConfigValue = "DELETE FROM \"__config\" WHERE \"key\" = ?"
    static let deleteConfigPrefix = "DELETE FROM \"__config\" WHERE substr(\"key\", 1, ?) = ?"

    // MARK: migration (see SchemaMigration)

    static let migratingTable = "__migrating"
    static let addErrorConflictColumn = "ALTER TABLE \"__errors\" ADD COLUMN \"conflict\" TEXT"
    static let pendingItemIDs = "SELECT DISTINCT \"itemId\" FROM \"__operations\" WHERE \"tableName\" = ? COLLATE NOCASE"
    static func indexList(_ table: String) -> String { "PRAGMA index_list(\(SQLIdentifier.quote(table)))" }
    static func indexColumns(_ index: String) -> String { "PRAGMA index_xinfo(\(SQLIdentifier.quote(index)))" }

    /// Each row's rowid, id and `updatedAt` (the column as spelled, or `NULL` when there is none).
    static func rowKeys(_ table: String, updatedAt: String?) -> String {
        "SELECT rowid, \"id\", \(updatedAt.map(SQLIdentifier.quote) ?? "NULL") FROM \(SQLIdentifier.quote(table))"
    }

    static func deleteRow(_ table: String) -> String { "DELETE FROM \(SQLIdentifier.quote(table)) WHERE rowid = ?" }

    static func copyRows(from source: String, to target: String, columns: [String]) -> String {
        let names = columns.map(SQLIdentifier.quote).joined(separator: ", ")
        return "INSERT INTO \(SQLIdentifier.quote(target)) (\(names)) SELECT \(names) FROM \(SQLIdentifier.quote(source))"
    }

    static func dropTable(_ table: String) -> String { "DROP TABLE \(SQLIdentifier.quote(table))" }

    static func renameTable(_ table: String, to name: String) -> String {
        "ALTER TABLE \(SQLIdentifier.quote(table)) RENAME TO \(SQLIdentifier.quote(name))"
    }
}

/// A declared SQL column type (the raw value of a ``ColumnType``).
typealias ColumnTypeName = String
