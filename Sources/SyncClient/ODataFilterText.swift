import Foundation
import SyncWire

/// TEMPORARY: a minimal G2 `$filter` printer, used only until SyncWire's shared `ODataPrinter`
/// lands on main; then ``QueryItems/filterText(_:)`` calls the shared printer and this file goes.
enum ODataFilterText {
    static func print(_ expression: FilterExpression) -> String {
        switch expression {
        case .literal(let literal): return print(literal)
        case .member(let name): return name
        case .unary(.not, let operand): return "not (\(print(operand)))"
        case .unary(.negate, let operand): return "-(\(print(operand)))"
        case .binary(let op, let lhs, let rhs): return "(\(print(lhs)) \(op.rawValue) \(print(rhs)))"
        case .function(let function, let arguments):
            return "\(function.rawValue)(\(arguments.map(print).joined(separator: ", ")))"
        }
    }

    static func print(_ literal: FilterLiteral) -> String {
        switch literal {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .string(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .date(let d): return "datetimeoffset'\(WireDate.string(from: d))'"
        }
    }
}
