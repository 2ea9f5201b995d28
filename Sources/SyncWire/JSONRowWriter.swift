/// Writes a JSON array of objects that all name the same members — the rows of one query —
/// straight from each row's values, without a dictionary per object: the members' order and
/// their names' text are worked out once, in ``init(names:)``.
///
/// The text is byte for byte what `JSONWriter.data(_:)` writes for the array of the objects the
/// rows would make: members sorted by the UTF-8 bytes of their names and, of names
/// equal as Swift strings (a dictionary's keys), the first spelling with the last value.
package struct JSONRowWriter: Sendable {
    /// The position, among a row's values, of each member's value, in the order members are written.
    private let positions: [Int]
    /// Each member's `"name":` text, with the comma before it for all but the first.
    private let prefixes: [[UInt8]]
    /// The number of values a row has (the number of names given).
    package let width: Int
    /// The number of rows written so far.
    package private(set) var count = 0
    private var output = JSONOutput()

    /// A writer of rows whose values come in the order of `names`.
    /// - Parameter names: The member name of each value of a row.
    package init(names: [String]) {
        var slots: [String: Int] = [:]
        var spellings: [String] = []
        var latest: [Int] = []
        for (position, name) in names.enumerated() {
            if let slot = slots[name] {
                latest[slot] = position
            } else {
                slots[name] = spellings.count
                spellings.append(name)
                latest.append(position)
            }
        }
        let order = spellings.indices.sorted { JSONOutput.utf8Precedes(spellings[$0], spellings[$1]) }
        positions = order.map { latest[$0] }
        prefixes = order.enumerated().map { offset, slot in
            var text = JSONOutput()
            if offset > 0 { text.bytes.append(ASCII.comma) }
            text.write(spellings[slot])
            text.bytes.append(ASCII.colon)
            return text.bytes
        }
        width = names.count
        output.bytes.append(ASCII.openBracket)
    }

    /// Appends one row as an object.
    /// - Parameter value: The value at a position (0 up to ``width``, exclusive) of the row;
    ///   called once for each member written, in the members' order.
    /// - Throws: ``JSONError`` for a value that cannot be written (a `Double` that is not
    ///   finite, nesting deeper than ``JSONParser/maximumDepth``); the row is then left out.
    package mutating func append(_ value: (Int) throws(JSONError) -> JSONValue) throws(JSONError) {
        let start = output.bytes.count
        do {
            if count > 0 { output.bytes.append(ASCII.comma) }
            output.bytes.append(ASCII.openBrace)
            for (member, position) in positions.enumerated() {
                output.bytes.append(contentsOf: prefixes[member])
                try output.write(try value(position), depth: 2)
            }
            output.bytes.append(ASCII.closeBrace)
        } catch {
            output.bytes.removeSubrange(start...)
            throw error
        }
        count += 1
    }

    /// The JSON text of the array of the rows appended.
    package var bytes: [UInt8] {
        var text = output.bytes
        text.append(ASCII.closeBracket)
        return text
    }

    /// The JSON text of the array of the rows appended, taken out of the writer without copying
    /// it (``bytes`` copies the text to close its array); the writer then starts a new array.
    /// - Returns: the same text as ``bytes``.
    package mutating func finish() -> [UInt8] {
        var text = [ASCII.openBracket]
        swap(&text, &output.bytes)
        text.append(ASCII.closeBracket)
        count = 0
        return text
    }
}
