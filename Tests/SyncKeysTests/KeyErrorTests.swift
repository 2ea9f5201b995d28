import SyncKeys
import Testing

/// `KeyError` is a struct of kinds: the kinds compare and match as the enum's cases did, and each
/// occurrence keeps its detail.
@Suite struct KeyErrorTests {
    @Test func kindsCompareWithoutTheirDetail() {
        #expect(KeyError.envelopeCorrupt("checksum mismatch") == .envelopeCorrupt)
        #expect(KeyError.envelopeCorrupt("checksum mismatch") == .envelopeCorrupt("another reason"))
        #expect(KeyError.envelopeCorrupt("checksum mismatch") != .unwrapFailed)
        #expect(KeyError.invalidKeyLength(16) != .unsupportedEnvelopeVersion(16))
        #expect(Set([KeyError.slotMissing("tpm"), .slotMissing("recovery"), .shredded]).count == 2)
    }

    @Test func theDetailIsKeptInTheReasonAndTheSentence() {
        #expect(KeyError.envelopeCorrupt("checksum mismatch").reason == "checksum mismatch")
        #expect(KeyError.wrongPassphrase.reason == nil)
        #expect(KeyError.invalidKeyLength(16).description == "A key of 16 bytes is not valid here.")
        #expect(KeyError.unsupportedEnvelopeVersion(2).description == "The key envelope has an unsupported version (2).")
        #expect(KeyError.slotMissing("tpm").description == "The store has no 'tpm' key slot.")
        #expect(KeyError.envelopeCorrupt("checksum mismatch").description == "The key envelope is damaged or was modified (checksum mismatch).")
    }

    @Test func catchClausesMatchTheKind() {
        func kind(of error: any Error) -> String {
            do { throw error } catch KeyError.wrongPassphrase { return "wrongPassphrase" } catch KeyError.tpmFailure {
                return "tpmFailure"
            } catch { return "other" }
        }
        #expect(kind(of: KeyError.wrongPassphrase) == "wrongPassphrase")
        #expect(kind(of: KeyError.tpmFailure("Esys_Unseal: TPM_RC_FAILURE")) == "tpmFailure")
        #expect(kind(of: KeyError.unwrapFailed) == "other")
        #expect(kind(of: CancellationError()) == "other")
    }
}
