import Foundation
import SyncTestSupport
import SyncWire
import Testing

/// The writer: the bytes it promises, and that the parser reads every written value back equal.
@Suite struct JSONWriterTests {
    @Test func stringsAreEscapedAsBefore() throws {
        var text = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init)))
        text += "\"\\/\u{7F}\u{80}\u{2028}\u{2029}é😀\u{FEFF}"
        let written = String(decoding: try JSONWriter.data(["a": .string(text)]), as: UTF8.self)
        let expected =
            #"{"a":"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#
            + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f\"\\/"#
            + "\u{7F}\u{80}\u{2028}\u{2029}é😀\u{FEFF}\"}"
        #expect(written == expected)
        #expect(try JSONParser.parseObject(Data(written.utf8)) == ["a": .string(text)])
    }

    @Test func membersAreSortedByName() throws {
        let object: JSONObject = ["b": 1, "B": 2, "a10": 3, "a2": 4, "_": 5, "é": 6, "e": 7, "Z": 8]
        #expect(try JSONWriter.string(.object(object)) == #"{"B":2,"Z":8,"_":5,"a10":3,"a2":4,"b":1,"e":7,"é":6}"#)
    }

    /// Found by `fuzz-json`: `{"é-":1,"é":2}`, the second `é` written `e` + U+0301, wrote its
    /// members in either order, because Swift's `<` holds neither way between those names and
    /// the sort kept the dictionary's order. Members are sorted by the bytes of their names, so
    /// one object gives one text whatever its dictionary's layout (and Foundation's order).
    @Test func membersAreSortedByTheBytesOfTheirNamesWhateverTheDictionary() throws {
        let names = ["f", "e\u{301}x", "\u{E9}-", "e\u{301}", "\u{E0}!", "a\u{300}", "\u{F6}.", "o\u{308}", "Z", ""]
        let expected = #"{"":9,"Z":8,"a\#u{300}":5,"e\#u{301}":3,"e\#u{301}x":1,"f":0,"o\#u{308}":7,"\#u{E0}!":4,"\#u{E9}-":2,"\#u{F6}.":6}"#
        for capacity in [0, 3, 16, 64, 1024] {
            for order in [Array(names.enumerated()), names.enumerated().reversed()] {
                var object = JSONObject(minimumCapacity: capacity)
                for (value, name) in order { object[name] = .int(Int64(value)) }
                #expect(try JSONWriter.string(.object(object)) == expected, "capacity \(capacity)")
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let object = JSONObject(uniqueKeysWithValues: names.enumerated().map { ($1, JSONValue.int(Int64($0))) })
        #expect(try JSONWriter.data(object) == encoder.encode(object))
    }

    @Test func numbersKeepTheirKind() throws {
        let integers: JSONValue = [.int(.min), .int(.max), 0, -1, 42]
        #expect(try JSONWriter.string(integers) == "[-9223372036854775808,9223372036854775807,0,-1,42]")
        let reals: JSONValue = [2.0, 2.5, 1e20, 1e-5, -0.0, 0.1, .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude)]
        #expect(try JSONWriter.string(reals) == "[2.0,2.5,1e+20,1e-05,-0.0,0.1,5e-324,1.7976931348623157e+308]")
        #expect(try JSONParser.parse(JSONWriter.data(integers)) == integers)
        #expect(try JSONParser.parse(JSONWriter.data(reals)) == reals)
        #expect(try JSONParser.parse(JSONWriter.data(2.0)) == .double(2), "an integral real reads back as a real")
    }

    @Test func whatTheParserWouldRefuseIsNotWritten() throws {
        for real in [Double.nan, .infinity, -.infinity] {
            #expect(throws: JSONError(.nonFiniteNumber, at: nil)) { try JSONWriter.data(["x": .double(real)]) }
        }
        let deepest = JSONParserAcceptTests.nestedValue(JSONParser.maximumDepth)
        #expect(try JSONParser.parse(JSONWriter.data(deepest)) == deepest)
        #expect(throws: JSONError(.tooDeep, at: nil)) { try JSONWriter.data([deepest]) }
        #expect(throws: JSONError(.tooDeep, at: nil)) { try JSONWriter.data(["a": deepest]) }
    }

    /// Random trees — every kind of value, strings with escapes and every UTF-8 length, doubles
    /// from random bit patterns — read back equal, and writing them again gives the same bytes
    /// (so every double came back with the same bits).
    @Test func randomTreesRoundTrip() throws {
        var generator = SeededGenerator(seed: 2024)
        for _ in 0..<3_000 {
            let value = JSONTree.value(depth: 5, using: &generator)
            let written = try JSONWriter.data(value)
            let read = try JSONParser.parse(written)
            #expect(read == value, "\(String(decoding: written, as: UTF8.self))")
            #expect(try JSONWriter.data(read) == written)
        }
    }

    /// Foundation's encoder (what `JSONCoding` used before) writes the same bytes, except for
    /// reals with no fractional part (`2` there, `2.0` here, so they stay reals).
    @Test func bytesAreFoundationsForEverythingButIntegralReals() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<2_000 {
            let value = JSONTree.value(depth: 4, integralReals: false, using: &generator)
            let written = try JSONWriter.data(value)
            #expect(try written == encoder.encode(value), "\(String(decoding: written, as: UTF8.self))")
        }
    }

    /// Random bytes never crash the parser: each is a value or a `JSONError`.
    @Test func randomBytesAreAValueOrAnError() {
        var generator = SeededGenerator(seed: 5)
        let alphabet = Array(#"{}[],:"\ -+.eE0123456789truefalsnl/*'"#.utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xA9, 0xED, 0xF4, 0xFF]
        var accepted = 0
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            do {
                let value = try JSONParser.parse(bytes)
                accepted += 1
                #expect(try JSONParser.parse(JSONWriter.data(value)) == value)
            } catch {
                #expect(error is JSONError)
            }
        }
        #expect(accepted > 0)
    }
}

/// Random JSON values for property tests.
enum JSONTree {
    static let scalars: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\u{0}", "\u{8}", "\u{9}", "\u{A}", "\u{C}", "\u{D}",
        "\u{1F}", "\u{7F}", "é", "ß", "\u{301}", "€", "\u{2028}", "\u{FEFF}", "\u{FFFF}", "中", "😀", "\u{10FFFF}",
    ]

    static func value(depth: Int, integralReals: Bool = true, using generator: inout SeededGenerator) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 9 : 7), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: -1000...1000, using: &generator))
        case 3: return .int(Int64(bitPattern: generator.next()))
        case 4: return .double(real(integral: integralReals, using: &generator))
        case 5, 6: return .string(string(using: &generator))
        case 7:
            return .array(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in value(depth: depth - 1, integralReals: integralReals, using: &generator) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                object[string(using: &generator)] = value(depth: depth - 1, integralReals: integralReals, using: &generator)
            }
            return .object(object)
        }
    }

    static func string(using generator: inout SeededGenerator) -> String {
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...8, using: &generator) { text.append(scalars.randomElement(using: &generator) ?? "a") }
        return String(text)
    }

    /// A finite double: any bit pattern, or a short decimal.
    static func real(integral: Bool, using generator: inout SeededGenerator) -> Double {
        while true {
            let candidate =
                Bool.random(using: &generator)
                ? Double(bitPattern: generator.next())
                : Double(Int.random(in: -100_000...100_000, using: &generator)) / [1, 8, 10, 1000][Int.random(in: 0..<4, using: &generator)]
            if candidate.isFinite, integral || candidate.rounded(.towardZero) != candidate { return candidate }
        }
    }
}
