import Foundation
import SyncKeys
import SyncStore
import SyncTestSupport
import SyncWire

/// Unique marker strings written into every table of a store, then searched for in its files.
struct Markers {
    let ascii: [String]
    let unicode: [String]

    init(count: Int = 6) {
        ascii = (0..<count).map { _ in "MARK" + UUID().uuidString.replacingOccurrences(of: "-", with: "") }
        unicode = (0..<count).map { _ in "Märkér-✓-" + UUID().uuidString.prefix(12) }
    }

    var all: [String] { ascii + unicode }

    /// Every byte form a careless store could leave a string in.
    static func encodings(of marker: String) -> [(String, [UInt8])] {
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

    /// Writes the markers into a user table and all three system tables.
    func fill(_ store: SQLiteStore) async throws {
        let ascii = ascii, unicode = unicode
        try await store.write { w in
            for (i, (a, u)) in zip(ascii, unicode).enumerated() {
                let id = "r\(i)"
                try w.upsert(table: "records", items: [["id": .string(id), "text": .string(a), "note": .string(u)]], ignoreMissingColumns: false)
                let op = try w.addOperation(kind: .delete, table: "records", itemId: id, item: ["id": .string(id), "text": .string(a)])
                try w.addOperationError(
                    OperationErrorRecord(
                        operationId: op.id, operationVersion: 1, kind: .delete, table: "records", itemId: id,
                        statusCode: 412, message: "conflict", item: ["text": .string(u)], serverItem: ["text": .string(a)],
                        rawResponse: a))
                try w.setConfigValue(u, forKey: "deltaToken|records|\(a)")
            }
        }
    }
}

/// Counts the occurrences of each marker, in every encoding, in the files given.
func markerHits(_ markers: [String], in files: [URL]) throws -> [String] {
    var hits: [String] = []
    for file in files where FileManager.default.fileExists(atPath: file.path) {
        let bytes = [UInt8](try Data(contentsOf: file))
        for marker in markers {
            for (form, needle) in Markers.encodings(of: marker) where contains(bytes, needle) {
                hits.append("\(file.lastPathComponent): \(form)")
            }
        }
    }
    return hits
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
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

/// The repository root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Runs a program with `input` on standard input; returns its exit status and standard output.
@discardableResult
func run(_ executable: String, _ arguments: [String], input: String = "") throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    let err = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}

/// The hex of a secret, for feeding a test-only key to an external reader through stdin.
func hex(_ secret: SecretBytes) -> String {
    secret.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
}
