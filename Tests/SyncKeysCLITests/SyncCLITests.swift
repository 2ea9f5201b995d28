import ArgumentParser
import Foundation
import SyncCLI
import SyncKeyMaintenance
import SyncKeys
import Testing

/// The shared CLI module in-process: secrets from the environment and descriptors, exit codes.
@Suite(.serialized) struct SyncCLITests {
    @Test func environmentSecretsAreMovedOutOfTheBlockWipedAndHandedOutOnce() throws {
        // A block made here, shaped like `environ`: the test process's own environment is never
        // changed (other suites read it while they spawn processes).
        let name = "CIPHERSYNC_TEST_SECRET", other = "CIPHERSYNC_TEST_OTHER"
        let value = makePassphrase(), otherValue = makePassphrase()
        let texts = ["HOME=/root", "\(name)X=decoy", "\(name)=\(value)", "LANG=C.UTF-8", "\(other)=\(otherValue)", "\(name)=second"]
        let strings = texts.map { strdup($0) }
        defer { for string in strings { free(string) } }
        let block = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: strings.count + 1)
        defer { block.deallocate() }
        for (index, string) in strings.enumerated() { block[index] = string }
        block[strings.count] = nil

        let environment = SecretEnvironment()
        environment.capture([name, other], from: block)
        var left: [String] = []
        var index = 0
        while let entry = block[index] {
            left.append(String(cString: entry))
            index += 1
        }
        #expect(left == ["HOME=/root", "\(name)X=decoy", "LANG=C.UTF-8"], "the captured entries are gone, the others kept in order")
        for (text, string) in zip(texts, strings) where text.hasPrefix("\(name)=") || text.hasPrefix("\(other)=") {
            let prefix = text.prefix { $0 != "=" }.utf8.count + 1
            let wiped = UnsafeRawBufferPointer(start: try #require(string) + prefix, count: text.utf8.count - prefix)
            #expect(wiped.allSatisfy { $0 == 0 }, "the value's bytes are overwritten in place")
        }
        #expect(environment.take(name) == SecretBytes(Array(value.utf8)), "the first value is kept")
        #expect(environment.take(name) == nil, "handed out once")
        environment.discardAll()
        #expect(environment.take(other) == nil, "what was not taken is dropped")
    }

    @Test func aPassphraseIsReadFromTheCapturedEnvironmentWhenNoFileOrDescriptorIsGiven() throws {
        let value = makePassphrase()
        let environment = SecretEnvironment([SecretEnvironment.passphrase: SecretBytes(Array(value.utf8))])
        let options = try PassphraseOptions.parse([])
        #expect(try options.read(prompt: "unused", environment: environment) == SecretBytes(Array(value.utf8)))
        #expect(environment.take(SecretEnvironment.passphrase) == nil, "the reader took it")
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
        #expect(ExitStatus.for(StoreError.diskFull("x")).rawValue == 6)
        #expect(ExitStatus.for(StoreError.ioError("x")).rawValue == 7)
        #expect(ExitStatus.for(CocoaError(.fileNoSuchFile)).rawValue == 1)
    }
}
