/// Strings, numbers and UTF-8 of the strict parser.
extension JSONReader {
    // MARK: strings

    /// A string (at the current `"`): well-formed UTF-8, no raw control characters, valid escapes.
    mutating func string() throws(JSONError) -> String {
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == ASCII.quote {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == ASCII.backslash { return try escapedString(from: start) }
            try advance(over: byte)
        }
        throw JSONError(.unexpectedEnd, at: index)
    }

    /// The rest of a string that has escapes, unescaped into `scratch`; `start` is its first byte.
    private mutating func escapedString(from start: Int) throws(JSONError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var copied = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == ASCII.quote {
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<index]))
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == ASCII.backslash {
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<index]))
                try unescape()
                copied = index
            } else {
                try advance(over: byte)
            }
        }
        throw JSONError(.unexpectedEnd, at: index)
    }

    /// Steps over one unescaped character of a string, starting with `byte`.
    private mutating func advance(over byte: UInt8) throws(JSONError) {
        if byte < 0x20 { throw JSONError(.controlCharacter, at: index) }
        if byte < 0x80 {
            index += 1
        } else {
            guard let length = utf8SequenceLength(at: index) else { throw JSONError(.invalidUTF8, at: index) }
            index += length
        }
    }

    /// One escape sequence (at the current `\`), appended to `scratch` as UTF-8.
    private mutating func unescape() throws(JSONError) {
        let escape = index
        guard index + 1 < bytes.count else { throw JSONError(.unexpectedEnd, at: bytes.count) }
        let simple: UInt8
        switch bytes[index + 1] {
        case ASCII.quote: simple = ASCII.quote
        case ASCII.backslash: simple = ASCII.backslash
        case ASCII.slash: simple = ASCII.slash
        case ASCII.b: simple = 0x08
        case ASCII.f: simple = 0x0C
        case ASCII.n: simple = ASCII.lineFeed
        case ASCII.r: simple = ASCII.carriageReturn
        case ASCII.t: simple = ASCII.tab
        case ASCII.u:
            let unit = try hexUnit(at: index + 2)
            index += 6
            switch unit {
            case 0xD800...0xDBFF:
                guard index + 1 < bytes.count, bytes[index] == ASCII.backslash, bytes[index + 1] == ASCII.u else {
                    throw JSONError(.loneSurrogate, at: escape)
                }
                let low = try hexUnit(at: index + 2)
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONError(.loneSurrogate, at: escape) }
                index += 6
                appendUTF8(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00...0xDFFF:
                throw JSONError(.loneSurrogate, at: escape)
            default:
                appendUTF8(unit)
            }
            return
        default:
            throw JSONError(.invalidEscape, at: escape)
        }
        scratch.append(simple)
        index += 2
    }

    /// The four hex digits at `position` (after a `\u`) as a UTF-16 code unit.
    private func hexUnit(at position: Int) throws(JSONError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw JSONError(.unexpectedEnd, at: bytes.count) }
        var unit: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = ASCII.hexValue(bytes[position + offset]) else { throw JSONError(.invalidEscape, at: position - 2) }
            unit = unit << 4 | UInt32(digit)
        }
        return unit
    }

    /// Appends a Unicode scalar value (never a surrogate) to `scratch` as UTF-8.
    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(0xC0 | UInt8(scalar >> 6))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(0xE0 | UInt8(scalar >> 12))
            scratch.append(0x80 | UInt8(scalar >> 6 & 0x3F))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        default:
            scratch.append(0xF0 | UInt8(scalar >> 18))
            scratch.append(0x80 | UInt8(scalar >> 12 & 0x3F))
            scratch.append(0x80 | UInt8(scalar >> 6 & 0x3F))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        }
    }

    /// The length of the well-formed multi-byte UTF-8 sequence at `position` (Unicode table 3-7:
    /// no overlong forms, no surrogates, nothing above U+10FFFF), or `nil`.
    func utf8SequenceLength(at position: Int) -> Int? {
        let lead = bytes[position]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: return nil
        }
        guard position + length <= bytes.count, (low...high).contains(bytes[position + 1]) else { return nil }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[position + offset]) { return nil }
        return length
    }

    // MARK: numbers

    /// A number (at the current `-` or digit): `.int` when written as an integer that fits
    /// `Int64`, else `.double`.
    mutating func number() throws(JSONError) -> JSONValue {
        let start = index
        let negative = bytes[index] == ASCII.minus
        if negative { index += 1 }
        guard index < bytes.count else { throw JSONError(.invalidNumber, at: start) }
        if bytes[index] == ASCII.I, matches("Infinity") { throw JSONError(.nonFiniteNumber, at: start) }
        guard isDigit(at: index) else { throw JSONError(.invalidNumber, at: start) }

        // Up to 19 significant digits are kept exactly; later ones only scale the value.
        var significand: UInt64 = 0
        var significantDigits = 0
        var exponent = 0
        var isExact = true
        func take(_ digit: UInt8, fractional: Bool) {
            if significantDigits < 19 {
                significand = significand &* 10 &+ UInt64(digit)
                if significand != 0 { significantDigits += 1 }
                if fractional { exponent -= 1 }
            } else {
                if digit != 0 { isExact = false }
                if !fractional { exponent += 1 }
            }
        }

        if bytes[index] == ASCII.zero {
            index += 1
            if index < bytes.count, isDigit(at: index) { throw JSONError(.leadingZero, at: start) }
        } else {
            while index < bytes.count, isDigit(at: index) {
                take(bytes[index] - ASCII.zero, fractional: false)
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == ASCII.dot {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(at: index) else { throw JSONError(.invalidNumber, at: start) }
            while index < bytes.count, isDigit(at: index) {
                take(bytes[index] - ASCII.zero, fractional: true)
                index += 1
            }
        }
        if index < bytes.count, bytes[index] == ASCII.e || bytes[index] == ASCII.upperE {
            isInteger = false
            index += 1
            var exponentIsNegative = false
            if index < bytes.count, bytes[index] == ASCII.plus || bytes[index] == ASCII.minus {
                exponentIsNegative = bytes[index] == ASCII.minus
                index += 1
            }
            guard index < bytes.count, isDigit(at: index) else { throw JSONError(.invalidNumber, at: start) }
            var written = 0
            while index < bytes.count, isDigit(at: index) {
                // Beyond 10^6 every finite significand is out of range or zero anyway.
                written = min(written * 10 + Int(bytes[index] - ASCII.zero), 1_000_000)
                index += 1
            }
            exponent += exponentIsNegative ? -written : written
        }

        if isInteger, exponent == 0, isExact {
            if negative, significand <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- significand)) }
            if !negative, significand <= UInt64(Int64.max) { return .int(Int64(significand)) }
        }
        return .double(try double(from: start, significand: significand, exponent: exponent, isExact: isExact, negative: negative))
    }

    /// The `Double` of the number text from `start` to the current position, whose digits are
    /// `significand` × 10^`exponent` (exactly, when `isExact`).
    private func double(from start: Int, significand: UInt64, exponent: Int, isExact: Bool, negative: Bool) throws(JSONError) -> Double {
        let value: Double
        if isExact, significand <= 1 << 53, (-22...22).contains(exponent) {
            // Both operands are exact doubles, so one correctly rounded operation gives the
            // correctly rounded result (Clinger's fast path).
            let magnitude = Double(significand)
            value = exponent < 0 ? magnitude / Self.powersOfTen[-exponent] : magnitude * Self.powersOfTen[exponent]
        } else {
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let parsed = Double(text) else { throw JSONError(.invalidNumber, at: start) }
            guard parsed.isFinite else { throw JSONError(.numberOutOfRange, at: start) }
            return parsed
        }
        return negative ? -value : value
    }

    private func isDigit(at position: Int) -> Bool {
        (ASCII.zero...ASCII.nine).contains(bytes[position])
    }

    /// 10^0 … 10^22, every one exact in a `Double`.
    private static let powersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { result, _ in result * 10 } }
}
