import ArgumentParser
import Foundation
import SyncCLI
import SyncKeyMaintenance
import SyncKeys

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the store's key status (no passphrase needed).",
        discussion: "Format, key derivation, data key id and age, rotation due, interrupted rotation, key slots.")

    @OptionGroup var store: StoreLocation

    @Option(name: .customLong("rotation-period-days"), help: "Days after which the data key is due for rotation.")
    var rotationPeriodDays: Int = StoreKeys.defaultRotationPeriodDays

    @Flag(name: .customLong("json"), help: "Print JSON for machines.")
    var json = false

    func validate() throws {
        if rotationPeriodDays < 1 { throw ValidationError("--rotation-period-days must be at least 1.") }
    }

    func run() throws {
        let status = try StoreKeys.status(forDatabase: store.url, rotationPeriodDays: rotationPeriodDays)
        if json { return try printJSON(status) }
        for line in Self.lines(status) { Terminal.print(line) }
    }

    static func lines(_ s: StoreKeyStatus) -> [String] {
        var lines = ["Store:                \(s.database)"]
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
        if !s.leftoverFiles.isEmpty {
            lines.append("Leftover files:       \(s.leftoverFiles.joined(separator: ", ")) (removed by the next rotate or open)")
        }
        return lines
    }

    static func describe(_ kdf: StoreKeyStatus.KDFInfo) -> String {
        var text = kdf.algorithm
        if let n = kdf.n, let r = kdf.r, let p = kdf.p { text += " N=\(n) r=\(r) p=\(p)" }
        if let iterations = kdf.iterations { text += " \(iterations) iterations" }
        text += ", salt \(kdf.saltBytes) bytes, \(kdf.meetsFloor ? "meets the floor" : "BELOW the floor")"
        return text
    }
}
