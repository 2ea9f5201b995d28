public import Foundation

/// Every byte form a careless store could leave a string in.
public func byteForms(of marker: String) -> [(String, [UInt8])] {
    let utf8 = Array(marker.utf8)
    var le: [UInt8] = [], be: [UInt8] = []
    for unit in marker.utf16 {
        le += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        be += [UInt8(unit >> 8), UInt8(unit & 0xFF)]
    }
    let hex = utf8.map { String(format: "%02x", $0) }.joined()
    return [
        ("utf8", utf8), ("utf16le", le), ("utf16be", be), ("hex", Array(hex.utf8)),
        ("HEX", Array(hex.uppercased().utf8)), ("base64", Array(Data(utf8).base64EncodedString().utf8)),
    ]
}

/// Where the markers occur, in any of their byte forms, in the files given: one
/// `"file: form"` entry per hit, empty when none does.
public func markerHits(_ markers: [String], in files: [URL]) throws -> [String] {
    var hits: [String] = []
    for file in files where FileManager.default.fileExists(atPath: file.path) {
        let bytes = [UInt8](try Data(contentsOf: file))
        for marker in markers {
            for (form, needle) in byteForms(of: marker) where contains(bytes, needle) {
                hits.append("\(file.lastPathComponent): \(form)")
            }
        }
    }
    return hits
}

/// Whether `needle` occurs in `haystack`.
public func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    let first = needle[0]
    var i = 0
    let last = haystack.count - needle.count
    while i <= last {
        if haystack[i] == first && Array(haystack[i..<(i + needle.count)]) == needle { return true }
        i += 1
    }
    return false
}
