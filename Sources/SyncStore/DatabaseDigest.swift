import Foundation
internal import COpenSSL
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
    static func compute(_ connection: Connection) throws -> DatabaseDigest {
        try connection.readTransaction {
            let schemaRows = try connection.rows("""
                SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name
                """)
            let schemaHash = SHA256()
            for row in schemaRows { schemaHash.update(row) }
            schemaHash.update([
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
                let hash = SHA256()
                var count = 0
                while try statement.step() {
                    hash.update(statement.row())
                    count += 1
                }
                tables.append(Table(name: name, rows: count, hash: hash.finish()))
            }
            return DatabaseDigest(schema: schemaHash.finish(), tables: tables.sorted { $0.name < $1.name })
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

/// SHA-256 through OpenSSL, fed with SQLite values in an unambiguous encoding (type tag, length,
/// bytes), so that no two different rows hash the same input.
final class SHA256 {
    private var context: OpaquePointer?

    init() {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    func update(_ row: [SQLValue]) {
        append(tag: UInt8(ascii: "R"), bytes: withUnsafeBytes(of: UInt64(row.count).littleEndian, Array.init))
        for value in row {
            switch value {
            case .null: append(tag: UInt8(ascii: "N"), bytes: [])
            case .integer(let i): append(tag: UInt8(ascii: "I"), bytes: withUnsafeBytes(of: i.littleEndian, Array.init))
            case .real(let d): append(tag: UInt8(ascii: "F"), bytes: withUnsafeBytes(of: d.bitPattern.littleEndian, Array.init))
            case .text(let s): append(tag: UInt8(ascii: "T"), bytes: Array(s.utf8))
            case .blob(let b): append(tag: UInt8(ascii: "B"), bytes: b)
            }
        }
    }

    private func append(tag: UInt8, bytes: [UInt8]) {
        var header = [tag]
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { header.append(contentsOf: $0) }
        header.withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
        bytes.withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
    }

    func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        out.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        return out
    }
}
