import Foundation
import HTTPTypes
import SyncWire

/// A device that pulls one table the way G2 clients do: `updatedAt ge <token>`, ordered by
/// `updatedAt`, in pages, re-querying from the newest timestamp a page carried and skipping over
/// the rows it already read at that timestamp. Like `SyncContext`'s pull, it sets aside a page
/// read past those rows that would move the token (one of them may have been written again
/// meanwhile, so that the skip passed over another row) and reads again from the same token,
/// unless the token's rows fill a page. It keeps the newest state of every row it read.
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
        var largestPage = 0
        while true {
            let filter = ODataQuery.encode("updatedAt ge datetimeoffset'\(token)'")
            let uri = "/tables/\(table)?$filter=\(filter)&$orderby=updatedAt&$top=\(pageSize)&$skip=\(skip)&__includeDeleted=true"
            let reply = try await client.send(.get, server, uri)
            requests += 1
            guard reply.status == .ok else { throw ReaderError.status(reply.status.code, reply.errorMessage) }
            let page = reply.array
            if page.isEmpty { return }
            largestPage = max(largestPage, page.count)
            var latest = token
            for item in page {
                guard item[SystemProperty.id]?.stringValue != nil, let stamp = item[SystemProperty.updatedAt]?.stringValue else {
                    throw ReaderError.malformed
                }
                latest = max(latest, stamp)
            }
            if latest > token, skip > 0, skip < largestPage {
                skip = 0
                continue
            }
            for item in page {
                if let id = item[SystemProperty.id]?.stringValue { rows[id] = item }
            }
            if latest > token {
                token = latest
                skip = 0
            } else {
                skip += page.count
            }
        }
    }

    enum ReaderError: Error {
        case status(Int, String?)
        case malformed
    }
}
