import ArgumentParser
import Foundation
import SyncCLI
import SyncKeyMaintenance
import SyncKeys
import SyncTPM

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the store's key status (no passphrase needed).",
        discussion: "Format, key derivation, data key id and age, rotation due, interrupted rotation, key slots.")

    @OptionGroup var store: StoreLocation

    @Option(name: .customLong("rotation-period-days"), help: "Days after which the data key is due for rotation.")
    var rotationPeriodDays: Int = StoreKeys.defaultRotationPeriodDays

    @Flag(name: .customLong("json"), help: "Print JSON for machines.")
    var json = false

    @OptionGroup var tpm: TPMOptions

    func validate() throws {
        if rotationPeriodDays < 1 { throw ValidationError("--rotation-period-days must be at least 1.") }
    }

    func run() throws {
        var status = try StoreKeys.status(forDatabase: store.url, rotationPeriodDays: rotationPeriodDays)
        if status.slots.contains(where: { $0.tpm?.pin == true }) {
            status.tpmLockout = try? TPMDevice(configuration: tpm.configuration).lockoutParameters()
        }
        if json { return try printJSON(status) }
        for line in Self.lines(status) { Terminal.print(line) }
    }

    static func lines(_ s: StoreKeyStatus) -> [String] {
        var lines = ["Store:                \(s.database)"]
        if s.shredded {
            lines.append("Shredded:             yes: no key opens the store any more")
            if !s.tpmObjectsToEvict.isEmpty {
                lines.append(
                    "TPM objects left:     \(s.tpmObjectsToEvict.joined(separator: ", ")) (run sync-keys shred again where the TPM is reachable)")
            }
            return lines
        }
        guard s.formatVersion != nil else {
            lines.append("Encrypted:            no (plain SQLite; run sync-keys encrypt to encrypt it)")
            return lines
        }
        lines.append("Encrypted:            \(s.encrypted ? "yes" : "NO: the database header is plaintext")")
        if let cipher = s.cipher, let version = s.formatVersion {
            lines.append(
                "Key file format:      \(version) (SQLCipher compatibility \(cipher.compatibility), page size \(cipher.pageSize), HMAC \(cipher.hmac ? "on" : "off"))"
            )
        }
        if let kdf = s.slots.first(where: { $0.id == "passphrase" })?.kdf {
            lines.append("Key derivation:       \(describe(kdf))")
        }
        lines.append("Data key:             \(s.keyId ?? "?"), created \(s.dataKeyCreatedAt ?? "?")")
        lines.append("Passphrase set:       \(s.passphraseSetAt ?? "?")")
        let due = s.rotationDueAt ?? "?"
        lines.append("Rotation:             \(s.rotationDue ? "DUE since \(due)" : "next due \(due)") (period \(s.rotationPeriodDays) days)")
        lines.append("Interrupted rotation: \(s.rotationInterrupted ? "YES: run sync-keys rotate (or open the store) to finish it" : "no")")
        lines.append("Key slots:            \(s.slots.map { "\($0.id) (set \($0.createdAt))" }.joined(separator: ", "))")
        for slot in s.slots { lines.append("  \(describe(slot))") }
        if let lockout = s.tpmLockout { lines.append(describe(lockout)) }
        if !s.leftoverFiles.isEmpty {
            lines.append("Leftover files:       \(s.leftoverFiles.joined(separator: ", ")) (removed by the next rotate or open)")
        }
        return lines
    }

    /// One line per slot: its type, creation date and policy; nothing secret.
    static func describe(_ slot: StoreKeyStatus.SlotInfo) -> String {
        guard let tpm = slot.tpm else { return "\(slot.id): \(slot.kdf.algorithm), created \(slot.createdAt)" }
        let pcrs = tpm.pcrs.isEmpty ? "no PCR policy" : "PCRs \(tpm.pcrs.map(String.init).joined(separator: ",")) (\(tpm.pcrBank))"
        return "tpm: TPM object \(tpm.handle), created \(slot.createdAt), \(tpm.pin ? "PIN" : "no PIN"), \(pcrs)"
    }

    /// The TPM's dictionary-attack parameters, for a person.
    static func describe(_ lockout: TPMDevice.LockoutParameters) -> String {
        "TPM lockout:          after \(lockout.maxTries) wrong PINs (now \(lockout.failedTries)); one is forgiven every \(lockout.recoverySeconds) s"
    }

    static func describe(_ kdf: StoreKeyStatus.KDFInfo) -> String {
        var text = kdf.algorithm
        if let n = kdf.n, let r = kdf.r, let p = kdf.p { text += " N=\(n) r=\(r) p=\(p)" }
        if let iterations = kdf.iterations { text += " \(iterations) iterations" }
        text += ", salt \(kdf.saltBytes) bytes, \(kdf.meetsFloor ? "meets the floor" : "BELOW the floor")"
        return text
    }
}
