import Logging
import SyncServer
import Synchronization
import Testing

/// The server's log handler writes what swift-log's stream handler writes: the logger's
/// metadata in each line (a line's own metadata winning), nothing below the logger's level, and
/// a logger's metadata its own.
@Suite struct ServerLogHandlerTests {
    /// The lines written, kept in memory.
    final class Lines: TextOutputStream, Sendable {
        private let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
        var all: String { text.withLock { $0 } }
    }

    @Test func linesCarryTheLoggersMetadata() {
        let lines = Lines()
        var logger = Logger(label: "server-test") { ServerLogHandler(label: $0, stream: lines) }
        logger.logLevel = .info
        logger[metadataKey: "request"] = "r1"
        logger[metadataKey: "table"] = "todo"
        logger.info("first", metadata: ["table": "override"])
        logger.debug("below the level")
        var copy = logger
        copy[metadataKey: "request"] = "r2"
        logger.notice("second")
        let written = lines.all.split(separator: "\n")
        #expect(written.count == 2)
        #expect(written.first?.contains("server-test:") == true)
        #expect(written.first?.contains("request=r1") == true)
        #expect(written.first?.contains("table=override") == true)
        #expect(written.first?.contains("table=todo") == false)
        #expect(written.first?.hasSuffix("first") == true)
        #expect(written.last?.contains("request=r1") == true)
        #expect(written.last?.contains("table=todo") == true)
        #expect(written.last?.hasSuffix("second") == true)
        #expect(!lines.all.contains("below the level"))
        #expect(copy[metadataKey: "request"] == "r2")
    }
}
