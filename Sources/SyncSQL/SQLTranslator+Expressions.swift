import SyncWire

extension SQLTranslator {
    /// The SQL of `expression`, `depth` levels below the root, within the size limits (checked
    /// at every node, so an operand repeated at every level fails early, not after growing).
    func translate(_ expression: FilterExpression, depth: Int) throws(QueryError) -> SQLFragment {
        guard depth < Self.maximumDepth else { throw QueryError("the filter is nested too deeply") }
        return try checkSize(node(expression, depth: depth))
    }

    /// `fragment`, when it is within ``maximumNesting``, ``maximumParameters`` and
    /// ``maximumLength``.
    func checkSize(_ fragment: SQLFragment) throws(QueryError) -> SQLFragment {
        guard fragment.size.nesting <= Self.maximumNesting else { throw QueryError("the filter is nested too deeply") }
        guard fragment.size.parameters <= Self.maximumParameters else {
            throw QueryError("the filter has too many values (at most \(Self.maximumParameters) once written as SQL)")
        }
        guard fragment.size.length <= Self.maximumLength else { throw QueryError("the filter is too large once written as SQL") }
        return fragment
    }

    private func node(_ expression: FilterExpression, depth: Int) throws(QueryError) -> SQLFragment {
        switch expression {
        case .literal(let literal):
            return self.literal(literal)
        case .member(let name):
            return try column(name)
        case .unary(.not, let operand):
            return "NOT \(try translate(operand, depth: depth + 1))"
        case .unary(.negate, let operand):
            return "-\(try translate(operand, depth: depth + 1))"
        case .binary(let op, let lhs, let rhs) where op == .and || op == .or:
            return try run(op, lhs, rhs, depth: depth)
        case .binary(let op, let lhs, let rhs):
            return try binary(op, lhs, rhs, depth: depth)
        case .function(let function, let arguments):
            guard function.arity.contains(arguments.count) else {
                throw QueryError(
                    "\(function.rawValue) takes \(function.arity.lowerBound == function.arity.upperBound ? "\(function.arity.lowerBound)" : "\(function.arity.lowerBound) or \(function.arity.upperBound)") arguments"
                )
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

    /// A run of `and` (or of `or`), which the parser builds left-nested (`(a and b) and c`),
    /// written flat, `(a) AND (b) AND (c)`: the same meaning (both are associative, in SQL's
    /// three-valued logic too) with no nesting per term, so a long list fits the engine's parser.
    private func run(
        _ op: BinaryOperator, _ lhs: FilterExpression, _ rhs: FilterExpression, depth: Int
    ) throws(QueryError)
        -> SQLFragment
    {
        var terms = [rhs]
        var rest = lhs
        while case .binary(let inner, let left, let right) = rest, inner == op {
            terms.append(right)
            rest = left
        }
        terms.append(rest)
        var parts: [SQLFragment] = []
        for term in terms.reversed() { parts.append("\(try translate(term, depth: depth + 1))") }
        return .joined(parts, separator: op == .and ? " AND " : " OR ")
    }

    private func binary(
        _ op: BinaryOperator, _ lhs: FilterExpression, _ rhs: FilterExpression, depth: Int
    ) throws(QueryError)
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
        if [.add, .sub, .mul, .div, .mod].contains(op) { return dialect.arithmetic(op, left, right) }
        return "\(left) \(inline: SQLFragment(raw: op.sqlSymbol)) \(right)"
    }

    /// Whether `expression` is the `id` column.
    private func isID(_ expression: FilterExpression) -> Bool {
        guard case .member(let name) = expression else { return false }
        return ColumnKey(name) == ColumnKey(SystemProperty.id)
    }
}
