import Foundation
import HTTPTypes
import SyncWire

/// A device that pulls one table the way G2 clients do: `updatedAt ge <token>`, ordered by
/// `updatedAt`, in pages, re-querying from the newest timestamp a page carried and skipping over
/// the rows it already read at that timestamp. Like `SyncContext`'s pull, a page read past those
/// rows that holds one of them with a later timestamp (it was written again meanwhile, so the
/// skip passed over another row) sends it back to the same token. It keeps the newest state of
/// every row it read.
struct IncrementalReader {
    let table: String
    let pageSize: Int
    /// The delta token: the newest `updatedAt` read so far.
    private(set) var token = WireDate.string(from: WireDate.epoch)
    /// Every row read, by id.
    private(set) var rows: [String: JSONObject] = [:]
    /// The requests sent so far.
    private(set) var requests = 0

    init(table: String, pageSize: Int = 50) {
        self.table = table
        self.pageSize = pageSize
    }

    /// One incremental pull: pages until one comes back empty.
    mutating func pull(_ client: HTTPTestClient, from server: URL) async throws {
        var skip = 0
        // The ids read with the token's own timestamp since it was set.
        var atToken = Set<String>()
        while true {
            let filter = ODataQuery.encode("updatedAt ge datetimeoffset'\(token)'")
            let uri = "/tables/\(table)?$filter=\(filter)&$orderby=updatedAt&$top=\(pageSize)&$skip=\(skip)&__includeDeleted=true"
            let reply = try await client.send(.get, server, uri)
            requests += 1
            guard reply.status == .ok else { throw ReaderError.status(reply.status.code, reply.errorMessage) }
            let page = reply.array
            if page.isEmpty { return }
            var latest = token
            var moved = false
            var read: [(id: String, stamp: String)] = []
            for item in page {
                guard let id = item[SystemProperty.id]?.stringValue, let stamp = item[SystemProperty.updatedAt]?.stringValue else {
                    throw ReaderError.malformed
                }
                rows[id] = item
                latest = max(latest, stamp)
                moved = moved || (skip > 0 && stamp > token && atToken.contains(id))
                read.append((id, stamp))
            }
            if moved {
                skip = 0
            } else if latest > token {
                token = latest
                skip = 0
                atToken = []
            } else {
                skip += page.count
            }
            for (id, stamp) in read where stamp == token { atToken.insert(id) }
        }
    }

    enum ReaderError: Error {
        case status(Int, String?)
        case malformed
    }
}
