package import Foundation
package import SyncKeys

extension StoreKeys {
    /// Reads the envelope of `database`, mapping key errors to ``StoreError``.
    package static func readEnvelope(of database: URL) throws -> KeyEnvelope {
        do throws(KeyError) {
            return try KeyEnvelope.read(from: KeyEnvelope.url(forDatabase: database))
        } catch {
            throw StoreError(error)
        }
    }

    /// Unlocks `envelope` with the secret of `slot`, mapping key errors to ``StoreError``.
    package static func unlock(
        _ envelope: KeyEnvelope, secret: SecretBytes, slot: String = KeyEnvelope.passphraseSlot, allowInsecureProfile: Bool
    ) throws -> UnlockedKeys {
        do throws(KeyError) {
            return try envelope.unlockKeys(secret: secret, slot: slot, allowInsecureProfile: allowInsecureProfile)
        } catch {
            throw StoreError(error)
        }
    }

    /// Unlocks `envelope` through `unlocker`'s slot, mapping key errors to ``StoreError``.
    package static func unlock(
        _ envelope: KeyEnvelope, using unlocker: any SlotUnlocker, allowInsecureProfile: Bool
    ) throws -> UnlockedKeys {
        do throws(KeyError) {
            return try envelope.unlockKeys(with: unlocker, allowInsecureProfile: allowInsecureProfile)
        } catch {
            throw StoreError(error)
        }
    }

    /// Writes `envelope` beside `database` (atomically), mapping key errors to ``StoreError``.
    package static func write(_ envelope: KeyEnvelope, forDatabase database: URL) throws {
        let url = KeyEnvelope.url(forDatabase: database)
        do throws(KeyError) {
            try envelope.write(to: url)
        } catch {
            if error == .writeFailed { throw StoreError.keyFileNotWritten(error, path: url.path) }
            throw StoreError(error)
        }
    }

    /// Runs a key-envelope transformation, mapping key errors to ``StoreError``.
    package static func transform<T>(_ body: () throws(KeyError) -> T) throws -> T {
        do throws(KeyError) {
            return try body()
        } catch {
            throw StoreError(error)
        }
    }
}
