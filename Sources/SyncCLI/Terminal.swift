import Foundation

/// Writing to the terminal: results on standard output, messages and progress on standard error.
public enum Terminal {
    /// Whether standard error is a terminal (progress bars are drawn only then).
    public static var isErrorTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether standard input is a terminal (passphrase prompts are used only then).
    public static var isInputTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Writes one line to standard output.
    public static func print(_ line: String) {
        write(line + "\n", to: STDOUT_FILENO)
    }

    /// Writes one line to standard error.
    public static func printError(_ line: String) {
        write(line + "\n", to: STDERR_FILENO)
    }

    /// Writes `text` to a file descriptor, retrying short writes.
    public static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Foundation.write(descriptor, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    /// The one-line message for an error: a tool's own text, never a stack of details.
    public static func message(for error: any Error) -> String {
        let text = String(describing: error)
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
