import NIOCore
import PostgresNIO
import SyncSQL

/// Attachment content in PostgreSQL: chunks of `bytea` in one system table
/// (``PostgresTableStorage/attachmentsTable``), so every server instance over the database
/// serves the same content. A chunk row is (the content's ``AttachmentKey/storedName``, the
/// offset it starts at, its bytes, whether the content is complete); each append is its own
/// committed statement, so a partial upload survives any instance. Two instances appending at
/// one offset collide on the primary key: the second is refused (409).
struct PostgresAttachmentContent: AttachmentContentStore {
    let storage: PostgresTableStorage

    private var table: String { PostgresTableStorage.attachmentsTable }

    func held(_ key: AttachmentKey) async throws -> HeldContent {
        let sql: SQLFragment = """
            SELECT coalesce(sum(octet_length("data")), 0)::BIGINT, coalesce(bool_and("complete"), FALSE) \
            FROM \(identifier: table) WHERE "key" = \(bind: .text(try key.storedName))
            """
        let rows = try await run(sql)
        guard let row = rows.first else { return .none }
        let (count, complete) = try row.decode((Int64, Bool).self)
        return HeldContent(count: count, complete: complete)
    }

    func append(_ key: AttachmentKey, _ bytes: ByteBuffer, at offset: Int64) async throws {
        let sql: SQLFragment = """
            INSERT INTO \(identifier: table) ("key", "start", "data") \
            VALUES (\(bind: .text(try key.storedName)), \(bind: .integer(offset)), \(bind: .blob(Array(bytes.readableBytesView))))
            """
        do {
            _ = try await run(sql)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw AttachmentError.offsetMoved(try await held(key).count)
        }
    }

    func flush(_ key: AttachmentKey) {}

    func truncate(_ key: AttachmentKey, to count: Int64) async throws {
        // Appends start at offsets the content held, so `count` (the start of a request's
        // appends, or 0) is a chunk boundary.
        let sql: SQLFragment = """
            DELETE FROM \(identifier: table) WHERE "key" = \(bind: .text(try key.storedName)) \
            AND "start" >= \(bind: .integer(count)) AND NOT "complete"
            """
        _ = try await run(sql)
    }

    func complete(_ key: AttachmentKey) async throws {
        let name = try key.storedName
        // A marker row before the content, so that an empty content is complete too.
        let marker: SQLFragment = """
            INSERT INTO \(identifier: table) ("key", "start", "data", "complete") \
            VALUES (\(bind: .text(name)), -1, ''::BYTEA, TRUE) ON CONFLICT DO NOTHING
            """
        _ = try await run(marker)
        _ = try await run("UPDATE \(identifier: table) SET \"complete\" = TRUE WHERE \"key\" = \(bind: .text(name))")
    }

    func read(_ key: AttachmentKey, at offset: Int64, limit: Int) async throws -> ByteBuffer {
        let sql: SQLFragment = """
            SELECT "start", "data" FROM \(identifier: table) WHERE "key" = \(bind: .text(try key.storedName)) \
            AND "start" <= \(bind: .integer(offset)) ORDER BY "start" DESC LIMIT 1
            """
        guard let row = try await run(sql).first else { return ByteBuffer() }
        let (start, data) = try row.decode((Int64, ByteBuffer).self)
        let skip = Int(offset - start)
        guard start >= 0, skip < data.readableBytes else { return ByteBuffer() }
        return data.getSlice(at: data.readerIndex + skip, length: min(limit, data.readableBytes - skip)) ?? ByteBuffer()
    }

    /// Deletes the chunks in the open transaction (``PostgresTableStorage/inTransaction(_:)``):
    /// its commit or rollback decides.
    func stageRemoval(_ key: AttachmentKey) async throws {
        _ = try await run("DELETE FROM \(identifier: table) WHERE \"key\" = \(bind: .text(try key.storedName))")
    }

    func finishRemoval(_ key: AttachmentKey) {}

    func restoreRemoved(_ key: AttachmentKey) {}

    private func run(_ sql: SQLFragment) async throws -> [PostgresRow] {
        let storage = self.storage
        let query = storage.counted(sql.statement(in: .postgres))
        return try await storage.leased { connection in try await storage.run(query, on: connection) }
    }
}

extension PostgresTableStorage {
    /// The system table of attachment content (see ``PostgresAttachmentContent``).
    static let attachmentsTable = "__ciphersync_attachments"

    /// Creates the attachment content table when it is missing.
    func prepareAttachments(on connection: PostgresConnection) async throws {
        let create: SQLFragment = """
            CREATE TABLE IF NOT EXISTS \(identifier: Self.attachmentsTable) (\
            "key" TEXT COLLATE "C" NOT NULL, "start" BIGINT NOT NULL, "data" BYTEA NOT NULL, \
            "complete" BOOLEAN NOT NULL DEFAULT FALSE, PRIMARY KEY ("key", "start"))
            """
        _ = try await run(counted(create.statement(in: .postgres)), on: connection)
    }
}
