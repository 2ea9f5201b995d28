import CipherSync
import Foundation

/// A query's filter evaluated on items in memory, with SQL's rules: a comparison with `null` is
/// unknown (and a row passes only when the filter is true), `eq null` / `ne null` test for
/// `null`, the `id` compares without regard to ASCII case, text compares code point by code point.
struct MemoryFilter {
    let expression: FilterExpression

    init(_ expression: FilterExpression) {
        self.expression = expression
    }

    func matches(_ item: JSONObject) throws -> Bool {
        try Self.value(expression, item) == .bool(true)
    }

    /// Sorts items by the terms in order (`null` first when ascending, as SQLite does).
    static func sort(_ items: inout [JSONObject], by terms: [OrderBy]) throws {
        try items.sort { a, b in
            for term in terms {
                let (x, y) = (property(term.member, of: a), property(term.member, of: b))
                let order = compare(x, y, caseless: folded(term.member) == "id")
                if order == .orderedSame { continue }
                return term.ascending ? order == .orderedAscending : order == .orderedDescending
            }
            return false
        }
    }

    /// A property by its name, whatever the ASCII case; `null` when the item lacks it.
    static func property(_ name: String, of item: JSONObject) -> JSONValue {
        if let value = item[name] { return value }
        let key = folded(name)
        return item.first { folded($0.key) == key }?.value ?? .null
    }

    private static func value(_ expression: FilterExpression, _ item: JSONObject) throws -> JSONValue {
        switch expression {
        case .literal(let literal): return literalValue(literal)
        case .member(let name): return property(name, of: item)
        case .unary(.not, let operand):
            let value = try value(operand, item)
            return value.boolValue.map { .bool(!$0) } ?? .null
        case .unary(.negate, let operand):
            switch try value(operand, item) {
            case .int(let n): return .int(-n)
            case .double(let d): return .double(-d)
            default: return .null
            }
        case .binary(let op, let lhs, let rhs): return try binary(op, lhs, rhs, item)
        case .function(let function, let arguments):
            return try MemoryFunctions.apply(function, try arguments.map { try value($0, item) })
        }
    }

    private static func binary(_ op: BinaryOperator, _ lhs: FilterExpression, _ rhs: FilterExpression, _ item: JSONObject) throws -> JSONValue {
        if op == .eq || op == .ne, lhs == .literal(.null) || rhs == .literal(.null) {
            let other = try value(lhs == .literal(.null) ? rhs : lhs, item)
            return .bool(other.isNull == (op == .eq))
        }
        let (x, y) = (try value(lhs, item), try value(rhs, item))
        switch op {
        case .and:
            if x == .bool(false) || y == .bool(false) { return .bool(false) }
            return x.isNull || y.isNull ? .null : .bool(true)
        case .or:
            if x == .bool(true) || y == .bool(true) { return .bool(true) }
            return x.isNull || y.isNull ? .null : .bool(false)
        case .eq, .ne, .gt, .ge, .lt, .le:
            if x.isNull || y.isNull { return .null }
            let caseless = [lhs, rhs].contains { if case .member(let name) = $0 { folded(name) == "id" } else { false } }
            let order = compare(x, y, caseless: caseless)
            switch op {
            case .eq: return .bool(order == .orderedSame)
            case .ne: return .bool(order != .orderedSame)
            case .gt: return .bool(order == .orderedDescending)
            case .ge: return .bool(order != .orderedAscending)
            case .lt: return .bool(order == .orderedAscending)
            default: return .bool(order != .orderedDescending)
            }
        case .add, .sub, .mul, .div, .mod:
            return arithmetic(op, x, y)
        }
    }

    private static func arithmetic(_ op: BinaryOperator, _ x: JSONValue, _ y: JSONValue) -> JSONValue {
        if case .int(let a) = x, case .int(let b) = y {
            switch op {
            case .add: return .int(a &+ b)
            case .sub: return .int(a &- b)
            case .mul: return .int(a &* b)
            case .div: return b == 0 ? .null : .int(a / b)
            default: return b == 0 ? .null : .int(a % b)
            }
        }
        guard let a = x.doubleValue, let b = y.doubleValue else { return .null }
        switch op {
        case .add: return .double(a + b)
        case .sub: return .double(a - b)
        case .mul: return .double(a * b)
        case .div: return b == 0 ? .null : .double(a / b)
        default: return b == 0 ? .null : .double(a.truncatingRemainder(dividingBy: b))
        }
    }

    static func literalValue(_ literal: FilterLiteral) -> JSONValue {
        switch literal {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let n): return .int(n)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .date(let date): return .double(date.timeIntervalSince1970)
        }
    }

    /// Two values in SQLite's order of kinds (null, numbers and Booleans, text); dates written as
    /// text compare with date literals as points in time.
    static func compare(_ x: JSONValue, _ y: JSONValue, caseless: Bool) -> ComparisonResult {
        switch (x, y) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.string(let a), .string(let b)):
            return caseless ? scalarOrder(folded(a), folded(b)) : scalarOrder(a, b)
        case (.string(let text), .double(let seconds)):
            return MemoryFunctions.date(text).map { compareNumbers($0.timeIntervalSince1970, seconds) } ?? .orderedDescending
        case (.double(let seconds), .string(let text)):
            return MemoryFunctions.date(text).map { compareNumbers(seconds, $0.timeIntervalSince1970) } ?? .orderedAscending
        default:
            guard let a = number(x), let b = number(y) else { return number(x) == nil ? .orderedDescending : .orderedAscending }
            return compareNumbers(a, b)
        }
    }

    private static func number(_ value: JSONValue) -> Double? {
        if case .bool(let b) = value { return b ? 1 : 0 }
        return value.doubleValue
    }

    private static func compareNumbers(_ a: Double, _ b: Double) -> ComparisonResult {
        a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
    }

    private static func scalarOrder(_ a: String, _ b: String) -> ComparisonResult {
        if a.unicodeScalars.elementsEqual(b.unicodeScalars) { return .orderedSame }
        return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? .orderedAscending : .orderedDescending
    }
}
