import Foundation
import SyncTestSupport
import Testing

/// The README's quick start: two commands, the first runs `todo demo`, the second the tests, and
/// CI runs the second. (`scripts/test` also runs the first one at its end, so CI runs both on a
/// clean clone.)
@Suite struct QuickStartTests {
    func text(_ path: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func theReadmeQuickStartIsTwoCommandsAndCIRunsTheSecond() throws {
        let readme = try text("README.md")
        let section = try #require(readme.components(separatedBy: "## Quick start").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```").dropFirst().first)
        let commands = block.split(separator: "\n").dropFirst()  // the fence's language tag
            .map { $0.split(separator: "#", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            .filter { !$0.isEmpty }
        #expect(commands == ["bash scripts/demo", "bash scripts/test"])

        let ci = try text(".ci/run")
        #expect(ci.split(separator: "\n").contains("exec bash scripts/test"))
        let demo = try text("scripts/demo")
        #expect(demo.contains("bash scripts/setup") && demo.contains(".build/debug/todo demo"))
        let setup = try text("scripts/setup")
        for package in ["libsqlcipher-dev", "libssl-dev", "sqlcipher"] {
            #expect(setup.contains(package), "scripts/setup installs \(package)")
        }
        let test = try text("scripts/test")
        #expect(test.contains("bash scripts/setup") && test.contains("swift test") && test.contains("bash scripts/demo"))
    }

    @Test func theDemoRunsTheWholeStoryAndEveryStepHolds() async throws {
        try #require(todo.isBuilt, "build the todo product first (scripts/test does)")
        let home = try TemporaryDirectory(prefix: "todo-demo")
        defer { home.remove() }
        let result = try await todo.run(["demo"], environment: ["TMPDIR": home.url.path, "CIPHERSYNC_ALLOW_INSECURE_PROFILE": nil])
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.last == "Every step held.")
        #expect(!result.stdout.contains("FAILED"))
        #expect(result.stderr.isEmpty)
        for step in ["conflict", "rotat", "passphrase", "encrypted"] {
            #expect(result.stdout.lowercased().contains(step), "the demo shows the \(step) step")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.url.path).isEmpty, "the demo cleans up after itself")
    }
}
