import Foundation
import Logging
import PostgresNIO
import SyncSQL
import SyncWire

/// Changes between the server instances over one PostgreSQL database: a write `NOTIFY`s the
/// channel ``channel`` inside its transaction (so the notification is delivered when, and only
/// if, it commits), and each instance holds one connection that `LISTEN`s to it and announces
/// what it hears on its storage's ``ChangeFeed``.
///
/// The payload is JSON: `{"i": instance, "t": table, "o": owner or null, "r": removal}`; an
/// instance ignores its own (it announced them itself at commit). An owner too long for a payload
/// is left out (`"o"` absent): the listeners then read every scope of the table.
extension PostgresTableStorage {
    /// The channel of the change notifications.
    static let channel = "ciphersync_changes"
    /// Longer payloads leave the owner out (PostgreSQL's limit is 8,000 bytes).
    static let maximumPayloadBytes = 4_000

    /// The `SELECT pg_notify(…)` of a change.
    func notification(_ change: TableChange) -> SQLStatement {
        var payload: JSONObject = ["i": .string(instance)]
        switch change {
        case .written(let table, let scope), .removed(let table, let scope):
            payload["t"] = .string(table)
            if case .removed = change { payload["r"] = .bool(true) }
            if let scope { payload["o"] = scope.owner.map(JSONValue.string) ?? .null }
        case .anything: break
        }
        var text = (try? JSONWriter.string(.object(payload))) ?? ""
        if text.utf8.count > Self.maximumPayloadBytes {
            payload["o"] = nil
            text = (try? JSONWriter.string(.object(payload))) ?? ""
        }
        let sql: SQLFragment = "SELECT pg_notify(\(bind: .text(Self.channel)), \(bind: .text(text)))"
        return sql.statement(in: .postgres)
    }

    /// The change a notification of another instance announces; `nil` for this instance's own
    /// and for a payload this server did not write.
    static func change(_ payload: String, instance: String) -> TableChange? {
        guard let object = try? JSONParser.parseObject(payload), object["i"]?.stringValue != instance,
            let table = object["t"]?.stringValue, TableName.isServed(table)
        else { return nil }
        let scope: RowScope?
        switch object["o"] {
        case nil: scope = nil
        case .string(let owner)?: scope = .owner(owner)
        default: scope = .shared
        }
        return object["r"] == .bool(true) ? .removed(table: table, scope: scope) : .written(table: table, scope: scope)
    }

    /// Listens until cancelled: connects, `LISTEN`s, announces ``TableChange/anything`` (the
    /// watchers read what they may have missed while no connection listened, once), then each
    /// notification; after the connection drops, tries again (waiting 100 ms, doubling to 5 s).
    static func listen(
        _ configuration: PostgresConnection.Configuration, instance: String, feed: ChangeFeed,
        observer: (any WriteObserver)?, logger: Logger
    ) async {
        var delay = Duration.milliseconds(100)
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: attempt, logger: logger)
                await observer?.listenerConnected(connection)
                do {
                    try await connection.listen(on: channel) { notifications in
                        delay = .milliseconds(100)
                        feed.publish(.anything)
                        await observer?.listening(.listening)
                        for try await notification in notifications {
                            if let change = change(notification.payload, instance: instance) { feed.publish(change) }
                        }
                    }
                } catch {
                    logger.debug("The change listener's connection ended", metadata: ["error": "\(String(reflecting: error))"])
                }
                try? await connection.close()
            } catch {
                logger.debug("The change listener cannot connect", metadata: ["error": "\(String(reflecting: error))"])
            }
            guard !Task.isCancelled else { return }
            await observer?.listening(.lost)
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }
}
