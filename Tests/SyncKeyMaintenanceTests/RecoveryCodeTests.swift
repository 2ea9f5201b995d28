import Foundation
import SyncKeyMaintenance
import SyncKeys
import Testing

/// Recovery codes: random base32 in groups, normalized as a person types them.
@Suite struct RecoveryCodeTests {
    @Test func recoveryCodesAreRandomBase32InGroupsAndNormalizeAsTyped() throws {
        let a = try RecoveryCode.generate(), b = try RecoveryCode.generate()
        #expect(a != b)
        let text = a.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        #expect(text.range(of: "^([A-Z2-7]{4}-){7}[A-Z2-7]{4}$", options: .regularExpression) != nil)
        let canonical = try RecoveryCode.normalized(a)
        #expect(canonical.count == 32)
        let typed = SecretBytes(Array(text.lowercased().replacingOccurrences(of: "-", with: " ").utf8))
        #expect(try RecoveryCode.normalized(typed) == canonical)
        #expect(throws: StoreError.self) { try RecoveryCode.normalized(SecretBytes(Array("ABCD-EFGH".utf8))) }
        #expect(throws: StoreError.self) { try RecoveryCode.normalized(SecretBytes(Array(String(repeating: "9", count: 32).utf8))) }
    }
}
