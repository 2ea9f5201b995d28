import Foundation
import Testing

/// The documents' Swift code blocks compile against `import CipherSync` alone: this target is built
/// from them (Examples.swift, written by scripts/examples), so an example that no longer fits the API
/// breaks the build, and an example changed in a document but not here fails this test.
@Suite struct ExamplesAreCurrentTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theCompiledExamplesAreTheDocumentsCodeBlocks() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("scripts/examples").path, "--check"]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(message)")
    }

    @Test func theExamplesImportCipherSyncAloneAndCoverTheReadme() throws {
        let examples = try String(contentsOf: root.appendingPathComponent("Tests/DocumentationExamplesTests/Examples.swift"), encoding: .utf8)
        let imports = examples.split(separator: "\n").filter { $0.hasPrefix("import ") }
        #expect(imports == ["import CipherSync", "import CipherSyncStoreConformance", "import Foundation"])
        #expect(examples.contains("// README.md, line "), "the README's quick start is among the compiled examples")
    }
}
