public import Foundation
public import SyncWire

/// A query on one table: filter, order, paging, selection, total count, and extra query-string
/// parameters for the server.
///
/// A value type built fluently; the same query reads the local store (through the store's SQL
/// translation) and the server (printed as OData `$filter` / `$orderby` / `$top` / `$skip`):
///
/// ```swift
/// let open = Query()
///     .where(Field("complete") == false && Field("text").startsWith("Buy"))
///     .orderBy("createdAt", ascending: false)
///     .top(20)
/// let items = try await todo.read(open).items
/// ```
///
/// The OData part is a `QueryOptions` (`query.options.filter`, `query.options.top`; for a pull,
/// `top` is the total number of items wanted).
public struct Query: Sendable, Hashable {
    /// What to filter, order, page and select, and whether to count.
    public var options: QueryOptions
    /// Extra query-string parameters sent to the server (online reads and pulls).
    public var parameters: [String: String]

    /// Creates a query; by default every row of the table, with no extra parameters.
    /// - Parameters:
    ///   - options: the filter, order, paging, selection and total count.
    ///   - parameters: extra query-string parameters for the server.
    public init(_ options: QueryOptions = QueryOptions(), parameters: [String: String] = [:]) {
        self.options = options
        self.parameters = parameters
    }

    /// The query with `predicate` added to its filter (combined with `and`).
    public func `where`(_ predicate: Predicate) -> Query {
        var copy = self
        copy.options.filter = options.filter.map { .binary(.and, $0, predicate.expression) } ?? predicate.expression
        return copy
    }

    /// The query with one more sort term.
    public func orderBy(_ field: String, ascending: Bool = true) -> Query {
        var copy = self
        copy.options.orderBy.append(OrderBy(field, ascending: ascending))
        return copy
    }

    /// The query limited to `count` rows.
    public func top(_ count: Int) -> Query {
        var copy = self
        copy.options.top = count
        return copy
    }

    /// The query skipping its first `count` rows.
    public func skip(_ count: Int) -> Query {
        var copy = self
        copy.options.skip = count
        return copy
    }

    /// The query returning only these columns.
    public func select(_ fields: String...) -> Query {
        var copy = self
        copy.options.selection = fields
        return copy
    }

    /// The query asking for the total count of matching rows.
    public func includingTotalCount(_ include: Bool = true) -> Query {
        var copy = self
        copy.options.includeTotalCount = include
        return copy
    }

    /// The query with an extra query-string parameter for the server.
    public func parameter(_ name: String, _ value: String) -> Query {
        var copy = self
        copy.parameters[name] = value
        return copy
    }

    /// The shared query model for `table` (what the store and the OData printer consume).
    /// - Parameter table: the table the query reads.
    /// - Returns: the table with this query's options (the parameters are not part of it).
    public func description(table: String) -> QueryDescription {
        QueryDescription(table: table, options: options)
    }
}

/// A column named in a query predicate: `Field("text") == "milk"`.
public struct Field: Sendable, Hashable {
    /// The column name.
    public let name: String

    /// Names a column.
    public init(_ name: String) { self.name = name }

    var expression: FilterExpression { .member(name) }

    /// `startswith(field, prefix)`.
    public func startsWith(_ prefix: String) -> Predicate {
        Predicate(.function(.startswith, [expression, .literal(.string(prefix))]))
    }

    /// `endswith(field, suffix)`.
    public func endsWith(_ suffix: String) -> Predicate {
        Predicate(.function(.endswith, [expression, .literal(.string(suffix))]))
    }

    /// `substringof(text, field)`: whether the field contains `text`.
    public func contains(_ text: String) -> Predicate {
        Predicate(.function(.substringof, [.literal(.string(text)), expression]))
    }

    /// `field eq null`.
    public var isNull: Predicate { Predicate(.binary(.eq, expression, .literal(.null))) }

    /// `field ne null`.
    public var isNotNull: Predicate { Predicate(.binary(.ne, expression, .literal(.null))) }
}

/// A Boolean condition of a query, built from ``Field``s with comparison operators and combined
/// with `&&`, `||` and `!`.
public struct Predicate: Sendable, Hashable {
    /// The filter tree.
    public let expression: FilterExpression

    /// Wraps a filter tree (for conditions the operators do not cover).
    public init(_ expression: FilterExpression) { self.expression = expression }

    /// Both conditions.
    public static func && (lhs: Predicate, rhs: Predicate) -> Predicate {
        Predicate(.binary(.and, lhs.expression, rhs.expression))
    }

    /// Either condition.
    public static func || (lhs: Predicate, rhs: Predicate) -> Predicate {
        Predicate(.binary(.or, lhs.expression, rhs.expression))
    }

    /// The negation.
    public static prefix func ! (operand: Predicate) -> Predicate {
        Predicate(.unary(.not, operand.expression))
    }
}

/// A value a ``Field`` can be compared with.
public protocol FilterValue: Sendable {
    /// The literal of the value.
    var filterLiteral: FilterLiteral { get }
}

extension String: FilterValue {
    /// The value as a filter literal.
    public var filterLiteral: FilterLiteral { .string(self) }
}
extension Int: FilterValue {
    /// The value as a filter literal.
    public var filterLiteral: FilterLiteral { .int(Int64(self)) }
}
extension Int64: FilterValue {
    /// The value as a filter literal.
    public var filterLiteral: FilterLiteral { .int(self) }
}
extension Double: FilterValue {
    /// The value as a filter literal.
    public var filterLiteral: FilterLiteral { .double(self) }
}
extension Bool: FilterValue {
    /// The value as a filter literal.
    public var filterLiteral: FilterLiteral { .bool(self) }
}
extension Date: FilterValue {
    /// The value as a filter literal.
    public var filterLiteral: FilterLiteral { .date(self) }
}

extension Field {
    private func compare(_ op: BinaryOperator, _ value: some FilterValue) -> Predicate {
        Predicate(.binary(op, expression, .literal(value.filterLiteral)))
    }

    /// `field eq value`.
    public static func == (field: Field, value: some FilterValue) -> Predicate { field.compare(.eq, value) }
    /// `field ne value`.
    public static func != (field: Field, value: some FilterValue) -> Predicate { field.compare(.ne, value) }
    /// `field gt value`.
    public static func > (field: Field, value: some FilterValue) -> Predicate { field.compare(.gt, value) }
    /// `field ge value`.
    public static func >= (field: Field, value: some FilterValue) -> Predicate { field.compare(.ge, value) }
    /// `field lt value`.
    public static func < (field: Field, value: some FilterValue) -> Predicate { field.compare(.lt, value) }
    /// `field le value`.
    public static func <= (field: Field, value: some FilterValue) -> Predicate { field.compare(.le, value) }
}
