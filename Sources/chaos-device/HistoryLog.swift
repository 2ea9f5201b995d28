import Foundation
import SyncWire

/// The history a device writes: one JSON object per line, appended with one `write(2)` each, so
/// that a line written before a `kill -9` is in the file.
final class HistoryLog: Sendable {
    private let descriptor: Int32
    /// The device's name, in every line.
    let device: String

    init(path: String, device: String) throws {
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw DeviceError.cannotOpenLog(path) }
        self.device = device
    }

    /// Appends `fields` with the device, the process id and the wall-clock time (seconds, shared by
    /// every process of a run on one machine).
    func write(_ event: String, _ fields: JSONObject = [:]) {
        var line = fields
        line["ev"] = .string(event)
        line["dev"] = .string(device)
        line["pid"] = .int(Int64(getpid()))
        line["t"] = .double(Date().timeIntervalSince1970)
        guard var data = try? JSONWriter.data(line) else { return }
        data.append(UInt8(ascii: "\n"))
        appendAll(data, to: descriptor)
    }
}

/// Writes all of `data` to `descriptor` (a file opened for appending); a failure drops the rest.
private func appendAll(_ data: Data, to descriptor: Int32) {
    data.withUnsafeBytes { bytes in
        guard let start = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, start + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

/// Why the device cannot run.
enum DeviceError: Error, CustomStringConvertible {
    case cannotOpenLog(String)
    case badCommand(String)
    case notOpen
    case noPassphrase

    var description: String {
        switch self {
        case .cannotOpenLog(let path): return "cannot open the history log \(path)"
        case .badCommand(let text): return "bad command: \(text)"
        case .notOpen: return "the store is not open"
        case .noPassphrase: return "none of the passphrases opens the store"
        }
    }
}
