import Foundation
import SyncKeys
import SyncSQL
import SyncSQLite

/// A checksum of everything a database holds: the schema, every row of every table (user tables,
/// the operation queue, the errors, the config with its delta tokens, `sqlite_sequence`) in rowid
/// order, and the header values `user_version` / `application_id`.
///
/// Two databases with equal digests hold the same data, whatever their keys, salts or page
/// layout. The digest never leaves the library: a hash of a small table could confirm guesses
/// about its content, so reports show row counts only.
struct DatabaseDigest: Equatable, Sendable {
    /// One table's row count and content hash.
    struct Table: Equatable, Sendable {
        var name: String
        var rows: Int
        var hash: [UInt8]
    }

    /// The hash of the schema (`sqlite_master` without root pages) and header values.
    var schema: [UInt8]
    /// The tables by name, in name order.
    var tables: [Table]

    /// Computes the digest of the database open on `connection` (inside one read transaction).
    ///
    /// - Throws: ``SQLiteError`` when a row cannot be read; ``StoreError/verificationFailed(_:)`` when
    ///   the hashing fails (a digest is never computed over part of the content).
    static func compute(_ connection: Connection) throws -> DatabaseDigest {
        do {
            return try digest(connection)
        } catch let error as KeyError {
            throw StoreError.verificationFailed("the content digest could not be computed: \(error)")
        }
    }

    private static func digest(_ connection: Connection) throws -> DatabaseDigest {
        try connection.readTransaction {
            let schemaRows = try connection.rows("""
                SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name
                """)
            var schemaHash = try SHA256Hasher()
            for row in schemaRows { try schemaHash.update(row: row) }
            try schemaHash.update(row: [
                try connection.scalar("PRAGMA user_version") ?? .null,
                try connection.scalar("PRAGMA application_id") ?? .null,
            ])
            var tables: [Table] = []
            for row in schemaRows where row[0].textValue == "table" {
                guard let name = row[1].textValue, let sql = row[3].textValue,
                    !sql.uppercased().hasPrefix("CREATE VIRTUAL")
                else { continue }
                let withoutRowID = sql.uppercased().contains("WITHOUT ROWID")
                let quoted = SQLIdentifier.quote(name)
                let query = withoutRowID
                    ? "SELECT * FROM \(quoted)"
                    : "SELECT rowid, * FROM \(quoted) ORDER BY rowid"
                let statement = try connection.prepare(query)
                var hash = try SHA256Hasher()
                var count = 0
                while try statement.step() {
                    try hash.update(row: statement.row())
                    count += 1
                }
                tables.append(Table(name: name, rows: count, hash: try hash.finalize()))
            }
            return DatabaseDigest(schema: try schemaHash.finalize(), tables: tables.sorted { $0.name < $1.name })
        }
    }

    /// The names of the tables whose rows differ from `other` (or exist in only one of them).
    func differences(from other: DatabaseDigest) -> [String] {
        var names: [String] = []
        if schema != other.schema { names.append("the schema") }
        let mine = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let theirs = Dictionary(other.tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in Set(mine.keys).union(theirs.keys).sorted() where mine[name] != theirs[name] {
            names.append(name)
        }
        return names
    }
}

extension SHA256Hasher {
    /// Feeds one row of SQLite values in an unambiguous encoding (type tag, length, bytes), so
    /// that no two different rows hash the same input.
    ///
    /// - Throws: ``KeyError/cryptoFailure(_:)`` when the hashing fails.
    mutating func update(row: [SQLValue]) throws(KeyError) {
        try append(tag: UInt8(ascii: "R"), bytes: withUnsafeBytes(of: UInt64(row.count).littleEndian, Array.init))
        for value in row {
            switch value {
            case .null: try append(tag: UInt8(ascii: "N"), bytes: [])
            case .integer(let i): try append(tag: UInt8(ascii: "I"), bytes: withUnsafeBytes(of: i.littleEndian, Array.init))
            case .real(let d): try append(tag: UInt8(ascii: "F"), bytes: withUnsafeBytes(of: d.bitPattern.littleEndian, Array.init))
            case .text(let s): try append(tag: UInt8(ascii: "T"), bytes: Array(s.utf8))
            case .blob(let b): try append(tag: UInt8(ascii: "B"), bytes: b)
            }
        }
    }

    private mutating func append(tag: UInt8, bytes: [UInt8]) throws(KeyError) {
        var header = [tag]
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { header.append(contentsOf: $0) }
        try update(header)
        try update(bytes)
    }
}
