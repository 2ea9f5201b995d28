import Foundation
import SyncWire

extension ServiceConnection {
    /// The server's copy of an item, deleted ones included: read by id
    /// (`GET /tables/{table}/{id}?__includeDeleted=true`); when that answers 404, read again
    /// through a filter (``items(withID:table:run:)``). The Node server of Azure Mobile Apps
    /// ignores `__includeDeleted` on a read by id and answers 404 for an item it has deleted,
    /// while its filtered read has the item with `deleted: true`.
    /// - Throws: ``SyncError/authenticationRequired`` (a 401), ``SyncError/transportFailed`` or a
    ///   cancellation; any other answer is a copy whose state is unknown.
    func serverCopy(table: String, id: String, run: RunHandle?) async throws -> PushAnswer.ServerCopy {
        let url = try tableURL(table, id: id, query: [(WireHeader.includeDeleted, "true")])
        let fetched = try await send(try request(.get, url: url, features: [.untypedTable, .offline]), run: run)
        switch fetched.statusCode {
        case 200..<300:
            return Self.item(from: fetched).map(PushAnswer.ServerCopy.init(item:)) ?? .init(state: .unknown)
        case 404:
            guard let found = try await items(withID: id, table: table, run: run) else { return .init(state: .missing) }
            // The item of exactly this id; else the one a server that folds ASCII case matched.
            let same = found.filter { $0[SystemProperty.id]?.stringValue.map { ItemID.sameItem($0, id) } == true }
            let exact = same.first { $0[SystemProperty.id]?.stringValue == id }
            return (exact ?? same.first).map(PushAnswer.ServerCopy.init(item:)) ?? .init(state: .missing)
        case 410: return .init(state: .deleted)
        case 401: throw Self.error(for: fetched)
        default: return .init(state: .unknown)
        }
    }

    /// The items a filtered read of one id finds, deleted ones included
    /// (`GET /tables/{table}?$filter=id eq '…'&__includeDeleted=true`): the item of that id, and
    /// on a server that compares ids without ASCII case, the item of another spelling.
    /// - Returns: the page's items, or `nil` when the server answered anything but a 2xx with a page.
    /// - Throws: ``SyncError/authenticationRequired`` (a 401), ``SyncError/transportFailed`` or a
    ///   cancellation.
    func items(withID id: String, table: String, run: RunHandle?) async throws -> [JSONObject]? {
        let filter = ODataPrinter.filter(.binary(.eq, .member(SystemProperty.id), .literal(.string(id))))
        let url = try tableURL(table, query: [("$filter", filter), (WireHeader.includeDeleted, "true")])
        let response = try await send(try request(.get, url: url, features: [.untypedTable, .offline]), run: run)
        if response.statusCode == 401 { throw Self.error(for: response) }
        guard response.isSuccess else { return nil }
        return try? PullPage.decode(response.body, statusCode: response.statusCode).items
    }
}
