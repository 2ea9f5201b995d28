import Foundation

/// A token of an OData `$filter` / `$orderby` expression.
enum ODataToken: Equatable {
    case identifier(String)
    case string(String)
    case int(Int64)
    case double(Double)
    case date(Date)
    case openParen, closeParen, comma, minus
    case end
}

/// Splits OData expression text into tokens.
struct ODataLexer {
    /// The longest expression accepted.
    static let maximumLength = 8 * 1024

    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ text: String) throws(QueryError) {
        guard text.utf8.count <= Self.maximumLength else { throw QueryError("the expression is too long") }
        scalars = Array(text.unicodeScalars)
    }

    /// Where the next token starts, for messages.
    var position: Int { index }

    mutating func next() throws(QueryError) -> ODataToken {
        while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
        guard index < scalars.count else { return .end }
        let c = scalars[index]
        switch c {
        case "(":
            index += 1
            return .openParen
        case ")":
            index += 1
            return .closeParen
        case ",":
            index += 1
            return .comma
        case "'": return .string(try quoted())
        case "-":
            if index + 1 < scalars.count, ("0"..."9").contains(scalars[index + 1]) {
                index += 1
                return try number(negative: true)
            }
            index += 1
            return .minus
        case "0"..."9": return try number(negative: false)
        default:
            guard c.isIdentifierStart else { throw QueryError("unexpected character '\(Character(c))' at position \(index + 1)") }
            let start = index
            while index < scalars.count, scalars[index].isIdentifierPart { index += 1 }
            let word = String(String.UnicodeScalarView(scalars[start..<index]))
            if word == "datetime" || word == "datetimeoffset", index < scalars.count, scalars[index] == "'" {
                let text = try quoted()
                guard let date = WireDate.date(from: text) else { throw QueryError("invalid \(word) literal '\(text.prefix(40))'") }
                return .date(date)
            }
            return .identifier(word)
        }
    }

    private mutating func quoted() throws(QueryError) -> String {
        let start = index
        index += 1
        var text = String.UnicodeScalarView()
        while index < scalars.count {
            if scalars[index] == "'" {
                if index + 1 < scalars.count, scalars[index + 1] == "'" {
                    text.append("'")
                    index += 2
                    continue
                }
                index += 1
                return String(text)
            }
            text.append(scalars[index])
            index += 1
        }
        throw QueryError("unterminated string starting at position \(start + 1)")
    }

    private mutating func number(negative: Bool) throws(QueryError) -> ODataToken {
        let start = index
        var isReal = false
        while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
        if index < scalars.count, scalars[index] == ".", index + 1 < scalars.count, ("0"..."9").contains(scalars[index + 1]) {
            isReal = true
            index += 1
            while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
        }
        if index < scalars.count, scalars[index] == "e" || scalars[index] == "E" {
            var look = index + 1
            if look < scalars.count, scalars[look] == "+" || scalars[look] == "-" { look += 1 }
            if look < scalars.count, ("0"..."9").contains(scalars[look]) {
                isReal = true
                index = look
                while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
            }
        }
        let digits = (negative ? "-" : "") + String(String.UnicodeScalarView(scalars[start..<index]))
        var suffix: Unicode.Scalar?
        if index < scalars.count, "LlFfMmDd".unicodeScalars.contains(scalars[index]) {
            suffix = scalars[index]
            index += 1
        }
        if index < scalars.count, scalars[index].isIdentifierPart {
            throw QueryError("invalid number at position \(start + 1)")
        }
        let wantsReal = isReal || (suffix.map { "FfMmDd".unicodeScalars.contains($0) } ?? false)
        if wantsReal {
            guard let value = Double(digits), value.isFinite else { throw QueryError("invalid number '\(digits.prefix(40))'") }
            return .double(value)
        }
        guard let value = Int64(digits) else { throw QueryError("number out of range '\(digits.prefix(40))'") }
        return .int(value)
    }
}

/// The characters of a name, as ``ODataParser/isName(_:)`` checks them (every one is ASCII).
extension Unicode.Scalar {
    var isIdentifierStart: Bool { isASCII && ODataParser.isNameStart(UInt8(value)) }
    var isIdentifierPart: Bool { isASCII && ODataParser.isNamePart(UInt8(value)) }
}
