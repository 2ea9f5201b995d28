public import Foundation

/// Prints filter trees as OData text that ``ODataParser`` reads back to the same tree.
///
/// Nested binary expressions are parenthesised, as the Mobile Apps SDKs do:
/// `(text eq 'MATCH') and (updatedAt ge datetimeoffset'1970-01-01T00:00:00.000Z')`. The operand
/// of `not` and `-` is parenthesised only when it is a binary expression (`not done`,
/// `not (n gt 2)`), so the text never nests deeper than the tree: whatever the parser accepted
/// (``ODataParser/maximumDepth``) prints as text it accepts.
public enum ODataPrinter {
    /// The OData text of `expression`.
    public static func filter(_ expression: FilterExpression) -> String {
        string(expression, nested: false)
    }

    /// The `$orderby` text of `terms`.
    public static func orderBy(_ terms: [OrderBy]) -> String {
        terms.map { "\($0.member) \($0.ascending ? "asc" : "desc")" }.joined(separator: ",")
    }

    private static func string(_ expression: FilterExpression, nested: Bool) -> String {
        switch expression {
        case .literal(let literal): return string(literal)
        case .member(let name): return name
        case .unary(let op, let operand):
            let text = string(operand, nested: true)
            switch op {
            case .not: return "not " + text
            // `-5` would read as the literal −5, not as the negation of 5.
            case .negate: return text.unicodeScalars.first.map { ("0"..."9").contains($0) } == true ? "- " + text : "-" + text
            }
        case .binary(let op, let lhs, let rhs):
            let text = "\(string(lhs, nested: true)) \(op.rawValue) \(string(rhs, nested: true))"
            return nested ? "(\(text))" : text
        case .function(let function, let arguments):
            return "\(function.rawValue)(\(arguments.map { string($0, nested: false) }.joined(separator: ",")))"
        }
    }

    private static func string(_ literal: FilterLiteral) -> String {
        switch literal {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d):
            let text = "\(d)"
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .string(let s): return DelimitedText.quote(s, with: "'")
        case .date(let date): return "datetimeoffset'\(WireDate.string(from: date))'"
        }
    }
}

/// The query string of a request for a ``QueryDescription``.
public enum ODataQuery {
    /// The query items (`$filter`, `$orderby`, `$skip`, `$top`, `$select`, `$inlinecount`), in
    /// that order, with unencoded values.
    public static func queryItems(for query: QueryDescription) -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        if let filter = query.filter { items.append(("$filter", ODataPrinter.filter(filter))) }
        if !query.orderBy.isEmpty { items.append(("$orderby", ODataPrinter.orderBy(query.orderBy))) }
        if let skip = query.skip { items.append(("$skip", String(skip))) }
        if let top = query.top { items.append(("$top", String(top))) }
        if !query.selection.isEmpty { items.append(("$select", query.selection.joined(separator: ","))) }
        if query.includeTotalCount { items.append(("$inlinecount", "allpages")) }
        return items
    }

    /// Percent-encodes a query name or value (everything but unreserved characters).
    public static func encode(_ text: String) -> String {
        PercentEncoding.encode(text, keeping: UInt8(ascii: "$"))
    }

    /// `name=value&…`, percent-encoded.
    public static func string(_ items: [(name: String, value: String)]) -> String {
        items.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }

    /// The filter of an incremental pull: the user's filter (if any) AND `updatedAt ge <since>`,
    /// printed as the Mobile Apps SDKs print it.
    public static func incrementalFilter(_ user: FilterExpression?, since: Date) -> FilterExpression {
        let delta = FilterExpression.binary(.ge, .member(SystemProperty.updatedAt), .literal(.date(since)))
        guard let user else { return delta }
        return .binary(.and, user, delta)
    }
}
