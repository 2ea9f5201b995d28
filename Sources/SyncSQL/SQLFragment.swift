/// A piece of SQL whose parameters are not numbered yet: what an ``SQLDialect`` spells and the
/// ``SQLTranslator`` composes.
///
/// A fragment keeps its values beside the text, in text order, so fragments can be nested and
/// joined before the dialect numbers the placeholders of the whole statement
/// (``statement(in:)``): `?` for SQLite, `$1`, `$2`… for PostgreSQL. Write one with string
/// interpolation; the literal parts are SQL text, and each interpolation says what it adds:
///
/// ```swift
/// let match: SQLFragment = "instr(lower(\(text)), lower(\(pattern))) > 0"  // operands, parenthesised
/// let page: SQLFragment = "LIMIT \(bind: .integer(10))"                    // a bound value
/// let from: SQLFragment = "FROM \(identifier: table)"                      // a quoted name
/// ```
///
/// There is no interpolation of a plain `String`: a value can only reach the SQL as a bound
/// parameter, and a name only through ``SQLIdentifier/quote(_:)``.
public struct SQLFragment: Sendable, Hashable {
    private enum Piece: Sendable, Hashable {
        case text(String)
        case parameter(SQLValue)
    }

    private var pieces: [Piece] = []

    /// How large the fragment is, kept up to date as it grows.
    private(set) var size = Size()

    /// An empty fragment.
    public init() {}

    /// A fragment of SQL text with no parameters: keywords, operators, quoted identifiers.
    ///
    /// - Parameter sql: Text written by the program, never a value from outside.
    public init(raw sql: String) {
        append(raw: sql)
    }

    /// A placeholder bound to `value`.
    ///
    /// - Parameter value: The value to bind.
    /// - Returns: A fragment of one parameter.
    public static func bind(_ value: SQLValue) -> SQLFragment {
        var fragment = SQLFragment()
        fragment.pieces.append(.parameter(value))
        fragment.size.parameters = 1
        fragment.size.length = 1
        return fragment
    }

    /// The bound values, in the order their placeholders appear in the text.
    public var arguments: [SQLValue] {
        pieces.compactMap { piece in
            if case .parameter(let value) = piece { return value }
            return nil
        }
    }

    /// Appends SQL text with no parameters.
    ///
    /// - Parameter sql: Text written by the program, never a value from outside.
    public mutating func append(raw sql: String) {
        guard !sql.isEmpty else { return }
        size.add(text: sql)
        appendText(sql)
    }

    /// Appends `other` as it is, with its parameters.
    ///
    /// - Parameter other: The fragment to append.
    public mutating func append(_ other: SQLFragment) {
        size.add(other.size)
        for piece in other.pieces {
            switch piece {
            case .text(let sql): appendText(sql)
            case .parameter: pieces.append(piece)
            }
        }
    }

    /// Appends text to the pieces (its size already counted).
    private mutating func appendText(_ sql: String) {
        if case .text(let last)? = pieces.last {
            pieces[pieces.count - 1] = .text(last + sql)
        } else {
            pieces.append(.text(sql))
        }
    }

    /// The fragments one after another, with `separator` text between them.
    ///
    /// - Parameters:
    ///   - fragments: The fragments to join.
    ///   - separator: SQL text written by the program, such as `", "` or `" AND "`.
    /// - Returns: The joined fragment.
    public static func joined(_ fragments: [SQLFragment], separator: String) -> SQLFragment {
        var result = SQLFragment()
        for (index, fragment) in fragments.enumerated() {
            if index > 0 { result.append(raw: separator) }
            result.append(fragment)
        }
        return result
    }

    /// The statement this fragment makes in `dialect`: placeholders numbered in text order.
    ///
    /// - Parameter dialect: The engine's dialect, which spells each placeholder.
    /// - Returns: The SQL text and the values to bind, in order.
    public func statement(in dialect: some SQLDialect) -> SQLStatement {
        var sql = ""
        var arguments: [SQLValue] = []
        for piece in pieces {
            switch piece {
            case .text(let text):
                sql += text
            case .parameter(let value):
                arguments.append(value)
                sql += dialect.placeholder(at: arguments.count)
            }
        }
        return SQLStatement(sql, arguments)
    }
}

extension SQLFragment {
    /// The measures of a fragment that engines limit: its length, its parameters and how deeply
    /// its parentheses nest.
    struct Size: Sendable, Hashable {
        /// The UTF-8 length of the text, each placeholder counted as one byte.
        var length = 0
        /// The number of bound values.
        var parameters = 0
        /// The deepest nesting of parentheses in the text (outside quotes), counted from the
        /// fragment's start.
        var nesting = 0
        /// The parentheses opened and not yet closed at the fragment's end.
        var open = 0

        /// Counts text appended at the end: its length and its parentheses outside quoted
        /// identifiers and string literals (a quote in the program's text always closes in
        /// the same text).
        mutating func add(text sql: String) {
            length += sql.utf8.count
            var quote: UInt8?
            for byte in sql.utf8 {
                if let opening = quote {
                    if byte == opening { quote = nil }  // a doubled quote closes and reopens
                    continue
                }
                switch byte {
                case UInt8(ascii: "'"), UInt8(ascii: "\""): quote = byte
                case UInt8(ascii: "("):
                    open += 1
                    nesting = max(nesting, open)
                case UInt8(ascii: ")"): open -= 1
                default: continue
                }
            }
        }

        /// Counts a fragment appended at the end.
        mutating func add(_ other: Size) {
            length += other.length
            parameters += other.parameters
            nesting = max(nesting, open + other.nesting)
            open += other.open
        }
    }
}

extension SQLFragment: ExpressibleByStringInterpolation {
    /// SQL text with no parameters.
    public init(stringLiteral value: String) {
        self.init(raw: value)
    }

    /// The fragment an interpolated literal builds.
    public init(stringInterpolation: Interpolation) {
        self = stringInterpolation.fragment
    }

    /// Builds a fragment from SQL text and interpolated operands, values and names.
    public struct Interpolation: StringInterpolationProtocol {
        var fragment = SQLFragment()

        /// An empty interpolation.
        public init(literalCapacity: Int, interpolationCount: Int) {}

        /// Appends SQL text.
        public mutating func appendLiteral(_ literal: String) {
            fragment.append(raw: literal)
        }

        /// Appends an operand in parentheses, so the precedence of its operators never leaks
        /// into the text around it.
        public mutating func appendInterpolation(_ operand: SQLFragment) {
            fragment.append(raw: "(")
            fragment.append(operand)
            fragment.append(raw: ")")
        }

        /// Appends a fragment as it is, without parentheses (a clause, a list, a function call).
        public mutating func appendInterpolation(inline other: SQLFragment) {
            fragment.append(other)
        }

        /// Appends a placeholder bound to `value`.
        public mutating func appendInterpolation(bind value: SQLValue) {
            fragment.append(.bind(value))
        }

        /// Appends a name quoted by ``SQLIdentifier/quote(_:)``.
        public mutating func appendInterpolation(identifier name: String) {
            fragment.append(raw: SQLIdentifier.quote(name))
        }
    }
}

/// SQL text with its placeholders numbered for one dialect, and the values to bind, in order.
public struct SQLStatement: Sendable, Hashable {
    /// The SQL text.
    public var sql: String
    /// The values of the placeholders, in order.
    public var arguments: [SQLValue]

    /// A statement.
    ///
    /// - Parameters:
    ///   - sql: The SQL text, its placeholders in the dialect's spelling.
    ///   - arguments: The values to bind, in order.
    public init(_ sql: String, _ arguments: [SQLValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }
}
