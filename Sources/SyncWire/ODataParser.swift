import Foundation

/// Parses the G2 (OData v3) query options: `$filter`, `$orderby`, `$select`, `$top`, `$skip`,
/// `$inlinecount`, `__includeDeleted`.
public enum ODataParser {
    /// The deepest filter accepted: at most this many nodes (operators, function calls,
    /// operands) on any path from the root of the tree to a leaf, and at most this many
    /// parentheses, prefix operators and function calls nested in the text.
    ///
    /// The bound is on the tree, not only on the text, so that every filter the parser accepts
    /// prints (``ODataPrinter``) as text it accepts again: the printed form nests no deeper than
    /// its tree. A chain of `and` / `or` terms counts one level per operator.
    public static let maximumDepth = 64

    /// Parses a `$filter` expression.
    ///
    /// Precedence, loosest first: `or`, `and`, comparisons (`eq ne gt ge lt le`), `add sub`,
    /// `mul div mod`, then `not` and unary `-`. Literals: `'text'` (`''` escapes a quote), integers
    /// (optional `L`), reals (optional exponent and `f`/`m`/`d`), `true`, `false`, `null`,
    /// `datetime'…'`, `datetimeoffset'…'`.
    ///
    /// - Throws: ``QueryError`` with a one-line message; for a filter deeper than
    ///   ``maximumDepth``, "the filter is nested too deeply".
    public static func parseFilter(_ text: String) throws(QueryError) -> FilterExpression {
        var parser = try Parser(text)
        let parsed = try parser.orExpression(depth: 0)
        guard parser.token == .end else { throw QueryError("unexpected text at position \(parser.lexer.position)") }
        return parsed.expression
    }

    /// Parses `$orderby`: comma-separated column names, each optionally `asc` or `desc`.
    public static func parseOrderBy(_ text: String) throws(QueryError) -> [OrderBy] {
        try text.split(separator: ",", omittingEmptySubsequences: false).map { (term) throws(QueryError) -> OrderBy in
            let words = term.split(separator: " ", omittingEmptySubsequences: true)
            guard let name = words.first, words.count <= 2, isName(name) else {
                throw QueryError("invalid $orderby term '\(term.prefix(64))'")
            }
            switch words.count == 2 ? words[1].lowercased() : "asc" {
            case "asc": return OrderBy(String(name), ascending: true)
            case "desc": return OrderBy(String(name), ascending: false)
            default: throw QueryError("invalid $orderby direction '\(words[1].prefix(16))'")
            }
        }
    }

    /// Parses `$select`: comma-separated column names (`*` or empty means every column).
    public static func parseSelect(_ text: String) throws(QueryError) -> [String] {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed == "*" { return [] }
        return try trimmed.split(separator: ",", omittingEmptySubsequences: false).map { (raw) throws(QueryError) -> String in
            let name = raw.trimmingCharacters(in: .whitespaces)
            guard isName(Substring(name)) else { throw QueryError("invalid $select column '\(name.prefix(64))'") }
            return name
        }
    }

    /// A query request parsed from its query items.
    public struct Request: Sendable, Hashable {
        /// The table and the query options.
        public var query: QueryDescription
        /// Whether `__includeDeleted` was present (its value is not looked at, as in G2 servers).
        public var includeDeleted: Bool
    }

    /// Parses the query items of `GET /tables/{table}`. Unknown parameters are ignored.
    public static func parseRequest(table: String, queryItems: [(name: String, value: String)]) throws(QueryError) -> Request {
        var query = QueryDescription(table: table)
        var includeDeleted = false
        for (name, value) in queryItems {
            switch name {
            case "$filter": query.filter = try parseFilter(value)
            case "$orderby": query.orderBy = try parseOrderBy(value)
            case "$select": query.selection = try parseSelect(value)
            case "$top": query.top = try count(value, "$top")
            case "$skip": query.skip = try count(value, "$skip")
            case "$inlinecount":
                switch value {
                case "allpages": query.includeTotalCount = true
                case "none": query.includeTotalCount = false
                default: throw QueryError("$inlinecount must be 'allpages' or 'none'")
                }
            default:
                if name.lowercased() == WireHeader.includeDeleted.lowercased() { includeDeleted = true }
            }
        }
        return Request(query: query, includeDeleted: includeDeleted)
    }

    static func count(_ text: String, _ option: String) throws(QueryError) -> Int {
        guard let n = Int(text), n >= 0, n <= Int(Int32.max) else {
            throw QueryError("\(option) must be a non-negative integer")
        }
        return n
    }

    /// Whether `text` is a plain name: a letter or `_`, then letters, digits or `_`, at most 128.
    @inlinable public static func isName<S: StringProtocol>(_ text: S) -> Bool {
        // Every character a name may have is ASCII, one UTF-8 byte: the bytes are checked.
        // (Inlinable: the server checks every property of every write, a String each time.)
        let utf8 = text.utf8
        guard let first = utf8.first, isNameStart(first), utf8.count <= 128 else { return false }
        return utf8.allSatisfy(isNamePart)
    }

    /// Whether `byte` may begin a name: an ASCII letter or `_`.
    @inlinable static func isNameStart(_ byte: UInt8) -> Bool {
        // `| 0x20` lowers an ASCII capital and maps no other byte into `a`...`z`.
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || byte == UInt8(ascii: "_")
    }

    /// Whether `byte` may continue a name: an ASCII letter, digit or `_`.
    @inlinable static func isNamePart(_ byte: UInt8) -> Bool {
        isNameStart(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// An expression and its height: the number of nodes on the longest path from it to a leaf.
private struct Parsed {
    let expression: FilterExpression
    let height: Int

    /// A leaf: a literal or a member.
    init(leaf expression: FilterExpression) {
        self.expression = expression
        self.height = 1
    }

    /// A node over `children`, refused when it makes the tree deeper than the limit.
    init(_ expression: FilterExpression, over children: [Parsed]) throws(QueryError) {
        self.expression = expression
        self.height = 1 + children.reduce(0) { max($0, $1.height) }
        guard height <= ODataParser.maximumDepth else { throw QueryError("the filter is nested too deeply") }
    }
}

/// Recursive descent over the tokens, with a bound on the recursion (parentheses, prefix
/// operators, calls) and on the height of the tree built.
private struct Parser {
    var lexer: ODataLexer
    var token: ODataToken

    init(_ text: String) throws(QueryError) {
        lexer = try ODataLexer(text)
        token = try lexer.next()
    }

    mutating func advance() throws(QueryError) { token = try lexer.next() }

    mutating func keyword(_ words: [String]) throws(QueryError) -> String? {
        guard case .identifier(let word) = token, words.contains(word) else { return nil }
        try advance()
        return word
    }

    /// Each parenthesis, unary operator or function call is one level; the bound keeps the
    /// recursion far from the stack's end.
    func checkDepth(_ depth: Int) throws(QueryError) {
        guard depth < ODataParser.maximumDepth else { throw QueryError("the filter is nested too deeply") }
    }

    /// `lhs op rhs`, within the height limit.
    func binary(_ op: BinaryOperator, _ lhs: Parsed, _ rhs: Parsed) throws(QueryError) -> Parsed {
        try Parsed(.binary(op, lhs.expression, rhs.expression), over: [lhs, rhs])
    }

    mutating func orExpression(depth: Int) throws(QueryError) -> Parsed {
        try checkDepth(depth)
        var lhs = try andExpression(depth: depth)
        while try keyword(["or"]) != nil { lhs = try binary(.or, lhs, try andExpression(depth: depth)) }
        return lhs
    }

    mutating func andExpression(depth: Int) throws(QueryError) -> Parsed {
        var lhs = try comparison(depth: depth)
        while try keyword(["and"]) != nil { lhs = try binary(.and, lhs, try comparison(depth: depth)) }
        return lhs
    }

    mutating func comparison(depth: Int) throws(QueryError) -> Parsed {
        var lhs = try additive(depth: depth)
        while let word = try keyword(["eq", "ne", "gt", "ge", "lt", "le"]), let op = BinaryOperator(rawValue: word) {
            lhs = try binary(op, lhs, try additive(depth: depth))
        }
        return lhs
    }

    mutating func additive(depth: Int) throws(QueryError) -> Parsed {
        var lhs = try multiplicative(depth: depth)
        while let word = try keyword(["add", "sub"]), let op = BinaryOperator(rawValue: word) {
            lhs = try binary(op, lhs, try multiplicative(depth: depth))
        }
        return lhs
    }

    mutating func multiplicative(depth: Int) throws(QueryError) -> Parsed {
        var lhs = try unary(depth: depth)
        while let word = try keyword(["mul", "div", "mod"]), let op = BinaryOperator(rawValue: word) {
            lhs = try binary(op, lhs, try unary(depth: depth))
        }
        return lhs
    }

    mutating func unary(depth: Int) throws(QueryError) -> Parsed {
        try checkDepth(depth)
        if try keyword(["not"]) != nil {
            let operand = try unary(depth: depth + 1)
            return try Parsed(.unary(.not, operand.expression), over: [operand])
        }
        if token == .minus {
            try advance()
            let operand = try unary(depth: depth + 1)
            return try Parsed(.unary(.negate, operand.expression), over: [operand])
        }
        return try primary(depth: depth)
    }

    mutating func primary(depth: Int) throws(QueryError) -> Parsed {
        try checkDepth(depth)
        switch token {
        case .openParen:
            try advance()
            let inner = try orExpression(depth: depth + 1)
            guard token == .closeParen else { throw QueryError("missing ')' at position \(lexer.position)") }
            try advance()
            return inner
        case .string(let s):
            try advance()
            return Parsed(leaf: .literal(.string(s)))
        case .int(let i):
            try advance()
            return Parsed(leaf: .literal(.int(i)))
        case .double(let d):
            try advance()
            return Parsed(leaf: .literal(.double(d)))
        case .date(let d):
            try advance()
            return Parsed(leaf: .literal(.date(d)))
        case .identifier(let word):
            try advance()
            switch word {
            case "true": return Parsed(leaf: .literal(.bool(true)))
            case "false": return Parsed(leaf: .literal(.bool(false)))
            case "null": return Parsed(leaf: .literal(.null))
            default: break
            }
            guard token == .openParen else { return Parsed(leaf: .member(word)) }
            guard let function = FilterFunction(rawValue: word) else { throw QueryError("unknown function '\(word.prefix(64))'") }
            try advance()
            var arguments: [Parsed] = []
            if token != .closeParen {
                arguments.append(try orExpression(depth: depth + 1))
                while token == .comma {
                    try advance()
                    arguments.append(try orExpression(depth: depth + 1))
                }
            }
            guard token == .closeParen else { throw QueryError("missing ')' after the arguments of \(word)") }
            try advance()
            guard function.arity.contains(arguments.count) else {
                throw QueryError("\(word) does not take \(arguments.count) argument\(arguments.count == 1 ? "" : "s")")
            }
            return try Parsed(.function(function, arguments.map(\.expression)), over: arguments)
        case .end: throw QueryError("the expression ends too early")
        default: throw QueryError("unexpected token at position \(lexer.position)")
        }
    }
}
