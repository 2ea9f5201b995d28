import Foundation
import SyncWire

// chaos-device: one device of the chaos suite (scripts/chaos). It reads one JSON command per line
// on standard input, runs it, and answers one JSON line on standard output; its history goes to
// the log file. The secrets (passphrases, the sign-in token) come in the commands, never in argv.
// Environment: CHAOS_DEVICE (name), CHAOS_STORE (database path), CHAOS_LOG (history path),
// CHAOS_SERVER (base URL), CHAOS_POLICY (client, server, cancel, random), CHAOS_SEED.

let environment = ProcessInfo.processInfo.environment
guard let name = environment["CHAOS_DEVICE"], let storePath = environment["CHAOS_STORE"], let logPath = environment["CHAOS_LOG"],
    let server = environment["CHAOS_SERVER"].flatMap(URL.init(string:))
else {
    FileHandle.standardError.write(Data("chaos-device: set CHAOS_DEVICE, CHAOS_STORE, CHAOS_LOG and CHAOS_SERVER\n".utf8))
    exit(2)
}
let log: HistoryLog
do {
    log = try HistoryLog(path: logPath, device: name)
} catch {
    FileHandle.standardError.write(Data("chaos-device: \(error)\n".utf8))
    exit(2)
}
log.write("start")
let device = Device(
    log: log, storeURL: URL(fileURLWithPath: storePath), serverURL: server, policy: ConflictPolicy(environment["CHAOS_POLICY"] ?? "client"),
    seed: UInt64(environment["CHAOS_SEED"] ?? "") ?? 1)

/// Standard input's lines, read on a thread of their own (a blocking read would hold one of the
/// few cooperative threads).
let lines = AsyncStream<String> { continuation in
    let reader = Thread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }
    reader.start()
}

for await line in lines {
    guard case .object(let command)? = try? JSONParser.parse(Data(line.utf8)) else {
        log.write("bad", ["line": .string(String(line.prefix(200)))])
        continue
    }
    let reply = await device.run(command)
    if let data = try? JSONWriter.data(reply) {
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
    if command["op"]?.stringValue == "close" { break }
}
log.write("exit")
exit(0)
