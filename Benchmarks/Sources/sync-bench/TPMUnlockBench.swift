import BenchProcesses
import Foundation
import SyncKeys
import SyncTPM

/// `tpm-unlock`: unlocking a key envelope through its TPM slot (a software TPM this process
/// starts on loopback, each unlock a new connection as a tool makes it), without and with a PIN,
/// beside the passphrase slot of the default profile.
enum TPMUnlockBench {
    static func measure(runs: Int, progress: (String) -> Void) throws -> [BenchRecord] {
        progress("starting a software TPM")
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let passphrase = try SecretBytes.random(count: 24)
        let (envelope, _) = try KeyEnvelope.create(passphrase: passphrase, profile: .default)
        let keys = try envelope.unlockKeys(secret: passphrase)
        let device = try TPMDevice(configuration: tpm.tcti)
        var records: [BenchRecord] = []
        for (name, pin) in [("tpm", nil), ("tpm-pin", SecretBytes(Array("482913".utf8)))] as [(String, SecretBytes?)] {
            progress("unlock through the TPM slot (\(name))")
            let secret = try SecretBytes.random(count: 32)
            let binding = try device.seal(secret, pin: pin, pcrs: [])
            defer { _ = try? device.evict(handle: binding.handle, name: binding.name) }
            let withSlot = try envelope.withTPMSlot(sealedSecret: secret, binding: binding, envelopeKey: keys.envelopeKey)
            let samples = try (0..<runs).map { _ in
                let unlocker = TPMSlotUnlocker(configuration: tpm.tcti, pin: pin)
                let seconds = try ContinuousClock().measure { _ = try withSlot.unlockKeys(with: unlocker) }.seconds
                return BenchSample(seconds: seconds, items: 1)
            }
            records.append(
                BenchRecord(
                    workload: "tpm-unlock.\(name)", title: "unlock the key envelope through its TPM slot (swtpm, \(pin == nil ? "no PIN" : "PIN"))",
                    store: nil, unit: "unlocks/s", samples: samples))
        }
        progress("unlock through the passphrase slot (default profile)")
        let samples = try (0..<runs).map { _ in
            BenchSample(seconds: try ContinuousClock().measure { _ = try envelope.unlockKeys(secret: passphrase) }.seconds, items: 1)
        }
        records.append(
            BenchRecord(
                workload: "tpm-unlock.passphrase", title: "unlock the key envelope through its passphrase slot (default profile)",
                store: nil, unit: "unlocks/s", samples: samples))
        return records
    }
}
