import Foundation
import SyncKeyMaintenance
import SyncKeys
import SyncSQLite
import Testing

/// `StoreError` compares by kind, matches in `catch`, keeps what caused it, and says one sentence.
@Suite struct StoreErrorTests {
    @Test func errorsCompareByKindWhateverTheirReasons() {
        #expect(StoreError.invalidItem("too many properties") == .invalidItem)
        #expect(StoreError.invalidItem("a") == StoreError.invalidItem("b"))
        #expect(StoreError.invalidItem("a") != .invalidQuery("a"))
        #expect(StoreError.storeNotFound("/a") != .storeAlreadyExists("/a"))
        #expect(Set([StoreError.fileSystem("x"), .fileSystem("y"), .storeInUse("x")]).count == 2)
    }

    @Test func catchMatchesTheKindOfAnyError() {
        func kind(of error: any Error) -> String {
            do {
                throw error
            } catch StoreError.wrongPassphrase {
                return "wrongPassphrase"
            } catch StoreError.storeNotFound {
                return "storeNotFound"
            } catch let error as StoreError where error == .encryptionMismatch {
                return "encryptionMismatch"
            } catch {
                return "other"
            }
        }
        #expect(kind(of: StoreError.wrongPassphrase) == "wrongPassphrase")
        #expect(kind(of: StoreError(KeyError.wrongPassphrase)) == "wrongPassphrase")
        #expect(kind(of: StoreError.storeNotFound("/tmp/x.db")) == "storeNotFound")
        #expect(kind(of: StoreError.encryptionMismatch("not encrypted")) == "encryptionMismatch")
        #expect(kind(of: StoreError.closed) == "other")
        #expect(kind(of: KeyError.wrongPassphrase) == "other")
    }

    @Test func keyFailuresKeepTheirKeyErrorAndSortByWhatTheUserCanDo() {
        let cases: [(KeyError, StoreError)] = [
            (.wrongPassphrase, .wrongPassphrase),
            (.keyMaterialMissing, .keyMaterialMissing),
            (.emptyPassphrase, .invalidPassphrase),
            (.passphraseTooLong, .invalidPassphrase),
            (.envelopeCorrupt("checksum mismatch"), .keyMaterialCorrupt),
            (.unsupportedEnvelopeVersion(9), .keyMaterialCorrupt),
            (.weakKeyDerivation("N too small"), .keyMaterialCorrupt),
            (.unwrapFailed, .keyMaterialCorrupt),
            (.writeFailed("No space left on device"), .fileSystem),
            (.writeFailed(errorNumber: ENOSPC), .diskFull),
            (.writeFailed(errorNumber: EDQUOT), .diskFull),
            (.writeFailed(errorNumber: EIO), .ioError),
            (.writeFailed(errorNumber: EACCES), .fileSystem),
        ]
        for (keyError, kind) in cases {
            let error = StoreError(keyError)
            #expect(error == kind, "\(keyError)")
            #expect((error.underlyingError as? KeyError)?.description == keyError.description, "\(keyError)")
        }
    }

    @Test func descriptionsAreOneSentenceWithTheReason() {
        #expect(StoreError.wrongPassphrase.description == "The passphrase is wrong.")
        #expect(StoreError.storeNotFound("/data/s.db").description == "No store at /data/s.db.")
        #expect(StoreError.invalidItem("every item needs a valid string id").description == "Invalid item: every item needs a valid string id")
        #expect(StoreError.invalidPassphrase("The passphrase is empty.").description == "The passphrase is empty.")
        #expect(StoreError(KeyError.emptyPassphrase).description == KeyError.emptyPassphrase.description)
        #expect(
            StoreError.keyMaterialCorrupt("a data key must be 32 bytes").description
                == "The store's key file is damaged or was modified: a data key must be 32 bytes")
        #expect(
            StoreError.verificationFailed("integrity check").description
                == "The re-encrypted copy failed its check (integrity check); the store was left unchanged.")
        let sqlite = SQLiteError(code: .full, message: "database or disk is full")
        let database = StoreError.database(sqlite)
        #expect(database == .database && database.description == sqlite.description)
        #expect((database.underlyingError as? SQLiteError)?.code == .full)
    }
}
