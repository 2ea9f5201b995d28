/// The protocol's timestamp text read and written directly, with no formatter objects.
///
/// Read: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` — four-digit year (0000–9999), a real
/// calendar date of the proleptic Gregorian calendar, hours 00–23, minutes and seconds 00–59
/// (no leap second), one or more fraction digits, `Z` or an offset of at most 23:59 (`T` and `Z`
/// upper case). Digits after the milliseconds are dropped, never rounded. An offset that moves
/// the instant outside the years 0000–9999 UTC (`0000-01-01T00:00:00+01:00`) is refused: that
/// instant has no text of the written form.
/// Written: `YYYY-MM-DDTHH:MM:SS.mmmZ`, fixed width, so text order is time order.
extension WireDate {
    /// Milliseconds since 1970-01-01T00:00:00Z of a wire timestamp, digits beyond the
    /// millisecond truncated (`…:00.9996Z` is `…:00.999Z`: rounding up would skip rows that share
    /// the boundary timestamp).
    /// - Parameter text: the timestamp text.
    /// - Returns: the milliseconds, or `nil` when the text is not a timestamp of that form or
    ///   names an instant outside the years 0000–9999 UTC.
    public static func milliseconds(from text: String) -> Int64? {
        if let parsed = text.utf8.withContiguousStorageIfAvailable({ milliseconds(utf8: $0) }) { return parsed }
        return Array(text.utf8).withUnsafeBufferPointer { milliseconds(utf8: $0) }
    }

    /// The wire text of a count of milliseconds since 1970 (`1999-12-03T15:44:29.123Z`).
    /// Counts outside the years 0000–9999 are clamped to the first or last millisecond of that
    /// range, so the text keeps its fixed width.
    /// - Parameter milliseconds: the milliseconds since 1970-01-01T00:00:00Z.
    /// - Returns: the text.
    public static func string(milliseconds: Int64) -> String {
        let clamped = min(max(milliseconds, TimestampText.earliest), TimestampText.latest)
        let (seconds, millisecond) = floorDivide(clamped, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = TimestampText.civil(fromDays: days)
        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int64, width: Int, at start: Int, then separator: UInt8) {
                var rest = value
                for offset in (0..<width).reversed() {
                    buffer[start + offset] = ASCII.zero + UInt8(rest % 10)
                    rest /= 10
                }
                buffer[start + width] = separator
            }
            put(year, width: 4, at: 0, then: ASCII.minus)
            put(month, width: 2, at: 5, then: ASCII.minus)
            put(day, width: 2, at: 8, then: TimestampText.t)
            put(secondOfDay / 3600, width: 2, at: 11, then: ASCII.colon)
            put(secondOfDay / 60 % 60, width: 2, at: 14, then: ASCII.colon)
            put(secondOfDay % 60, width: 2, at: 17, then: ASCII.dot)
            put(millisecond, width: 3, at: 20, then: TimestampText.z)
            return 24
        }
    }

    private static func milliseconds(utf8 text: UnsafeBufferPointer<UInt8>) -> Int64? {
        // The fixed part: YYYY-MM-DDTHH:MM:SS.
        guard text.count >= 20, text[4] == ASCII.minus, text[7] == ASCII.minus, text[10] == TimestampText.t,
            text[13] == ASCII.colon, text[16] == ASCII.colon,
            let year = digits(text, 0, 4), let month = digits(text, 5, 2), let day = digits(text, 8, 2),
            let hour = digits(text, 11, 2), let minute = digits(text, 14, 2), let second = digits(text, 17, 2),
            (1...12).contains(month), (1...TimestampText.daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }

        var position = 19
        var millisecond: Int64 = 0
        if text[position] == ASCII.dot {
            position += 1
            let start = position
            while position < text.count, let digit = digits(text, position, 1) {
                if position - start < 3 { millisecond = millisecond * 10 + digit }
                position += 1
            }
            let count = position - start
            guard count > 0 else { return nil }
            for _ in min(count, 3)..<3 { millisecond *= 10 }
        }

        guard position < text.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch text[position] {
        case TimestampText.z:
            position += 1
        case ASCII.plus, ASCII.minus:
            guard text.count - position >= 6, text[position + 3] == ASCII.colon,
                let hours = digits(text, position + 1, 2), let minutes = digits(text, position + 4, 2), hours < 24, minutes < 60
            else { return nil }
            offsetSeconds = (hours * 3600 + minutes * 60) * (text[position] == ASCII.minus ? -1 : 1)
            position += 6
        default:
            return nil
        }
        guard position == text.count else { return nil }

        let days = TimestampText.days(fromCivilYear: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        let milliseconds = seconds * 1000 + millisecond
        guard (TimestampText.earliest...TimestampText.latest).contains(milliseconds) else { return nil }
        return milliseconds
    }

    /// The decimal number of the `count` ASCII digits at `start`, or `nil`.
    private static func digits(_ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for position in start..<(start + count) {
            let byte = text[position]
            guard (ASCII.zero...ASCII.nine).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - ASCII.zero)
        }
        return value
    }

    /// Quotient and remainder rounded towards negative infinity (the remainder is never negative).
    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }
}

/// Calendar arithmetic of the proleptic Gregorian calendar on day counts since 1970-01-01.
enum TimestampText {
    static let t: UInt8 = 0x54
    static let z: UInt8 = 0x5A
    /// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z in milliseconds since 1970.
    static let earliest: Int64 = -62_167_219_200_000
    static let latest: Int64 = 253_402_300_799_999

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a date (the era-based method: 400-year eras of 146,097 days,
    /// years counted from March so the leap day comes last).
    static func days(fromCivilYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a count of days since 1970-01-01 (the inverse of `days(fromCivilYear:…)`).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
