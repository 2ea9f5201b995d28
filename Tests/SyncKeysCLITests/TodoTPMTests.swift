import Foundation
import SyncKeys
import SyncTestSupport
import Testing

/// `todo --unlock tpm` opens its store through the store's TPM slot: with the PIN from a
/// descriptor, refusing a wrong PIN (exit 8) and a store moved to another TPM (exit 10).
@Suite struct TodoTPMSlotTests {
    @Test func todoOpensItsStoreThroughTheTPMSlot() async throws {
        let directory = try TemporaryDirectory(prefix: "todo-tpm")
        defer { directory.remove() }
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let todo = BuiltTool("todo", environment: ["CIPHERSYNC_ALLOW_INSECURE_PROFILE": "1"])
        let path = directory.path("todo.db")
        let device = ["--store", path, "--server", "http://127.0.0.1:1", "--profile", "insecure-test"]
        let passphrase = ["CIPHERSYNC_PASSPHRASE": makePassphrase()]
        let added = try await todo.run(device + ["add", "Check the pump"], environment: passphrase)
        try #require(added.exitCode == 0, "\(added)")
        let slot = try CLI.run(
            ["add-tpm-slot", "--store", path, "--pin", "--new-pin-fd", "3"],
            environment: passphrase.merging(["CIPHERSYNC_TCTI": tpm.tcti]) { $1 }, descriptors: [3: Array("3141\n".utf8)])
        try #require(slot.exitCode == 0, "\(slot)")

        let throughTPM = device + ["--unlock", "tpm", "--tcti", tpm.tcti, "--pin-fd", "3"]
        let listed = try todo.run(throughTPM + ["list"], descriptors: [3: Array("3141\n".utf8)])
        #expect(listed.exitCode == 0 && listed.stdout.contains("Check the pump"), "\(listed)")
        let wrong = try todo.run(throughTPM + ["list"], descriptors: [3: Array("0000\n".utf8)])
        #expect(wrong.exitCode == 8 && wrong.stderr.contains("The PIN is wrong."), "\(wrong)")

        let other = try SoftwareTPM.start()
        defer { other.stop() }
        let moved = try todo.run(device + ["--unlock", "tpm", "--tcti", other.tcti, "--pin-fd", "3", "list"], descriptors: [3: Array("3141\n".utf8)])
        #expect(moved.exitCode == 10, "\(moved)")
    }
}
