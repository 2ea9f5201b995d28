import Foundation
import SyncKeys
import SyncTestSupport
import Testing

func loadJSON<T: Decodable>(_ type: T.Type, _ relativePath: String) throws -> T {
    try JSONDecoder().decode(type, from: Data(contentsOf: repositoryRoot.appendingPathComponent(relativePath)))
}

func bytes(hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
        index = next
    }
    return result
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

func hex(_ secret: SecretBytes) -> String { secret.withUnsafeBytes { hex(Array($0)) } }

func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

/// Expects `body` to throw `expected`: the same kind with the same detail (a `KeyError` equals any
/// other of its kind, so the descriptions, which carry the detail, are compared too).
func expectKeyError<R>(_ expected: KeyError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) {
    let error = #expect(throws: KeyError.self, sourceLocation: sourceLocation) { _ = try body() }
    #expect(error?.description == expected.description, sourceLocation: sourceLocation)
}
