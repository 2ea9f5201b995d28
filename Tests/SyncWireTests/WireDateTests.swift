import Foundation
import SyncTestSupport
import SyncWire
import Testing

/// Wire timestamps read and written directly: every accepted form, every refusal, and the
/// calendar checked against independent implementations (libc's `timegm`/`gmtime_r` and
/// Foundation's ISO 8601 formatter).
@Suite struct WireDateTests {
    /// Expected values computed independently (Python's `datetime`).
    static let accepted: [(text: String, milliseconds: Int64)] = [
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01T00:00:00.000Z", 0),
        ("2001-02-03T04:05:06Z", 981_173_106_000),
        ("2001-02-03T04:05:06.7Z", 981_173_106_700),
        ("2001-02-03T04:05:06.78Z", 981_173_106_780),
        ("2001-02-03T04:05:06.789Z", 981_173_106_789),
        ("2001-02-03T04:05:06.7891Z", 981_173_106_789),
        ("2001-02-03T04:05:06.78912Z", 981_173_106_789),
        ("2001-02-03T04:05:06.789123Z", 981_173_106_789),
        ("2001-02-03T04:05:06.7891234Z", 981_173_106_789),
        ("2001-02-03T04:05:06.78912345Z", 981_173_106_789),
        ("2001-02-03T04:05:06.999999999Z", 981_173_106_999),
        ("2001-02-03T04:05:06.0000000000001Z", 981_173_106_000),
        ("2001-02-03T04:05:06+01:00", 981_169_506_000),
        ("2001-02-03T04:05:06.5-05:30", 981_192_906_500),
        ("2001-02-03T04:05:06+23:59", 981_086_766_000),
        ("2001-02-03T04:05:06-23:59", 981_259_446_000),
        ("2001-02-03T04:05:06+00:00", 981_173_106_000),
        ("2001-02-03T04:05:06-00:00", 981_173_106_000),
        ("2001-01-01T00:30:00+01:00", 978_305_400_000),
        ("2010-01-01T00:00:00.9996+00:00", 1_262_304_000_999),
        ("2000-02-29T00:00:00Z", 951_782_400_000),
        ("2024-02-29T12:00:00Z", 1_709_208_000_000),
        ("2400-02-29T00:00:00Z", 13_574_563_200_000),
        ("1600-02-29T00:00:00Z", -11_670_998_400_000),
        ("1900-03-01T00:00:00Z", -2_203_891_200_000),
        ("2001-12-31T23:59:59.999Z", 1_009_843_199_999),
        ("1969-12-31T23:59:59.999Z", -1),
        ("1969-12-31T23:59:59.9999Z", -1),
        ("0001-01-01T00:00:00Z", -62_135_596_800_000),
        ("0000-01-01T00:00:00.000Z", -62_167_219_200_000),
        ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
    ]

    @Test(arguments: accepted)
    func acceptedTextGivesItsMilliseconds(_ text: String, _ milliseconds: Int64) {
        #expect(WireDate.milliseconds(from: text) == milliseconds)
        #expect(WireDate.date(from: text) == Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    static let refused = [
        "", "not a date", "2001-02-03T04:05:06", "2001-02-03 04:05:06Z", "2001-02-03t04:05:06z", "2001-02-03T04:05:06z",
        "2001-2-3T04:05:06Z", "2001-02-03T04:05Z", "20010203T040506Z", "+2001-02-03T04:05:06Z", "2001-02-03T04:05:06ZZ",
        " 2001-02-03T04:05:06Z", "2001-02-03T04:05:06Z ", "2001-02-03T04:05:06.Z", "2001-02-03T04:05:06,5Z",
        "2001-02-03T04:05:06.12a3Z", "2001-02-03T04:05:06.123", "2001-02-03T04:05:06+0100", "2001-02-03T04:05:06+01",
        "2001-02-03T04:05:06+24:00", "2001-02-03T04:05:06+01:60", "2001-02-03T04:05:06+01:0", "2001-02-03T04:05:06 +01:00",
        "2001-02-03T24:00:00Z", "2001-02-03T23:60:00Z", "2001-02-03T23:59:60Z", "2001-13-03T04:05:06Z", "2001-00-03T04:05:06Z",
        "2001-02-00T04:05:06Z", "2001-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2001-04-31T00:00:00Z",
        "2001-02-32T00:00:00Z", "２００１-02-03T04:05:06Z", "2001-02-03T04:05:0６Z", "2001-02-03T04:05:06.1\u{0}Z",
    ]

    @Test(arguments: refused)
    func otherTextIsRefused(_ text: String) {
        #expect(WireDate.milliseconds(from: text) == nil)
        #expect(WireDate.date(from: text) == nil)
    }

    @Test func formattingIsFixedWidthAndClamped() {
        #expect(WireDate.string(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(WireDate.string(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(WireDate.string(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(WireDate.string(milliseconds: 981_173_106_789) == "2001-02-03T04:05:06.789Z")
        #expect(WireDate.string(milliseconds: -62_135_596_800_000) == "0001-01-01T00:00:00.000Z")
        #expect(WireDate.string(milliseconds: -62_167_219_200_000) == "0000-01-01T00:00:00.000Z")
        #expect(WireDate.string(milliseconds: 253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
        #expect(WireDate.string(milliseconds: .max) == "9999-12-31T23:59:59.999Z")
        #expect(WireDate.string(milliseconds: .min) == "0000-01-01T00:00:00.000Z")
        #expect(WireDate.string(from: Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59.999Z")
        #expect(WireDate.string(from: Date(timeIntervalSince1970: -1e300)) == "0000-01-01T00:00:00.000Z")
        #expect(WireDate.string(from: Date(timeIntervalSince1970: -0.000_4)) == "1969-12-31T23:59:59.999Z", "truncated towards the past")
    }

    /// Every millisecond count of years 0000–9999 prints and reads back as itself, and the text
    /// agrees with libc's `gmtime_r` (an independent calendar).
    @Test func formatAndParseAgreeWithEachOtherAndWithLibc() throws {
        var generator = SeededGenerator(seed: 7)
        for round in 0..<20_000 {
            let milliseconds =
                round < 10_000
                ? Int64.random(in: -62_167_219_200_000...253_402_300_799_999, using: &generator)
                : Int64.random(in: -2_208_988_800_000...4_102_444_800_000, using: &generator)  // 1900–2100
            let text = WireDate.string(milliseconds: milliseconds)
            #expect(WireDate.milliseconds(from: text) == milliseconds, "\(text)")
            var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let millisecond = milliseconds - Int64(seconds) * 1000
            let libc = String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(millisecond))
            #expect(text == libc)
        }
    }

    /// Over the modern range, every form the protocol uses reads as Foundation's ISO 8601
    /// formatter reads it (truncated to the millisecond).
    @Test func parsingAgreesWithFoundationsFormatter() throws {
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<3_000 {
            let milliseconds = Int64.random(in: 0...4_102_444_800_000, using: &generator)  // 1970–2100
            let base = WireDate.string(milliseconds: milliseconds)  // …SS.mmmZ
            let digits = Int.random(in: 0...3, using: &generator)
            var text = String(base.prefix(19))
            if digits > 0 { text += "." + base.dropFirst(20).prefix(digits) }
            let offsetMinutes = Int.random(in: -(23 * 60 + 59)...(23 * 60 + 59), using: &generator)
            if Bool.random(using: &generator) {
                text += "Z"
            } else {
                let magnitude = abs(offsetMinutes)
                text += (offsetMinutes < 0 ? "-" : "+") + String(format: "%02d:%02d", magnitude / 60, magnitude % 60)
            }
            let expected = try #require(withFraction.date(from: text) ?? plain.date(from: text), "\(text)")
            let expectedMilliseconds = Int64((expected.timeIntervalSince1970 * 1000).rounded())
            #expect(WireDate.milliseconds(from: text) == expectedMilliseconds, "\(text)")
        }
    }

    /// Found by `fuzz-query`: `datetimeoffset'4212-04-04T04:04:04.400Z'` printed back as
    /// `….399Z`: far from 1970 a `Date`'s `Double` misses the millisecond by more than the
    /// half microsecond allowed for. Every millisecond of 0000–9999 now prints back as itself.
    @Test func datesRoundTripThroughTextInEveryYear() throws {
        var generator = SeededGenerator(seed: 13)
        var texts = ["4212-04-04T04:04:04.400Z", "9999-12-31T23:59:59.999Z", "0000-01-01T00:00:00.000Z", "0000-01-01T00:00:00.001Z"]
        for _ in 0..<20_000 {
            texts.append(WireDate.string(milliseconds: Int64.random(in: TimestampRange.earliest...TimestampRange.latest, using: &generator)))
        }
        for text in texts {
            let date = try #require(WireDate.date(from: text))
            #expect(WireDate.string(from: date) == text)
        }
    }

    /// Found by `fuzz-query`: an offset could move the instant outside the years the text can
    /// write (`0000-01-01T00:00:00+01:00` is in year −1), and it printed back clamped, another
    /// instant. Such text is refused; the same offsets inside the range are read.
    @Test func instantsOutsideTheWrittenYearsAreRefused() {
        for text in ["0000-01-01T00:00:00+01:00", "0000-01-01T00:59:59.999+01:00", "9999-12-31T23:59:59.999-00:01", "9999-12-31T23:00:00-01:00"] {
            #expect(WireDate.milliseconds(from: text) == nil, "\(text)")
        }
        #expect(WireDate.milliseconds(from: "0000-01-01T01:00:00+01:00") == TimestampRange.earliest)
        #expect(WireDate.milliseconds(from: "9999-12-31T22:59:59.999-01:00") == TimestampRange.latest)
    }

    /// The first and last milliseconds the text can write: 0000-01-01T00:00:00.000Z and
    /// 9999-12-31T23:59:59.999Z.
    enum TimestampRange {
        static let earliest: Int64 = -62_167_219_200_000
        static let latest: Int64 = 253_402_300_799_999
    }

    /// The text of a date read from text is that text, over 1900–2100 (there the `Double` of a
    /// `Date` holds a millisecond within half a microsecond, which `string(from:)` allows for).
    @Test func datesRoundTripThroughText() throws {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<5_000 {
            let milliseconds = Int64.random(in: -2_208_988_800_000...4_102_444_800_000, using: &generator)
            let text = WireDate.string(milliseconds: milliseconds)
            let date = try #require(WireDate.date(from: text))
            #expect(WireDate.string(from: date) == text)
        }
    }
}
