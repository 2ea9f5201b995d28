import Foundation

/// Shows the progress of a long step: a redrawn bar on a terminal, and plain lines otherwise (one
/// per tenth, so logs stay short). Writes to standard error, so standard output keeps results.
///
/// Not Sendable: use it from the thread that runs the work.
public final class ProgressDisplay {
    private let label: String
    private let isTerminal: Bool
    private var lastShown = -1
    private var drawn = false

    /// - Parameters:
    ///   - label: What is progressing, e.g. `"re-encrypting"`.
    ///   - isTerminal: Draw a bar (default: whether standard error is a terminal).
    public init(label: String, isTerminal: Bool = Terminal.isErrorTerminal) {
        self.label = label
        self.isTerminal = isTerminal
    }

    /// Reports `done` of `total` units (pages).
    public func update(done: Int, total: Int) {
        guard total > 0 else { return }
        let percent = min(100, done * 100 / total)
        if isTerminal {
            guard percent != lastShown else { return }
            lastShown = percent
            let width = 30
            let filled = width * percent / 100
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            Terminal.write("\r\(label) [\(bar)] \(percent)% \(done)/\(total) pages", to: STDERR_FILENO)
            drawn = true
        } else {
            let tenth = percent / 10
            guard tenth != lastShown else { return }
            lastShown = tenth
            Terminal.printError("\(label): \(percent)% (\(done)/\(total) pages)")
        }
    }

    /// Ends the bar's line on a terminal.
    public func finish() {
        if isTerminal && drawn {
            Terminal.write("\n", to: STDERR_FILENO)
            drawn = false
        }
    }
}
