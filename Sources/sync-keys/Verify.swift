import ArgumentParser
import Foundation
import SyncCLI
import SyncKeyMaintenance

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read the whole store and run the at-rest checks (exit 0 only if all pass).",
        discussion: """
            Checks: key file, rotation state, key-derivation floor, database header, SQLCipher library, \
            page size, integrity_check, every table read, file modes (600 files, 700 directory), no stray files.
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var unlock: UnlockOptions

    @Flag(name: .customLong("json"), help: "Print the report as JSON.")
    var json = false

    func run() throws {
        let report = try StoreKeys.verify(
            database: store.url, unlocker: try unlock.unlocker(for: store), allowInsecureProfile: KeyProfileOptions.allowsInsecureProfile)
        if json {
            try printJSON(report)
        } else {
            for check in report.checks {
                Terminal.print("\(check.passed ? "PASS" : "FAIL")  \(check.name): \(check.detail)")
            }
            let failed = report.checks.filter { !$0.passed }.count
            Terminal.print(
                failed == 0
                    ? "All \(report.checks.count) checks passed."
                    : "\(failed) of \(report.checks.count) checks failed.")
        }
        if !report.passed { throw ExitCode(ExitStatus.failure.rawValue) }
    }
}
