import Foundation
import SyncKeys
import Testing

@testable import SyncKeys

@Suite struct KeyWrapTests {
    @Test(arguments: [KeyWrap.Mode.kw, .kwp])
    func everyFlippedBitIsRejected(_ mode: KeyWrap.Mode) throws {
        let kek = try SecretBytes.random(count: 32), key = try SecretBytes.random(count: 32)
        let wrapped = try KeyWrap.wrap(key, using: kek, mode: mode)
        #expect(wrapped.count == 40)
        for bit in 0..<(wrapped.count * 8) {
            var tampered = wrapped
            tampered[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(throws: KeyError.unwrapFailed) { try KeyWrap.unwrap(tampered, using: kek, mode: mode) }
        }
        #expect(try KeyWrap.unwrap(wrapped, using: kek, mode: mode) == key)
    }

    @Test func wrongKEKIsRejected() throws {
        let key = try SecretBytes.random(count: 32)
        let wrapped = try KeyWrap.wrap(key, using: try SecretBytes.random(count: 32))
        #expect(throws: KeyError.unwrapFailed) { try KeyWrap.unwrap(wrapped, using: try SecretBytes.random(count: 32)) }
    }

    @Test func badLengthsAreTypedErrors() throws {
        expectKeyError(.invalidKeyLength(31)) { try KeyWrap.wrap(try SecretBytes.random(count: 32), using: SecretBytes(randomBytes(31))) }
        #expect(throws: KeyError.unwrapFailed) { try KeyWrap.unwrap([1, 2, 3], using: try SecretBytes.random(count: 32)) }
        #expect(throws: KeyError.self) { try KeyWrap.wrap(SecretBytes(randomBytes(12)), using: try SecretBytes.random(count: 32), mode: .kw) }
    }
}

@Suite struct SecretBytesTests {
    @Test func equalityComparesContentsAndLength() throws {
        let a = SecretBytes([1, 2, 3]), b = SecretBytes([1, 2, 3]), c = SecretBytes([1, 2, 4]), d = SecretBytes([1, 2])
        #expect(a == b)
        #expect(a != c)
        #expect(a != d)
        #expect(SecretBytes([]) == SecretBytes([]))
    }

    @Test func descriptionNeverShowsTheBytes() {
        let secret = SecretBytes(Array("hunter2-secret".utf8))
        #expect(!secret.description.contains("hunter2"))
        #expect(!"\(secret)".contains("hunter2"))
        #expect(!String(reflecting: secret).contains("hunter2"))
    }

    @Test func wipingInitializerClearsTheSource() {
        var source: [UInt8] = [9, 9, 9, 9]
        let secret = SecretBytes(wiping: &source)
        #expect(source.isEmpty)
        #expect(secret == SecretBytes([9, 9, 9, 9]))
    }

    @Test func randomSecretsDiffer() throws {
        let a = try SecretBytes.random(count: 32), b = try SecretBytes.random(count: 32)
        #expect(a.count == 32 && a != b)
    }
}

@Suite struct SecretWipeTests {
    @Test func wipeZeroesTheWholeBuffer() {
        let storage = SecretBytes.Storage(count: 64)
        storage.buffer.copyBytes(from: [UInt8](repeating: 0xAB, count: 64))
        #expect(storage.buffer.allSatisfy { $0 == 0xAB })
        storage.wipe()
        #expect(storage.buffer.allSatisfy { $0 == 0 })
    }
}
