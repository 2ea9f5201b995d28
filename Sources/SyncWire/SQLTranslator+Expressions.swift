import Foundation

extension SQLTranslator {
    func translate(_ expression: FilterExpression, depth: Int) throws(QueryError) -> SQLStatement {
        guard depth < Self.maximumDepth else { throw QueryError("the filter is nested too deeply") }
        switch expression {
        case .literal(let literal):
            return Self.literal(literal)
        case .member(let name):
            return SQLStatement(try column(name))
        case .unary(.not, let operand):
            let inner = try translate(operand, depth: depth + 1)
            return SQLStatement("NOT (\(inner.sql))", inner.arguments)
        case .unary(.negate, let operand):
            let inner = try translate(operand, depth: depth + 1)
            return SQLStatement("-(\(inner.sql))", inner.arguments)
        case .binary(let op, let lhs, let rhs):
            return try binary(op, lhs, rhs, depth: depth)
        case .function(let function, let arguments):
            guard function.arity.contains(arguments.count) else {
                throw QueryError("\(function.rawValue) takes \(function.arity.lowerBound == function.arity.upperBound ? "\(function.arity.lowerBound)" : "\(function.arity.lowerBound) or \(function.arity.upperBound)") arguments")
            }
            var translated: [SQLStatement] = []
            for argument in arguments { translated.append(try translate(argument, depth: depth + 1)) }
            return Self.call(function, translated)
        }
    }

    static func literal(_ literal: FilterLiteral) -> SQLStatement {
        switch literal {
        case .null: return SQLStatement("NULL")
        case .bool(let b): return SQLStatement("?", [.integer(b ? 1 : 0)])
        case .int(let i): return SQLStatement("?", [.integer(i)])
        case .double(let d): return SQLStatement("?", [.real(d)])
        case .string(let s): return SQLStatement("?", [.text(s)])
        case .date(let date): return SQLStatement("?", [.text(WireDate.string(from: date))])
        }
    }

    private func binary(_ op: BinaryOperator, _ lhs: FilterExpression, _ rhs: FilterExpression, depth: Int) throws(QueryError)
        -> SQLStatement
    {
        // `x eq null` / `x ne null` are IS NULL / IS NOT NULL.
        if op == .eq || op == .ne {
            let other: FilterExpression? = rhs == .literal(.null) ? lhs : (lhs == .literal(.null) ? rhs : nil)
            if let other {
                let inner = try translate(other, depth: depth + 1)
                return SQLStatement("(\(inner.sql)) IS \(op == .eq ? "" : "NOT ")NULL", inner.arguments)
            }
        }
        let left = try translate(lhs, depth: depth + 1)
        let right = try translate(rhs, depth: depth + 1)
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
        return SQLStatement("(\(left.sql)) \(symbol) (\(right.sql))", left.arguments + right.arguments)
    }

    /// A function call; arguments that appear twice in the SQL are bound twice.
    static func call(_ function: FilterFunction, _ a: [SQLStatement]) -> SQLStatement {
        /// Fills `$0`, `$1`… in `template` with the argument SQL, binding each use in order.
        func make(_ template: String) -> SQLStatement {
            var sql = ""
            var arguments: [SQLArgument] = []
            var rest = Substring(template)
            while let marker = rest.firstIndex(of: "$") {
                sql += rest[..<marker]
                let digit = rest.index(after: marker)
                let index = Int(String(rest[digit])) ?? 0
                sql += "(\(a[index].sql))"
                arguments += a[index].arguments
                rest = rest[rest.index(after: digit)...]
            }
            sql += rest
            return SQLStatement(sql, arguments)
        }
        let cast = "CAST($0 AS INTEGER)"
        switch function {
        case .substringof: return make("instr(lower($1), lower($0)) > 0")
        case .contains: return make("instr(lower($0), lower($1)) > 0")
        case .startswith: return make("substr(lower($0), 1, length($1)) = lower($1)")
        case .endswith: return make("(length($1) = 0 OR substr(lower($0), -length($1)) = lower($1))")
        case .concat: return make("$0 || $1")
        case .indexof: return make("instr($0, $1) - 1")
        case .replace: return make("replace($0, $1, $2)")
        case .substring: return a.count == 3 ? make("substr($0, $1 + 1, $2)") : make("substr($0, $1 + 1)")
        case .tolower: return make("lower($0)")
        case .toupper: return make("upper($0)")
        case .length: return make("length($0)")
        case .trim: return make("trim($0)")
        case .year: return make("CAST(strftime('%Y', $0) AS INTEGER)")
        case .month: return make("CAST(strftime('%m', $0) AS INTEGER)")
        case .day: return make("CAST(strftime('%d', $0) AS INTEGER)")
        case .hour: return make("CAST(strftime('%H', $0) AS INTEGER)")
        case .minute: return make("CAST(strftime('%M', $0) AS INTEGER)")
        case .second: return make("CAST(strftime('%S', $0) AS INTEGER)")
        // SQLite 3.15 has no floor()/ceil(): truncate with CAST and step away from zero.
        case .floor: return make("CASE WHEN $0 >= 0 OR $0 = \(cast) THEN \(cast) ELSE \(cast) - 1 END")
        case .ceiling: return make("CASE WHEN $0 <= 0 OR $0 = \(cast) THEN \(cast) ELSE \(cast) + 1 END")
        case .round: return make("round($0)")
        }
    }
}
