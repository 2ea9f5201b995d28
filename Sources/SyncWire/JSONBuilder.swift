package import Foundation

/// JSON text written piece by piece — containers opened and closed, members named, values
/// written — for a large document whose parts are at hand separately (a batch of requests,
/// each with an item), so that it is not first built as one ``JSONValue``.
///
/// Values are written as ``JSONWriter`` writes them; the builder puts the commas between members
/// and elements. The caller names a member before each value of an object and closes what it
/// opened: the builder does not check the document's shape.
package struct JSONBuilder {
    private var output = JSONOutput()
    /// Whether a value ends the text so far (a comma goes before the next member or element).
    private var afterValue = false
    /// The containers open.
    private var depth = 0

    /// An empty document.
    package init() {}

    /// Opens an object.
    package mutating func openObject() {
        open(ASCII.openBrace)
    }

    /// Closes the innermost object.
    package mutating func closeObject() {
        close(ASCII.closeBrace)
    }

    /// Opens an array.
    package mutating func openArray() {
        open(ASCII.openBracket)
    }

    /// Closes the innermost array.
    package mutating func closeArray() {
        close(ASCII.closeBracket)
    }

    /// Names the next member of the open object.
    package mutating func member(_ name: String) {
        if afterValue { output.bytes.append(ASCII.comma) }
        output.write(name)
        output.bytes.append(ASCII.colon)
        afterValue = false
    }

    /// Writes a value: the named member's, or the next element of the open array.
    /// - Throws: ``JSONError`` (a `Double` that is not finite, nesting too deep).
    package mutating func value(_ value: JSONValue) throws(JSONError) {
        if afterValue { output.bytes.append(ASCII.comma) }
        try output.write(value, depth: depth)
        afterValue = true
    }

    /// Writes a string value (the named member's, or the next element of the open array).
    package mutating func value(_ text: String) {
        if afterValue { output.bytes.append(ASCII.comma) }
        output.write(text)
        afterValue = true
    }

    /// Writes the members of `object` into the open object, sorted as ``JSONWriter`` sorts
    /// them, but those `omitting` names.
    /// - Throws: ``JSONError`` (a `Double` that is not finite, nesting too deep).
    package mutating func members(of object: JSONObject, omitting: (String) -> Bool) throws(JSONError) {
        for (name, member) in JSONOutput.sortedMembers(object) where !omitting(name) {
            self.member(name)
            try value(member)
        }
    }

    /// The text written.
    package var data: Data { Data(output.bytes) }

    private mutating func open(_ bracket: UInt8) {
        if afterValue { output.bytes.append(ASCII.comma) }
        output.bytes.append(bracket)
        afterValue = false
        depth += 1
    }

    private mutating func close(_ bracket: UInt8) {
        output.bytes.append(bracket)
        afterValue = true
        depth -= 1
    }
}
