public import Foundation

/// A filter expression: the tree behind an OData `$filter` and behind a local query.
///
/// The same tree is printed as OData for the server (``ODataPrinter``), parsed from a request
/// on the server (``ODataParser``) and translated into a database query by both stores: one
/// model, three views.
public indirect enum FilterExpression: Sendable, Hashable {
    case literal(FilterLiteral)
    /// A column (member) name.
    case member(String)
    case unary(UnaryOperator, FilterExpression)
    case binary(BinaryOperator, FilterExpression, FilterExpression)
    case function(FilterFunction, [FilterExpression])
}

/// A constant in a filter.
public enum FilterLiteral: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    /// A point in time (`datetime'…'` / `datetimeoffset'…'` in OData), millisecond precision.
    case date(Date)
}

/// Prefix operators.
public enum UnaryOperator: String, Sendable, Hashable, CaseIterable {
    case not
    case negate = "-"
}

/// Infix operators, from the loosest to the tightest binding group.
public enum BinaryOperator: String, Sendable, Hashable, CaseIterable {
    case or, and
    case eq, ne, gt, ge, lt, le
    case add, sub
    case mul, div, mod

    /// Binding strength: a higher number binds tighter.
    public var precedence: Int {
        switch self {
        case .or: return 1
        case .and: return 2
        case .eq, .ne, .gt, .ge, .lt, .le: return 3
        case .add, .sub: return 4
        case .mul, .div, .mod: return 5
        }
    }
}

/// The functions of the G2 `$filter` grammar.
public enum FilterFunction: String, Sendable, Hashable, CaseIterable {
    // string
    case substringof, contains, startswith, endswith, concat, indexof, replace, substring
    case tolower, toupper, length, trim
    // date
    case year, month, day, hour, minute, second
    // math
    case floor, ceiling, round

    /// The number of arguments the function accepts.
    public var arity: ClosedRange<Int> {
        switch self {
        case .substringof, .contains, .startswith, .endswith, .concat, .indexof: return 2...2
        case .replace: return 3...3
        case .substring: return 2...3
        default: return 1...1
        }
    }
}

/// One `$orderby` term.
public struct OrderBy: Sendable, Hashable {
    /// The column to sort by.
    public var member: String
    /// Ascending (`asc`, the default) or descending (`desc`).
    public var ascending: Bool

    /// An ordering.
    ///
    /// - Parameters:
    ///   - member: The column to sort by.
    ///   - ascending: Ascending (the default) or descending.
    public init(_ member: String, ascending: Bool = true) {
        self.member = member
        self.ascending = ascending
    }
}

/// The system query options of a table read: what to filter, order, page and select, and
/// whether to count (`$filter`, `$orderby`, `$top`, `$skip`, `$select`, `$inlinecount`).
///
/// The part of a query that does not depend on the table: ``QueryDescription`` adds the table,
/// the client's `Query` adds extra query-string parameters. `top` and `skip` are `nil` when unset.
public struct QueryOptions: Sendable, Hashable {
    /// The filter, or `nil` for all rows.
    public var filter: FilterExpression?
    /// The sort order, applied term by term.
    public var orderBy: [OrderBy]
    /// The maximum number of rows, or `nil` for no limit.
    public var top: Int?
    /// The number of rows to skip, or `nil`.
    public var skip: Int?
    /// The columns to return, or empty for every column.
    public var selection: [String]
    /// Whether the result carries the total count of matching rows (ignoring top and skip).
    public var includeTotalCount: Bool

    /// Creates options; every part is optional (no filter, no order, every row and column).
    public init(
        filter: FilterExpression? = nil, orderBy: [OrderBy] = [], top: Int? = nil, skip: Int? = nil,
        selection: [String] = [], includeTotalCount: Bool = false
    ) {
        self.filter = filter
        self.orderBy = orderBy
        self.top = top
        self.skip = skip
        self.selection = selection
        self.includeTotalCount = includeTotalCount
    }
}

/// A query on one table: the table and its ``QueryOptions``.
///
/// It describes a read of the local store as well as a request to the server. The options read
/// and write as members of the description (`query.filter`, `query.top`).
@dynamicMemberLookup
public struct QueryDescription: Sendable, Hashable {
    /// The table name.
    public var table: String
    /// What to filter, order, page and select.
    public var options: QueryOptions

    /// Creates a query of `table` with these options.
    public init(table: String, options: QueryOptions) {
        self.table = table
        self.options = options
    }

    /// Creates a query of `table`; every option is optional (see ``QueryOptions``).
    public init(
        table: String, filter: FilterExpression? = nil, orderBy: [OrderBy] = [], top: Int? = nil,
        skip: Int? = nil, selection: [String] = [], includeTotalCount: Bool = false
    ) {
        self.init(
            table: table,
            options: QueryOptions(
                filter: filter, orderBy: orderBy, top: top, skip: skip, selection: selection,
                includeTotalCount: includeTotalCount))
    }

    /// An option of the query, such as `filter` or `top`.
    public subscript<Value>(dynamicMember option: WritableKeyPath<QueryOptions, Value>) -> Value {
        get { options[keyPath: option] }
        set { options[keyPath: option] = newValue }
    }
}

/// The rows a query returned, and the total count when it was asked for.
public struct QueryResult: Sendable, Hashable {
    /// The rows, in the query's order.
    public var items: [JSONObject]
    /// The number of matching rows ignoring top and skip, or `nil` when not requested.
    public var totalCount: Int?

    /// A result.
    ///
    /// - Parameters:
    ///   - items: The rows.
    ///   - totalCount: The total count, when it was asked for.
    public init(items: [JSONObject], totalCount: Int? = nil) {
        self.items = items
        self.totalCount = totalCount
    }
}
