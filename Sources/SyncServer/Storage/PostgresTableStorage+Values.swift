import NIOCore
import PostgresNIO
import SyncSQL
import SyncWire

/// Values between the one value type (`SQLValue`) and PostgreSQL's wire formats.
extension PostgresTableStorage {
    /// The query of a statement, counted as one sent (``statements``).
    func counted(_ statement: SQLStatement) -> PostgresQuery {
        statements.add()
        return Self.query(statement)
    }

    /// The query of a statement: its SQL and its values, bound (never in the text).
    static func query(_ statement: SQLStatement) -> PostgresQuery {
        var binds = PostgresBindings(capacity: statement.arguments.count)
        for value in statement.arguments {
            switch value {
            case .null: binds.appendNull()
            case .integer(let i): binds.append(i)
            case .real(let d): binds.append(d)
            case .text(let s): binds.append(s)
            case .blob(let bytes): binds.append(ByteBuffer(bytes: bytes))
            }
        }
        return PostgresQuery(unsafeSQL: statement.sql, binds: binds)
    }

    /// How a property's value is written to a column of `type`: bound, except a Boolean (the
    /// constant `TRUE` or `FALSE`) and a fractional number going to an integer (`numeric`)
    /// column, bound as its shortest text so the number reads back exactly.
    static func written(_ value: JSONValue, as type: ColumnType?) throws -> SQLFragment {
        switch (value, type) {
        case (.bool(let b), _): return PostgresDialect().boolean(b)
        case (.double(let d), .integer?): return "CAST(\(bind: .text("\(d)")) AS NUMERIC)"
        default: return .bind(try SQLValue(json: value))
        }
    }

    /// The columns of a result row, by name, each as an `SQLValue`.
    static func values(_ row: PostgresRow) -> [(String, SQLValue)] {
        row.map { cell in (cell.columnName, value(cell)) }
    }

    /// The value of one result cell: text (and JSON text), `bigint`, `numeric` (an integer when it
    /// has no fraction, else a real), `double precision`, `boolean` (0 or 1, as SQLite keeps it).
    static func value(_ cell: PostgresCell) -> SQLValue {
        guard var bytes = cell.bytes else { return .null }
        if cell.format == .text {
            let text = String(buffer: bytes)
            switch cell.dataType {
            case .bool: return .integer(text == "t" ? 1 : 0)
            case .int2, .int4, .int8, .numeric: return number(text)
            case .float4, .float8: return Double(text).map(SQLValue.real) ?? .text(text)
            default: return .text(text)
            }
        }
        switch cell.dataType {
        case .bool: return .integer((bytes.readInteger(as: UInt8.self) ?? 0) != 0 ? 1 : 0)
        case .int2: return bytes.readInteger(as: Int16.self).map { .integer(Int64($0)) } ?? .null
        case .int4: return bytes.readInteger(as: Int32.self).map { .integer(Int64($0)) } ?? .null
        case .int8: return bytes.readInteger(as: Int64.self).map { .integer($0) } ?? .null
        case .float4: return bytes.readInteger(as: UInt32.self).map { .real(Double(Float(bitPattern: $0))) } ?? .null
        case .float8: return bytes.readInteger(as: UInt64.self).map { .real(Double(bitPattern: $0)) } ?? .null
        case .numeric: return numeric(&bytes)
        case .bytea: return .blob(Array(bytes.readableBytesView))
        default: return .text(String(buffer: bytes))
        }
    }

    /// A `numeric` in its binary form: digit count, weight (of the first digit, in powers of
    /// 10,000), sign, display scale, then the base-10,000 digits.
    private static func numeric(_ bytes: inout ByteBuffer) -> SQLValue {
        guard let count = bytes.readInteger(as: Int16.self), let weight = bytes.readInteger(as: Int16.self),
            let sign = bytes.readInteger(as: UInt16.self), bytes.readInteger(as: Int16.self) != nil
        else { return .null }
        switch sign {
        case 0xC000: return .real(.nan)
        case 0xD000: return .real(.infinity)
        case 0xF000: return .real(-.infinity)
        default: break
        }
        var digits: [Int16] = []
        for _ in 0..<max(0, Int(count)) { digits.append(bytes.readInteger(as: Int16.self) ?? 0) }
        var integer = "", fraction = ""
        let lowest = min(0, Int(weight) - digits.count + 1)
        for position in stride(from: max(Int(weight), 0), through: lowest, by: -1) {
            let index = Int(weight) - position
            let digit = digits.indices.contains(index) ? Int(digits[index]) : 0
            let padded = String(repeating: "0", count: 4 - String(digit).count) + String(digit)
            if position >= 0 {
                integer += integer.isEmpty ? String(digit) : padded
            } else {
                fraction += padded
            }
        }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let text = (sign == 0x4000 ? "-" : "") + integer + (fraction.isEmpty ? "" : "." + fraction)
        return number(text)
    }

    /// A number's text as an integer when it is one that fits, else a real.
    private static func number(_ text: String) -> SQLValue {
        if let integer = Int64(text) { return .integer(integer) }
        return Double(text).map(SQLValue.real) ?? .text(text)
    }
}
