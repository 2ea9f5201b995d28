import Foundation
import SyncStore
import SyncWire
import Synchronization

extension SyncContext {
    /// Keeps tables live: pushes soon after local writes, pulls a table when the server says it
    /// changed, and keeps listening across network failures and server restarts.
    ///
    /// - Pushes: a commit that changes the operation queue starts a push after
    ///   ``LiveSyncOptions/pushDelay`` (writes in the meantime go along). Operations that failed
    ///   (conflicts) wait for their resolution; a push that cannot reach the server is tried
    ///   again with backoff.
    /// - Pulls: the server's `GET /changes` stream (server-sent events, over a transport that is
    ///   a ``SyncStreamingTransport``) says which table changed; that table is pulled
    ///   incrementally with its query id. Notifications that arrive during a pull make one more
    ///   pull. On connecting, the server reports what changed since the last event received, so
    ///   nothing is missed while disconnected. Observed queries (``SyncTable/observe(_:)``) show
    ///   the pulled items.
    /// - Attachments (a store that keeps them): pushes upload the content of the attachments whose
    ///   rows they sent; the transfer queue (``transferAttachments()``) runs when live sync starts,
    ///   after each pull (downloads queued by an eager ``AttachmentDownloadPolicy``), and when the
    ///   back-off of a transfer that failed before has passed.
    /// - Reconnects after a failure with a wait that doubles up to ``LiveSyncOptions/maximumBackoff``.
    ///   Against a server without the route, or over a transport that cannot stream, every
    ///   table is pulled at ``LiveSyncOptions/fallbackPullInterval``.
    ///
    /// ```swift
    /// let live = try context.startLiveSync([LiveSyncTable("todo")])
    /// Task { for await event in live.events { log(event) } }
    /// // … later
    /// await live.stop()
    /// ```
    ///
    /// - Parameters:
    ///   - tables: the tables to keep live (at least one).
    ///   - options: delays, backoff, fallback interval, page size.
    /// - Returns: the running live sync; ``LiveSync/stop()`` ends it.
    /// - Throws: ``SyncError/invalidTableName`` for an invalid or missing table name,
    ///   ``SyncError/invalidQueryID`` or ``SyncError/invalidPullQuery`` for a table's query,
    ///   ``SyncError/invalidSetting`` for an installation id no header can carry.
    public nonisolated func startLiveSync(_ tables: [LiveSyncTable], options: LiveSyncOptions = LiveSyncOptions()) throws -> LiveSync {
        guard !tables.isEmpty, tables.allSatisfy({ TableName.isServed($0.name) }) else {
            throw SyncError(.invalidTableName, reason: "Live sync needs valid table names.")
        }
        try connection.checkInstallationID()
        for table in tables { try PullValidation.check(table.query, queryId: table.queryId) }
        let (events, emit) = AsyncStream<LiveSyncEvent>.makeStream(bufferingPolicy: .unbounded)
        let runner = LiveSyncRunner(context: self, tables: tables, options: options, emit: emit)
        let task = Task {
            await runner.run()
            emit.finish()
        }
        return LiveSync(events: events, task: task)
    }
}

/// The loops of a live sync: push, pull, listen, transfer attachments.
private struct LiveSyncRunner: Sendable {
    let context: SyncContext
    let tables: [LiveSyncTable]
    let options: LiveSyncOptions
    let emit: AsyncStream<LiveSyncEvent>.Continuation
    /// Tables whose pull is wanted, by lowercased name.
    private let wanted = WantedTables()
    private let pullSignals: AsyncStream<Void>
    private let pullSignal: AsyncStream<Void>.Continuation
    private let transferSignals: AsyncStream<Void>
    private let transferSignal: AsyncStream<Void>.Continuation

    init(context: SyncContext, tables: [LiveSyncTable], options: LiveSyncOptions, emit: AsyncStream<LiveSyncEvent>.Continuation) {
        self.context = context
        self.tables = tables
        self.options = options
        self.emit = emit
        (pullSignals, pullSignal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        (transferSignals, transferSignal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await pushLoop() }
            group.addTask { await pullLoop() }
            group.addTask { await listenLoop() }
            group.addTask { await transferLoop() }
        }
    }

    // MARK: push

    private func pushLoop() async {
        let (signals, registration) = context.changeFeed.register([.operations])
        defer { registration.cancel() }
        var backoff = Backoff(initial: options.initialBackoff, maximum: options.maximumBackoff)
        var wakes = signals.makeAsyncIterator()
        repeat {
            guard (try? await Task.sleep(for: options.pushDelay)) != nil else { return }
            while !Task.isCancelled {
                do {
                    // Failed operations wait for their resolution; pushing them again would only
                    // record the same conflict again.
                    guard try await context.pendingOperations().contains(where: { $0.state != .failed }) else { break }
                    try await context.push()
                    emit.yield(.pushed)
                    backoff.reset()
                    break
                } catch let error as SyncError where error == .pushAbortedByNetwork {
                    emit.yield(.failed(error))
                    guard await backoff.wait() else { return }
                } catch let error as SyncError where error == .pushCancelled && Task.isCancelled {
                    return
                } catch {
                    emit.yield(.failed(SyncContext.mapStoreError(error)))
                    break
                }
            }
        } while await wakes.next() != nil
    }

    // MARK: pull

    private func requestPull(_ names: [String]) {
        wanted.names.withLock { $0.formUnion(names.map { $0.lowercased() }) }
        pullSignal.yield()
    }

    private func pullLoop() async {
        for await _ in pullSignals {
            let names = wanted.names.withLock { wanted in
                defer { wanted = [] }
                return wanted
            }
            for table in tables where names.contains(table.name.lowercased()) {
                do {
                    let items = try await context.pull(
                        table: table.name, query: table.query, queryId: table.queryId, pageSize: options.pageSize)
                    emit.yield(.pulled(table: table.name, items: items))
                    transferSignal.yield()
                } catch let error as SyncError where Task.isCancelled && (error == .pullCancelled || error == .pushCancelled) {
                    return
                } catch {
                    emit.yield(.failed(SyncContext.mapStoreError(error)))
                }
            }
        }
    }

    // MARK: attachments

    /// Runs the attachment transfer queue at the start, after each pull, and when the earliest
    /// back-off of a transfer that failed has passed.
    private func transferLoop() async {
        guard context.store is any AttachmentStoring else { return }
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        transferSignal.yield()
        for await _ in transferSignals {
            do {
                let summary = try await context.transferAttachments()
                if summary.uploaded > 0 || summary.downloaded > 0 {
                    emit.yield(.transferred(uploaded: summary.uploaded, downloaded: summary.downloaded))
                }
            } catch {
                if Task.isCancelled { return }
                emit.yield(.failed(SyncContext.mapStoreError(error)))
            }
            timer?.cancel()
            timer = nil
            guard let next = try? await context.attachmentTransfers().map(\.notBefore).filter({ $0 < AttachmentTransferRecord.parked }).min(),
                next > Date()
            else { continue }
            let signal = transferSignal
            timer = Task {
                guard (try? await Task.sleep(for: .seconds(next.timeIntervalSinceNow))) != nil else { return }
                signal.yield()
            }
        }
    }

    // MARK: listen

    private func listenLoop() async {
        guard let transport = context.connection.transport as? any SyncStreamingTransport else {
            return await pollLoop()
        }
        var backoff = Backoff(initial: options.initialBackoff, maximum: options.maximumBackoff)
        var lastEventID: String?
        while !Task.isCancelled {
            do {
                let request = try await context.connection.authorized(try changesRequest(lastEventID: lastEventID))
                let response = try await transport.openStream(request)
                if response.statusCode == 404 || response.statusCode == 405 {
                    emit.yield(.pollingFallback)
                    return await pollLoop()
                }
                guard (200..<300).contains(response.statusCode) else {
                    throw ServiceConnection.error(for: SyncResponse(statusCode: response.statusCode, headers: response.headers))
                }
                emit.yield(.connected)
                backoff.reset()
                var parser = ServerSentEventParser(lastEventID: lastEventID)
                var failure: (any Error)?
                do {
                    for try await piece in response.body {
                        let changed = parser.feed(piece).filter { $0.name == "change" }.compactMap(Self.table(of:))
                        lastEventID = parser.lastEventID
                        if !changed.isEmpty { requestPull(changed) }
                    }
                } catch {
                    failure = error
                }
                // The body has ended (or its iteration, cancelled): live sync goes on, or stops,
                // once the stream's connection is closed.
                await response.closed()
                throw failure ?? SyncError(.transportFailed, reason: "The server ended the change stream.")
            } catch {
                if Task.isCancelled { return }
                emit.yield(.disconnected(Self.streamError(error)))
                guard await backoff.wait() else { return }
            }
        }
    }

    private func pollLoop() async {
        repeat {
            requestPull(tables.map(\.name))
        } while (try? await Task.sleep(for: options.fallbackPullInterval)) != nil
    }

    /// `GET {base}/changes?tables=a,b` with the protocol's headers and `Last-Event-ID`.
    private func changesRequest(lastEventID: String?) throws -> SyncRequest {
        let connection = context.connection
        guard var components = URLComponents(url: connection.baseURL, resolvingAgainstBaseURL: true) else {
            throw SyncError.unparsableServiceURL
        }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        components.percentEncodedPath = path + "/changes"
        components.percentEncodedQuery = "tables=" + tables.map(\.name).joined(separator: ",")
        guard let url = components.url else { throw SyncError.unbuildableRequestURL }
        var headers = connection.headers(features: [], hasBody: false)
        headers["Accept"] = "text/event-stream"
        if let lastEventID { headers["Last-Event-ID"] = lastEventID }
        return SyncRequest(method: .get, url: url, headers: headers)
    }

    /// The table a `change` event names.
    private static func table(of event: ServerSentEvent) -> String? {
        guard let object = try? JSONCoding.decode(JSONObject.self, from: Data(event.data.utf8)) else { return nil }
        return object["table"]?.stringValue
    }

    private static func streamError(_ error: any Error) -> SyncError {
        if let error = error as? SyncError { return error }
        return SyncError.noAnswer(error)
    }
}

/// The tables a live sync is to pull next, shared by its loops.
private final class WantedTables: Sendable {
    let names = Mutex<Set<String>>([])
}
