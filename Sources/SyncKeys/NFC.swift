/// Unicode Normalization Form C (UAX #15) of UTF-8 text, computed in buffers this module owns and
/// wipes, so a passphrase is normalised without ever becoming a `String` (which cannot be wiped).
///
/// The steps are the standard ones: strict UTF-8 decoding, full canonical decomposition (the
/// one-step mappings of ``decompositionData`` applied recursively, Hangul syllables by algorithm),
/// canonical ordering of combining marks, then canonical composition (primary composites and
/// Hangul). The data is the Unicode Character Database of ``unicodeVersion``; a character assigned
/// in a later version is left as it is (normalisation is stable for text of one version, so such
/// text normalises the same everywhere).
enum NFC {
    /// The most scalars one scalar's full canonical decomposition has (checked by the tests).
    static let maximumDecompositionLength = 4

    /// The NFC form of the UTF-8 text `utf8`, in a secret buffer.
    ///
    /// - Parameter utf8: The text's bytes.
    /// - Returns: The normalised bytes, or `nil` when `utf8` is not valid UTF-8 (overlong forms,
    ///   surrogates and values above U+10FFFF are invalid, as in Swift's own decoding).
    static func normalize(_ utf8: UnsafeRawBufferPointer) -> SecretBytes? {
        let scalars = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: max(utf8.count * maximumDecompositionLength, 1))
        scalars.initialize(repeating: 0)
        defer {
            cleanse(UnsafeMutableRawBufferPointer(scalars))
            scalars.deallocate()
        }
        guard var count = decompose(utf8, into: scalars) else { return nil }
        reorder(scalars, count: count)
        count = compose(scalars, count: count)
        return encode(scalars, count: count)
    }

    // MARK: Decomposition

    /// Decodes `utf8` and writes the full canonical decomposition of each scalar into `scalars`.
    ///
    /// - Returns: The scalars written, or `nil` for invalid UTF-8.
    private static func decompose(_ utf8: UnsafeRawBufferPointer, into scalars: UnsafeMutableBufferPointer<UInt32>) -> Int? {
        var count = 0
        var index = 0
        while index < utf8.count {
            guard let (scalar, length) = decodeScalar(utf8, at: index) else { return nil }
            appendDecomposition(of: scalar, to: scalars, count: &count)
            index += length
        }
        return count
    }

    /// The scalar starting at `index` and its length in bytes, or `nil` when the bytes there are
    /// not a well-formed UTF-8 sequence.
    static func decodeScalar(_ utf8: UnsafeRawBufferPointer, at index: Int) -> (UInt32, Int)? {
        let lead = utf8[index]
        let length: Int, initial: UInt32, minimum: UInt32
        switch lead {
        case 0x00...0x7F: return (UInt32(lead), 1)
        case 0xC2...0xDF: (length, initial, minimum) = (2, UInt32(lead & 0x1F), 0x80)
        case 0xE0...0xEF: (length, initial, minimum) = (3, UInt32(lead & 0x0F), 0x800)
        case 0xF0...0xF4: (length, initial, minimum) = (4, UInt32(lead & 0x07), 0x1_0000)
        default: return nil
        }
        guard index + length <= utf8.count else { return nil }
        var value = initial
        for offset in 1..<length {
            let byte = utf8[index + offset]
            guard byte & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        guard value >= minimum, value <= 0x10_FFFF, !(0xD800...0xDFFF).contains(value) else { return nil }
        return (value, length)
    }

    /// Appends the full canonical decomposition of `scalar`.
    private static func appendDecomposition(
        of scalar: UInt32, to scalars: UnsafeMutableBufferPointer<UInt32>, count: inout Int
    ) {
        if let (first, second) = Hangul.decomposition(of: scalar) {
            appendDecomposition(of: first, to: scalars, count: &count)
            appendDecomposition(of: second, to: scalars, count: &count)
        } else if let mapping = tables.decompositions[scalar] {
            appendDecomposition(of: mapping.first, to: scalars, count: &count)
            if let second = mapping.second { appendDecomposition(of: second, to: scalars, count: &count) }
        } else {
            precondition(count < scalars.count, "a decomposition is longer than NFC.maximumDecompositionLength")
            scalars[count] = scalar
            count += 1
        }
    }

    /// Sorts each run of combining marks by combining class, stably (canonical ordering).
    private static func reorder(_ scalars: UnsafeMutableBufferPointer<UInt32>, count: Int) {
        guard count > 1 else { return }
        for index in 1..<count {
            let mark = combiningClass(of: scalars[index])
            guard mark != 0 else { continue }
            var position = index
            while position > 0, combiningClass(of: scalars[position - 1]) > mark {
                scalars.swapAt(position - 1, position)
                position -= 1
            }
        }
    }

    // MARK: Composition

    /// Composes the decomposed, ordered `scalars` in place (UAX #15, canonical composition).
    ///
    /// - Returns: The scalars left.
    private static func compose(_ scalars: UnsafeMutableBufferPointer<UInt32>, count: Int) -> Int {
        guard count > 1 else { return count }
        var starter = 0
        // A text that starts with a combining mark has no starter to compose with.
        var lastClass: Int = combiningClass(of: scalars[0]) == 0 ? 0 : 256
        var written = 1
        for index in 1..<count {
            let scalar = scalars[index]
            let scalarClass = Int(combiningClass(of: scalar))
            if lastClass < scalarClass || lastClass == 0, let composite = composition(of: scalars[starter], and: scalar) {
                scalars[starter] = composite
                continue
            }
            if scalarClass == 0 { starter = written }
            lastClass = scalarClass
            scalars[written] = scalar
            written += 1
        }
        return written
    }

    /// The primary composite of `first` followed by `second`, if there is one.
    static func composition(of first: UInt32, and second: UInt32) -> UInt32? {
        Hangul.composition(of: first, and: second) ?? tables.compositions[UInt64(first) << 32 | UInt64(second)]
    }

    /// The canonical combining class of `scalar` (0 for starters and unassigned values).
    static func combiningClass(of scalar: UInt32) -> UInt8 {
        tables.combiningClasses[scalar] ?? 0
    }

    // MARK: Encoding

    /// The UTF-8 encoding of `scalars`, written straight into a secret buffer.
    private static func encode(_ scalars: UnsafeMutableBufferPointer<UInt32>, count: Int) -> SecretBytes {
        var length = 0
        for index in 0..<count { length += encodedLength(scalars[index]) }
        return SecretBytes(count: length) { output in
            var offset = 0
            for index in 0..<count {
                let scalar = scalars[index]
                switch encodedLength(scalar) {
                case 1:
                    output[offset] = UInt8(scalar)
                case 2:
                    output[offset] = 0xC0 | UInt8(scalar >> 6)
                    output[offset + 1] = 0x80 | UInt8(scalar & 0x3F)
                case 3:
                    output[offset] = 0xE0 | UInt8(scalar >> 12)
                    output[offset + 1] = 0x80 | UInt8(scalar >> 6 & 0x3F)
                    output[offset + 2] = 0x80 | UInt8(scalar & 0x3F)
                default:
                    output[offset] = 0xF0 | UInt8(scalar >> 18)
                    output[offset + 1] = 0x80 | UInt8(scalar >> 12 & 0x3F)
                    output[offset + 2] = 0x80 | UInt8(scalar >> 6 & 0x3F)
                    output[offset + 3] = 0x80 | UInt8(scalar & 0x3F)
                }
                offset += encodedLength(scalar)
            }
        }
    }

    private static func encodedLength(_ scalar: UInt32) -> Int {
        switch scalar {
        case ..<0x80: return 1
        case ..<0x800: return 2
        case ..<0x1_0000: return 3
        default: return 4
        }
    }
}

/// Hangul syllables: decomposed and composed by arithmetic (Unicode §3.12), not by table.
enum Hangul {
    static let syllableBase: UInt32 = 0xAC00, leadingBase: UInt32 = 0x1100, vowelBase: UInt32 = 0x1161
    static let trailingBase: UInt32 = 0x11A7
    static let leadingCount: UInt32 = 19, vowelCount: UInt32 = 21, trailingCount: UInt32 = 28
    static let syllableCount = leadingCount * vowelCount * trailingCount

    /// A syllable's one-step decomposition: LV into L and V, LVT into LV and T.
    static func decomposition(of scalar: UInt32) -> (UInt32, UInt32)? {
        guard scalar >= syllableBase, scalar < syllableBase + syllableCount else { return nil }
        let index = scalar - syllableBase
        let trailing = index % trailingCount
        if trailing != 0 { return (scalar - trailing, trailingBase + trailing) }
        let perLeading = vowelCount * trailingCount
        return (leadingBase + index / perLeading, vowelBase + index % perLeading / trailingCount)
    }

    /// The syllable an L and a V, or an LV and a T, compose into.
    static func composition(of first: UInt32, and second: UInt32) -> UInt32? {
        if first >= leadingBase, first < leadingBase + leadingCount, second >= vowelBase, second < vowelBase + vowelCount {
            return syllableBase + ((first - leadingBase) * vowelCount + (second - vowelBase)) * trailingCount
        }
        if first >= syllableBase, first < syllableBase + syllableCount, (first - syllableBase) % trailingCount == 0,
            second > trailingBase, second < trailingBase + trailingCount
        {
            return first + (second - trailingBase)
        }
        return nil
    }
}

extension NFC {
    /// The decoded tables (``decompositionData``, ``combiningClassData``), built on first use.
    struct Tables: Sendable {
        /// One-step decompositions (`second` is `nil` for a singleton).
        var decompositions: [UInt32: (first: UInt32, second: UInt32?)] = [:]
        /// Primary composites by `first << 32 | second`.
        var compositions: [UInt64: UInt32] = [:]
        /// Non-zero combining classes.
        var combiningClasses: [UInt32: UInt8] = [:]

        init() {
            NFC.tokens(of: NFC.decompositionData) { token in
                // XXXX=AAAA, XXXX=AAAA+BBBB (composes) or XXXX=AAAA-BBBB (excluded).
                guard let equals = token.firstIndex(of: UInt8(ascii: "=")),
                    let scalar = NFC.hex(token[..<equals])
                else { return }
                let mapping = token[(equals + 1)...]
                if let joiner = mapping.firstIndex(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }),
                    let first = NFC.hex(mapping[..<joiner]), let second = NFC.hex(mapping[(joiner + 1)...])
                {
                    decompositions[scalar] = (first, second)
                    if mapping[joiner] == UInt8(ascii: "+") { compositions[UInt64(first) << 32 | UInt64(second)] = scalar }
                } else if let first = NFC.hex(mapping) {
                    decompositions[scalar] = (first, nil)
                }
            }
            NFC.tokens(of: NFC.combiningClassData) { token in
                // XXXX-YYYY:CCC or XXXX:CCC.
                guard let colon = token.firstIndex(of: UInt8(ascii: ":")),
                    let value = NFC.hex(token[(colon + 1)...], radix: 10), value <= 255
                else { return }
                let range = token[..<colon]
                let dash = range.firstIndex(of: UInt8(ascii: "-"))
                guard let low = NFC.hex(range[..<(dash ?? colon)]),
                    let high = dash.map({ NFC.hex(range[($0 + 1)...]) }) ?? low
                else { return }
                for scalar in low...high { combiningClasses[scalar] = UInt8(value) }
            }
        }
    }

    /// Decoded once per process; the data is public knowledge, so nothing here needs wiping.
    static let tables = Tables()

    /// Calls `body` with each whitespace-separated token of `data`.
    private static func tokens(of data: StaticString, _ body: (UnsafeBufferPointer<UInt8>.SubSequence) -> Void) {
        data.withUTF8Buffer { bytes in
            var start = 0
            for index in 0...bytes.count {
                let isSeparator = index == bytes.count || bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\n")
                guard isSeparator else { continue }
                if index > start { body(bytes[start..<index]) }
                start = index + 1
            }
        }
    }

    /// The number written in `digits` (hexadecimal unless `radix` says otherwise).
    private static func hex(_ digits: UnsafeBufferPointer<UInt8>.SubSequence, radix: UInt32 = 16) -> UInt32? {
        guard !digits.isEmpty, digits.count <= 8 else { return nil }
        var value: UInt32 = 0
        for byte in digits {
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            guard digit < radix else { return nil }
            value = value * radix + digit
        }
        return value
    }
}
