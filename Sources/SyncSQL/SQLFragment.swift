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
        if case .text(let last)? = pieces.last {
            pieces[pieces.count - 1] = .text(last + sql)
        } else {
            pieces.append(.text(sql))
        }
    }

    /// Appends `other` as it is, with its parameters.
    ///
    /// - Parameter other: The fragment to append.
    public mutating func append(_ other: SQLFragment) {
        for piece in other.pieces {
            switch piece {
            case .text(let sql): append(raw: sql)
            case .parameter: pieces.append(piece)
            }
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
