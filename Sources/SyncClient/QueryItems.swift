import Foundation
import SyncWire

/// The query-string items of a table read: the shared OData items (`$filter`, `$orderby`,
/// `$skip`, `$top`, `$select`, `$inlinecount`), then `__includeDeleted` and the user's extra
/// parameters.
enum QueryItems {
    static func make(
        _ query: QueryDescription, parameters: [String: String] = [:], includeDeleted: Bool = false
    ) -> [(String, String)] {
        var items = ODataQuery.queryItems(for: query).map { ($0.name, $0.value) }
        if includeDeleted { items.append((WireHeader.includeDeleted, "true")) }
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) { items.append((name, value)) }
        return items
    }
}
