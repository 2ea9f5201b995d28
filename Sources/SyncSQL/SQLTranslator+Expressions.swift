import SyncWire

extension SQLTranslator {
    func translate(_ expression: FilterExpression, depth: Int) throws(QueryError) -> SQLFragment {
        guard depth < Self.maximumDepth else { throw QueryError("the filter is nested too deeply") }
        switch expression {
        case .literal(let literal):
            return self.literal(literal)
        case .member(let name):
            return try column(name)
        case .unary(.not, let operand):
            return "NOT \(try translate(operand, depth: depth + 1))"
        case .unary(.negate, let operand):
            return "-\(try translate(operand, depth: depth + 1))"
        case .binary(let op, let lhs, let rhs):
            return try binary(op, lhs, rhs, depth: depth)
        case .function(let function, let arguments):
            guard function.arity.contains(arguments.count) else {
                throw QueryError("\(function.rawValue) takes \(function.arity.lowerBound == function.arity.upperBound ? "\(function.arity.lowerBound)" : "\(function.arity.lowerBound) or \(function.arity.upperBound)") arguments")
            }
            var translated: [SQLFragment] = []
            for argument in arguments { translated.append(try translate(argument, depth: depth + 1)) }
            return dialect.call(function, translated)
        }
    }

    /// A constant: `NULL`, the dialect's Boolean, or a bound value (a point in time as the
    /// fixed-width ISO 8601 text it is stored as).
    func literal(_ literal: FilterLiteral) -> SQLFragment {
        switch literal {
        case .null: return "NULL"
        case .bool(let b): return dialect.boolean(b)
        case .int(let i): return .bind(.integer(i))
        case .double(let d): return .bind(.real(d))
        case .string(let s): return .bind(.text(s))
        case .date(let date): return .bind(.text(WireDate.string(from: date)))
        }
    }

    private func binary(_ op: BinaryOperator, _ lhs: FilterExpression, _ rhs: FilterExpression, depth: Int) throws(QueryError)
        -> SQLFragment
    {
        // `x eq null` / `x ne null` are IS NULL / IS NOT NULL.
        if op == .eq || op == .ne {
            let other: FilterExpression? = rhs == .literal(.null) ? lhs : (lhs == .literal(.null) ? rhs : nil)
            if let other {
                return "\(try translate(other, depth: depth + 1)) IS \(inline: SQLFragment(raw: op == .eq ? "" : "NOT "))NULL"
            }
        }
        var left = try translate(lhs, depth: depth + 1)
        var right = try translate(rhs, depth: depth + 1)
        if [.eq, .ne, .gt, .ge, .lt, .le].contains(op), isID(lhs) || isID(rhs) {
            // Ids are one item whatever their ASCII case: compare them as the dialect folds them.
            left = dialect.foldedID(left)
            right = dialect.foldedID(right)
        }
        let symbol: String
        switch op {
        case .or: symbol = "OR"
        case .and: symbol = "AND"
        case .eq: symbol = "="
        case .ne: symbol = "<>"
        case .gt: symbol = ">"
        case .ge: symbol = ">="
        case .lt: symbol = "<"
        case .le: symbol = "<="
        case .add: symbol = "+"
        case .sub: symbol = "-"
        case .mul: symbol = "*"
        case .div: symbol = "/"
        case .mod: symbol = "%"
        }
        return "\(left) \(inline: SQLFragment(raw: symbol)) \(right)"
    }

    /// Whether `expression` is the `id` column.
    private func isID(_ expression: FilterExpression) -> Bool {
        guard case .member(let name) = expression else { return false }
        return ColumnKey(name) == ColumnKey(SystemProperty.id)
    }
}
