import Foundation
import Logging
import SyncStore
import SyncWire

extension SyncContext {
    /// Pulls server items of `table` into the local store (docs/protocol.md §1.5). See
    /// ``SyncTable/pull(_:queryId:pageSize:)``.
    func pull(table: String, query: Query, queryId: String?, pageSize: Int) async throws -> Int {
        try PullValidation.check(query, queryId: queryId)
        let pageSize = pageSize > 0 ? pageSize : PullValidation.defaultPageSize
        let count = try await exclusive(cancelled: SyncError.pullWasCancelled()) { run in
            try await runPull(table: table, query: query, queryId: queryId, pageSize: pageSize, run: run)
        }
        try await settleAttachments(afterPullOf: table)
        return count
    }

    private func runPull(table: String, query: Query, queryId: String?, pageSize: Int, run: RunHandle) async throws -> Int {
        // Implicit push: local changes of the table go first, then the content of the attachments
        // whose rows reached the server; any push error abandons the pull.
        if try await read({ try $0.operationCount(table: table) }) > 0 {
            try await runPushAndUploads(run, refusalsThrow: false)
        }
        let tokenKey = queryId.map { DeltaToken.key(table: table, queryId: $0) }
        var token: Int64?
        if let tokenKey {
            let stored = try await read { try $0.configValue(forKey: tokenKey) }
            token = stored.flatMap(DeltaToken.milliseconds(from:)) ?? 0
        }
        emit(.pullStarted(table: table, queryId: queryId))
        logger.debug("Pull started", metadata: ["table": "\(table)", "incremental": "\(queryId != nil)"])
        var wanted: Set<Feature> = [.queryObject, .offline]
        if tokenKey != nil { wanted.insert(.incrementalPull) }
        if !query.parameters.isEmpty { wanted.insert(.queryParameters) }
        let features = wanted
        var cursor = PullCursor(token: token, top: query.options.top, skip: query.options.skip, pageSize: pageSize)
        var count = PullCount(incremental: tokenKey != nil)
        var clashes: [ItemIDCaseClash] = []
        /// The request of the next page, as the cursor has it.
        func pageURL() throws -> URL {
            let bounds = cursor.request
            var description = query.description(table: table)
            description.includeTotalCount = false
            if let since = bounds.since {
                description.filter = ODataQuery.incrementalFilter(query.options.filter, since: DeltaToken.date(milliseconds: since))
                description.orderBy = [OrderBy(SystemProperty.updatedAt)]
            }
            description.top = bounds.top
            description.skip = bounds.skip
            let items = QueryItems.make(description, parameters: query.parameters, includeDeleted: true)
            return try connection.tableURL(table, query: items)
        }
        var fetched = cursor.wantsAnything ? try await fetchPage(try pageURL(), features: features, run: run) : nil
        while let current = fetched {
            let page = current.page
            fetched = nil
            if run.isCancelled { throw SyncError.pullWasCancelled() }
            if !page.items.isEmpty { checkpoint?(.pullPage) }
            // The latest `updatedAt` over every item (also those skipped or deleted).
            let stamps = tokenKey == nil ? [] : page.updatedAtMilliseconds
            let step = cursor.pageArrived(
                count: page.items.count, latest: stamps.lazy.compactMap { $0 }.max(), hasLink: current.nextLink != nil)
            let save: (key: String, milliseconds: Int64)?
            let next: URL?
            switch step {
            case .finish:
                continue
            case .readAgain:
                fetched = try await fetchPage(try pageURL(), features: features, run: run)
                continue
            case .apply(let moved, let following):
                save = tokenKey.flatMap { key in moved.map { (key, $0) } }
                switch following {
                case .none: next = nil
                case .request: next = try pageURL()
                case .link: next = current.nextLink
                }
            }
            // The next request follows from this page alone: it is under way while this page is
            // written (the server and the store work at once), and cancelled if the write fails.
            if let next {
                async let following = fetchPage(next, features: features, run: run)
                let applied = try await applyPage(page, table: table, token: save, run: run)
                record(applied.positions, of: page, stamps: stamps, table: table, token: cursor.token, in: &count)
                clashes += applied.clashes
                fetched = try await following
            } else {
                let applied = try await applyPage(page, table: table, token: save, run: run)
                record(applied.positions, of: page, stamps: stamps, table: table, token: cursor.token, in: &count)
                clashes += applied.clashes
            }
        }
        emit(.pullFinished(table: table, items: count.items))
        logger.debug("Pull finished", metadata: ["table": "\(table)", "items": "\(count.items)"])
        if !clashes.isEmpty {
            logger.info("Server items whose ids differ only in letter case were not merged", metadata: ["table": "\(table)"])
            throw SyncError(
                .itemIDCaseClash, reason: "The server has items whose ids differ only in letter case; each was left alone, not merged.",
                underlying: ItemIDCaseClashes(clashes: clashes))
        }
        return count.items
    }

    /// Applies a page (``PullSteps/apply(_:table:token:in:)``); the items spelled otherwise than
    /// their id's local row are settled by asking the server for the row's spelling
    /// (``verdict(_:table:run:)``), then applied in a second transaction, which saves the token.
    private func applyPage(
        _ page: PullPage, table: String, token: (key: String, milliseconds: Int64)?, run: RunHandle
    ) async throws -> PullSteps.Applied {
        var applied = try await write { try PullSteps.apply(page, table: table, token: token, in: $0) }
        guard !applied.unsettled.isEmpty else { return applied }
        var verdicts: [(PullSteps.Unsettled, PullSteps.Verdict)] = []
        for unsettled in applied.unsettled { verdicts.append((unsettled, try await verdict(unsettled, table: table, run: run))) }
        let settled = try await write { [verdicts] in try PullSteps.settle(verdicts, of: page, table: table, token: token, in: $0) }
        applied.positions = (applied.positions + settled.positions).sorted()
        applied.clashes += settled.clashes
        applied.unsettled = []
        return applied
    }

    /// What the server holds under a local row's spelling (`$filter=id eq '…'`, deleted items
    /// included): that spelling live (another item: a clash), deleted or absent (the row is
    /// stale), or the same item spelled otherwise (a server that folds ASCII case).
    /// - Throws: ``SyncError/requestFailed`` when the server does not answer the read with a page
    ///   (the pull stops before saving the token, so the page is read again next time), or the
    ///   errors of a request.
    private func verdict(_ unsettled: PullSteps.Unsettled, table: String, run: RunHandle) async throws -> PullSteps.Verdict {
        let found: [JSONObject]?
        do {
            found = try await connection.items(withID: unsettled.stored, table: table, run: run)
        } catch let error as SyncError where error == .cancelled {
            throw SyncError.pullWasCancelled(error)
        }
        guard let found else {
            throw SyncError(.requestFailed, reason: "The server did not answer a read of one item id with a page.")
        }
        if let exact = found.first(where: { $0[SystemProperty.id]?.stringValue == unsettled.stored }) {
            return PushAnswer.isDeleted(exact) ? .staleRow : .clash
        }
        let same = found.contains { $0[SystemProperty.id]?.stringValue.map { ItemID.sameItem($0, unsettled.stored) } == true }
        return same ? .sameItem : .staleRow
    }

    /// Counts the items of `page` at `applied` (after which the pull's token is `token`; `stamps`
    /// are the items' `updatedAt` of an incremental pull) and reports the page.
    private func record(
        _ applied: [Int], of page: PullPage, stamps: [Int64?], table: String, token: Int64, in count: inout PullCount
    ) {
        count.add(applied, of: page, stamps: stamps, token: token)
        emit(.pagePulled(table: table, items: page.items.count, total: count.items))
    }

    /// Sends the request of one page and decodes the answer.
    /// - Returns: the page, and the `Link` target of the response, if any.
    private nonisolated func fetchPage(
        _ url: URL, features: Set<Feature>, run: RunHandle
    ) async throws -> (page: PullPage, nextLink: URL?) {
        if run.isCancelled { throw SyncError.pullWasCancelled() }
        let response: SyncResponse
        do {
            response = try await connection.send(try connection.request(.get, url: url, features: features), run: run)
        } catch let error as SyncError where error == .cancelled {
            throw SyncError.pullWasCancelled(error)
        }
        guard response.isSuccess else { throw ServiceConnection.error(for: response) }
        let page = try PullPage.decode(response.body, statusCode: response.statusCode)
        return (page, Self.nextLink(in: response, base: connection.baseURL, request: url))
    }

    /// The `Link: <url>; rel=next` target of a response, resolved against the request, if it
    /// points at the same server (scheme, host and port) as the client; others are ignored.
    static func nextLink(in response: SyncResponse, base: URL, request: URL) -> URL? {
        guard let header = response.header(WireHeader.link) else { return nil }
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let target = pieces.first, target.hasPrefix("<"), target.hasSuffix(">"),
                pieces.dropFirst().contains(where: { $0.replacingOccurrences(of: "\"", with: "").lowercased() == "rel=next" })
            else { continue }
            guard let url = URL(string: String(target.dropFirst().dropLast()), relativeTo: request)?.absoluteURL,
                url.scheme?.lowercased() == base.scheme?.lowercased(), url.host?.lowercased() == base.host?.lowercased(),
                url.port == base.port
            else { return nil }
            return url
        }
        return nil
    }
}

/// The checks a pull (and a purge's query id) makes before anything is sent (docs/protocol.md §1.5.1).
enum PullValidation {
    /// Items asked for per request unless the caller says otherwise (docs/protocol.md pins 50 for
    /// the G2 clients; a G2 server caps or pages a larger `$top` as it likes).
    static let defaultPageSize = 1000

    /// Validates a query id: 1–255 characters, not blank, no `|`, no control characters.
    static func checkQueryId(_ queryId: String) throws {
        let valid =
            !queryId.isEmpty && queryId.count <= 255 && !queryId.contains("|")
            && !queryId.allSatisfy(\.isWhitespace)
            && !queryId.unicodeScalars.contains { $0.properties.generalCategory == .control }
        guard valid else { throw SyncError(.invalidQueryID, reason: "A query id has 1–255 characters, without '|' or control characters.") }
    }

    /// Validates a pull query: no selection, no total count, no `__includeDeleted` (any case) or
    /// `$` parameters, no negative top/skip; with a query id also no ordering, top or skip.
    static func check(_ query: Query, queryId: String?) throws {
        func invalid(_ reason: String) -> SyncError { SyncError(.invalidPullQuery, reason: reason) }
        if let queryId { try checkQueryId(queryId) }
        if !query.options.selection.isEmpty { throw invalid("A pull cannot select columns.") }
        if query.options.includeTotalCount { throw invalid("A pull cannot ask for the total count.") }
        for name in query.parameters.keys {
            if name.lowercased() == WireHeader.includeDeleted.lowercased() || name.hasPrefix("$") {
                throw invalid("A pull parameter may not be a system query option or __includeDeleted.")
            }
        }
        if (query.options.top ?? 0) < 0 || (query.options.skip ?? 0) < 0 { throw invalid("Top and skip cannot be negative.") }
        if queryId != nil {
            if !query.options.orderBy.isEmpty { throw invalid("An incremental pull cannot be ordered.") }
            if query.options.top != nil || query.options.skip != nil { throw invalid("An incremental pull cannot use top or skip.") }
        }
    }
}
