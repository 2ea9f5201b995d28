import Foundation
import SyncCLI
import SyncKeyMaintenance
import SyncKeys
import Testing

/// The shared CLI module in-process: secrets from the environment and descriptors, exit codes.
@Suite(.serialized) struct SyncCLITests {
    @Test func environmentSecretsAreTakenOutOfTheEnvironmentAndHandedOutOnce() {
        let name = "CIPHERSYNC_TEST_SECRET_\(UInt32.random(in: 0...UInt32.max))"
        let value = makePassphrase()
        setenv(name, value, 1)
        SecretEnvironment.captureAndClear([name])
        #expect(getenv(name) == nil)
        #expect(ProcessInfo.processInfo.environment[name] == nil)
        #expect(SecretEnvironment.take(name) == SecretBytes(Array(value.utf8)))
        #expect(SecretEnvironment.take(name) == nil)
    }

    @Test func aSecretLineEndsAtTheFirstNewlineAndLeavesTheRestUnread() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let first = makePassphrase(), second = makePassphrase()
        let bytes = Array("\(first)\r\n\(second)\nlast-no-newline".utf8)
        #expect(write(fds[1], bytes, bytes.count) == bytes.count)
        close(fds[1])
        #expect(try SecretReader.readLine(from: fds[0], source: "test") == SecretBytes(Array(first.utf8)))
        #expect(try SecretReader.readLine(from: fds[0], source: "test") == SecretBytes(Array(second.utf8)))
        #expect(try SecretReader.readLine(from: fds[0], source: "test") == SecretBytes(Array("last-no-newline".utf8)))
        #expect(try SecretReader.readLine(from: fds[0], source: "test").isEmpty)
    }

    @Test func aSecretLongerThanTheLimitIsRefusedWithoutReadingOnAndOn() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let bytes = [UInt8](repeating: UInt8(ascii: "z"), count: Passphrase.maximumLength + 10)
        #expect(write(fds[1], bytes, bytes.count) == bytes.count)
        close(fds[1])
        do {
            _ = try SecretReader.readLine(from: fds[0], source: "test")
            Issue.record("an over-long secret was accepted")
        } catch let error as CLIError {
            #expect(error.status == .usage)
        }
        var rest = [UInt8](repeating: 0, count: 64)
        #expect(read(fds[0], &rest, rest.count) == 8, "the reader stopped right after the limit")
    }

    @Test func errorsMapToTheDocumentedExitCodes() {
        #expect(ExitStatus.for(StoreError.wrongPassphrase) == .wrongPassphrase)
        #expect(ExitStatus.for(KeyError.wrongPassphrase).rawValue == 3)
        #expect(ExitStatus.for(StoreError.keyMaterialMissing).rawValue == 4)
        #expect(ExitStatus.for(StoreError.keyMaterialCorrupt("x")).rawValue == 4)
        #expect(ExitStatus.for(StoreError.corruptOrKeyMismatch).rawValue == 4)
        #expect(ExitStatus.for(KeyError.weakKeyDerivation("x")).rawValue == 4)
        #expect(ExitStatus.for(StoreError.invalidPassphrase("x")).rawValue == 2)
        #expect(ExitStatus.for(KeyError.emptyPassphrase).rawValue == 2)
        #expect(ExitStatus.for(CLIError.usage("x")).rawValue == 2)
        #expect(ExitStatus.for(StoreError.storeInUse("x")).rawValue == 1)
        #expect(ExitStatus.for(StoreError.fileSystem("x")).rawValue == 1)
        #expect(ExitStatus.for(CocoaError(.fileNoSuchFile)).rawValue == 1)
    }
}
