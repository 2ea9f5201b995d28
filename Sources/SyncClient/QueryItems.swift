import Foundation
import SyncWire

/// The query-string items of a table read: `$filter`, `$orderby`, `$skip`, `$top`, `$select`,
/// `$inlinecount`, `__includeDeleted` and the user's extra parameters, in that order.
enum QueryItems {
    static func make(
        _ query: QueryDescription, parameters: [String: String] = [:], includeDeleted: Bool = false
    ) -> [(String, String)] {
        var items: [(String, String)] = []
        if let filter = query.filter { items.append(("$filter", filterText(filter))) }
        if !query.orderBy.isEmpty {
            items.append(("$orderby", query.orderBy.map { "\($0.member) \($0.ascending ? "asc" : "desc")" }.joined(separator: ",")))
        }
        if let skip = query.skip { items.append(("$skip", String(skip))) }
        if let top = query.top { items.append(("$top", String(top))) }
        if !query.selection.isEmpty { items.append(("$select", query.selection.joined(separator: ","))) }
        if query.includeTotalCount { items.append(("$inlinecount", "allpages")) }
        if includeDeleted { items.append((WireHeader.includeDeleted, "true")) }
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) { items.append((name, value)) }
        return items
    }

    /// The OData `$filter` text of a filter tree.
    static func filterText(_ filter: FilterExpression) -> String {
        ODataFilterText.print(filter)
    }
}
