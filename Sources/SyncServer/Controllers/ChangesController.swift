import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SyncEventLoop
import SyncSQL
import SyncWire

/// `GET /changes?tables=a,b`: the change notifications of some tables as server-sent events.
///
/// The route sits outside `/tables`, so it cannot collide with an item id (`changes` is a valid
/// id of `GET /tables/{table}/{id}`). It is authenticated and scoped like a read of each table:
/// a per-user table's events speak of the requesting user's rows only. An event says that a
/// table changed and its newest `updatedAt` (deleted rows included), never an item; clients pull
/// through the ordinary routes.
///
/// ```text
/// retry: 1000
///
/// id: todo|2026-11-23T05:50:00.123Z
/// event: change
/// data: {"table":"todo","updatedAt":"2026-11-23T05:50:00.123Z"}
///
/// : keep-alive
/// ```
///
/// A stream compares each table's state in its scope (the newest stamp of a write to it: its
/// rows' newest `updatedAt`, or a hard delete's stamp, which the storage records) with the last
/// one it sent. It reads the states from the
/// instance's ``ChangeHub``, whose one watcher per (table, scope) reads the storage only when the
/// storage announces a change (``ChangeFeed``: writes through this instance at once, writes
/// through other instances over the same PostgreSQL database through `LISTEN`/`NOTIFY`); a stream
/// itself never queries the storage, and a keep-alive reads nothing. The first look sends every
/// table whose state differs from the request's `Last-Event-ID` (the `id` of the last event
/// received), or every table when there is none, so a reconnecting client learns of what it
/// missed. A graceful shutdown ends every stream; so does a storage failure (clients reconnect).
struct ChangesController: Sendable {
    /// The most tables one stream may name.
    static let maximumTables = 64

    /// The storage failed to read a state of the stream: the stream ends (its client reconnects).
    struct StorageFailed: Error {}

    let hub: ChangeHub
    let configuration: ServerConfiguration

    func addRoutes(to router: Router<ServerRequestContext>) {
        let changes = router.group("changes")
        changes.add(middleware: AuthenticationMiddleware(authentication: configuration.authentication))
        changes.add(middleware: APIVersionMiddleware())
        changes.get { request, context in try await stream(request, context) }
    }

    func stream(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let tables = try Self.tables(QueryString.items(request.uri.query))
        let scopes = try tables.map { table -> (String, RowScope) in
            guard configuration.perUserTables.contains(TableName.attachmentOwner(of: table) ?? table) else { return (table, .shared) }
            guard let subject = context.identity?.subject else { throw TableError.unauthorized }
            return (table, .owner(subject))
        }
        let known = try ChangePositions(lastEventID: HTTPField.Name("Last-Event-ID").flatMap { request.headers[$0] })
        let (hub, settings, logger) = (hub, configuration.changeStream, context.logger)
        let connection = context.connection
        let body = ResponseBody { writer in
            // The stream runs on its connection's event loop: its writes go out from there.
            try await withTaskExecutorPreference(EventLoopExecutor(connection.eventLoop)) {
                var positions = known
                let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                // The hub wakes the stream after a change and once per keep-alive interval.
                let listener = hub.listen(scopes, signal: signal)
                // A device whose connection is reset (its network gone) ends its stream at once,
                // as NIO closes the channel, not at the next keep-alive the stream would fail to
                // write. (An orderly close is a half-close to HTTP: that stream ends at that write.)
                connection.closeFuture.whenComplete { _ in signal.finish() }
                defer {
                    hub.remove(listener)
                    signal.finish()
                }
                try await withGracefulShutdownHandler {
                    try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                    var lastWrite = ContinuousClock.now
                    var wakes = signals.makeAsyncIterator()
                    repeat {
                        var events = ""
                        for (table, scope) in scopes {
                            switch hub.look(table, scope: scope) {
                            case .loading: continue
                            case .failed: throw StorageFailed()
                            case .ready(let state):
                                guard positions.update(table, to: state) else { continue }
                                events += try Self.event(table: table, state: state, id: positions.eventID(tables))
                            }
                        }
                        if !events.isEmpty {
                            try await writer.write(ByteBuffer(string: events))
                            lastWrite = .now
                        } else if settings.keepAliveIsDue(after: ContinuousClock.now - lastWrite) {
                            try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                            lastWrite = .now
                        }
                    } while await wakes.next() != nil
                } onGracefulShutdown: {
                    signal.finish()
                }
                logger.debug("Change stream ended")
                try await writer.finish(nil)
            }
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        if let buffering = HTTPField.Name("X-Accel-Buffering") { headers[buffering] = "no" }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// The tables of `?tables=a,b`: valid names, at least one, at most ``maximumTables``, each
    /// once (names that differ only by ASCII case are one table).
    static func tables(_ items: [(name: String, value: String)]) throws -> [String] {
        guard let list = items.last(where: { $0.name == "tables" })?.value, !list.isEmpty else {
            throw TableError.badRequest("Name the tables to watch: ?tables=name1,name2")
        }
        var seen = Set<ColumnKey>()
        var tables: [String] = []
        for name in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            guard TableName.isServed(name) else { throw TableError.badRequest("Invalid table name") }
            if seen.insert(ColumnKey(name)).inserted { tables.append(name) }
        }
        guard tables.count <= maximumTables else {
            throw TableError.badRequest("A change stream watches at most \(maximumTables) tables")
        }
        return tables
    }

    /// One `change` event.
    static func event(table: String, state: ChangePositions.State, id: String) throws -> String {
        let data: JSONObject = ["table": .string(table), "updatedAt": state.updatedAt.map(JSONValue.string) ?? .null]
        return "id: \(id)\nevent: change\ndata: \(try JSONWriter.string(.object(data)))\n\n"
    }
}

/// The state a change stream last sent of each table, written as an event id
/// (`table|updatedAt`, comma-separated) and read back from `Last-Event-ID` (where an id of an
/// earlier server, `table|updatedAt|rows`, is read too, its row count ignored).
struct ChangePositions {
    /// A table's state: its newest stamp in the scope — of its rows' `updatedAt` and of its hard
    /// deletes — or none.
    struct State: Hashable {
        var updatedAt: String?
    }

    private var states: [ColumnKey: State] = [:]

    /// The positions of a `Last-Event-ID`, or none.
    /// - Throws: a 400 for an id this server did not write.
    init(lastEventID: String?) throws {
        guard let lastEventID, !lastEventID.isEmpty else { return }
        for entry in lastEventID.split(separator: ",") {
            let parts = entry.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 || (parts.count == 3 && Int(parts[2]).map { $0 >= 0 } == true), TableName.isServed(parts[0]),
                parts[1].isEmpty || WireDate.date(from: parts[1]) != nil
            else {
                throw TableError.badRequest("Last-Event-ID is not an event id of this server")
            }
            states[ColumnKey(parts[0])] = State(updatedAt: parts[1].isEmpty ? nil : parts[1])
        }
    }

    /// Records `state` for `table`; whether it differs from the one recorded before.
    mutating func update(_ table: String, to state: State) -> Bool {
        states.updateValue(state, forKey: ColumnKey(table)) != state
    }

    /// The event id of the recorded states of `tables`.
    func eventID(_ tables: [String]) -> String {
        tables.compactMap { table in
            states[ColumnKey(table)].map { "\(table)|\($0.updatedAt ?? "")" }
        }.joined(separator: ",")
    }
}

/// Wakes the change streams of a table after a write to it through this instance succeeded, for a
/// storage that announces no changes itself (``TableStorage/changeFeed``).
struct ChangeNotifyingMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let hub: ChangeHub

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        guard !hub.hasFeed, request.method != .get, request.method != .head, (200..<300).contains(response.status.code) else {
            return response
        }
        let segments = request.uri.path.split(separator: "/")
        if segments.count >= 2, segments[0] == "tables" || segments[0] == "batch", let table = PercentDecoding.decode(segments[1]),
            TableName.isServed(table)
        {
            hub.touch(ColumnKey(table))  // only a storage without a change feed needs it
        }
        return response
    }
}
