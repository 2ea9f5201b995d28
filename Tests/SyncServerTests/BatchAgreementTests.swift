import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// A batch decides its writes against the rows as its earlier writes left them: the results and
/// the rows it leaves are those of the same operations sent one by one, whatever ids repeat and
/// whichever operations fail.
@Suite struct BatchAgreementTests {
    /// Operations of one table, given the versions its seeded rows got: ids written twice (insert
    /// then update, update then delete, delete then insert), inserts of taken ids, stale and weak
    /// preconditions, a body version, a bad item, a new column and a value of the wrong type for it,
    /// a whole number sent as a real to an integer column, and ids in another ASCII case (a row
    /// deleted and inserted again under another spelling takes the new one).
    static func operations(_ versions: [String: String]) -> [JSONObject] {
        let one = versions["s1", default: ""], three = versions["s3", default: ""]
        return [
            ["method": "POST", "item": ["id": "a", "text": "new", "n": 1]],
            ["method": "PATCH", "id": "a", "item": ["text": "changed"]],
            ["method": "PATCH", "id": "A", "item": ["n": 2.0, "r": 3]],
            ["method": "POST", "item": ["id": "S1", "text": "taken"]],
            ["method": "PATCH", "id": "s1", "ifMatch": .string(ETag.quote(one)), "item": ["text": "edited"]],
            ["method": "PATCH", "id": "s1", "ifMatch": .string(ETag.quote(one)), "item": ["text": "late"]],
            ["method": "DELETE", "id": "s2"],
            ["method": "PATCH", "id": "s2", "item": ["text": "after the delete"]],
            ["method": "POST", "item": ["id": "S2", "text": "again, spelled otherwise"]],
            ["method": "POST", "item": ["id": "b", "n": "not a number"]],
            ["method": "PATCH", "id": "b", "item": ["text": "never inserted"]],
            ["method": "POST", "item": ["id": "c", "text": "c", "extra": true]],
            ["method": "PATCH", "id": "s3", "item": ["extra": false]],
            ["method": "POST", "item": ["id": "d", "extra": "not a Boolean"]],
            ["method": "PATCH", "id": "S3", "item": ["version": .string(three), "text": "body version"]],
            ["method": "PATCH", "id": "s3", "item": ["version": .string(three), "text": "stale body version"]],
            ["method": "DELETE", "id": "c", "ifMatch": "W/\"weak\""],
            ["method": "DELETE", "id": "never"],
            ["method": "POST", "item": ["id": "e", "text": "short-lived"]],
            ["method": "DELETE", "id": "E"],
            ["method": "POST", "item": ["id": "e", "text": "back"]],
            ["method": "PATCH", "id": "e", "item": ["text": "back and edited"]],
            ["method": "POST", "item": ["id": "f", "json": ["k": [1, 2]], "r": 1.5]],
            ["method": "DELETE", "id": "s1"],
        ]
    }

    @Test(arguments: StorageFactory.all, [true, false])
    func aBatchAnswersAndWritesAsItsOperationsOneByOne(_ factory: StorageFactory, _ softDelete: Bool) async throws {
        try await TestServer.run(.testing(softDelete: softDelete), storage: factory) { server in
            var batched: [JSONObject] = [], single: [JSONObject] = [], rows: [String: [JSONObject]] = [:]
            for table in ["batched", "single"] {
                var versions: [String: String] = [:]
                for (id, item) in [("s1", ["text": "one", "n": 1]), ("s2", ["text": "two"]), ("s3", ["text": "three"])] as [(String, JSONObject)] {
                    var item = item
                    item["id"] = .string(id)
                    let seeded = try await server.send(.post, "/tables/\(table)", object: item)
                    try #require(seeded.status == .created)
                    versions[id] = try #require(seeded.object["version"]?.stringValue)
                }
                let operations = Self.operations(versions)
                if table == "batched" {
                    let reply = try await server.send(.post, "/batch/\(table)", object: BatchTests.batch(operations))
                    try #require(reply.status == .ok)
                    batched = BatchTests.results(reply)
                } else {
                    for operation in operations { single.append(BatchTests.result(of: try await Self.send(operation, to: table, server))) }
                }
                rows[table] = try await server.send(.get, "/tables/\(table)?__includeDeleted=true&$orderby=id").array
            }
            try #require(batched.count == single.count)
            var batchLabels = Labels(), singleLabels = Labels()
            for (index, (b, s)) in zip(batched, single).enumerated() {
                #expect(batchLabels.normalized(b) == singleLabels.normalized(s), "operation \(index): \(b) / \(s)")
            }
            #expect(single.map { $0["status"]?.intValue ?? 0 }.contains(201) && single.map { $0["status"]?.intValue ?? 0 }.contains(412))
            let batchRows = (rows["batched"] ?? []).map { batchLabels.normalized($0) }
            let singleRows = (rows["single"] ?? []).map { singleLabels.normalized($0) }
            #expect(!batchRows.isEmpty && batchRows == singleRows)
        }
    }

    /// The same id many times in one batch, on its own: every write after the first sees the one
    /// before it, and the row left is the last write's.
    @Test(arguments: StorageFactory.all)
    func oneIDWrittenManyTimesInOneBatch(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            var operations: [JSONObject] = [["method": "POST", "item": ["id": "x", "n": 0]]]
            operations += (1...40).map { ["method": "PATCH", "id": "x", "item": ["n": .int(Int64($0))]] }
            let results = BatchTests.results(try await server.send(.post, "/batch/todo", object: BatchTests.batch(operations)))
            try #require(results.count == 41)
            #expect(results.map { $0["body"]?.objectValue?["n"]?.intValue } == (0...40).map { $0 })
            let versions = results.compactMap { $0["body"]?.objectValue?["version"]?.stringValue }
            #expect(Set(versions).count == 41)
            let stored = try await server.send(.get, "/tables/todo/x")
            #expect(stored.object["n"] == 40 && stored.object["version"]?.stringValue == versions.last)
            #expect(results.last == BatchTests.result(of: stored))
        }
    }

    /// Sends one operation of a batch as its own request.
    static func send(_ operation: JSONObject, to table: String, _ server: TestServer) async throws -> Reply {
        var headers = TestServer.version
        if let tag = operation["ifMatch"]?.stringValue { headers[.ifMatch] = tag }
        let item = operation["item"]?.objectValue ?? [:]
        let id = operation["id"]?.stringValue ?? ""
        switch operation["method"]?.stringValue {
        case "POST": return try await server.send(.post, "/tables/\(table)", object: item, headers: headers)
        case "PATCH": return try await server.send(.patch, "/tables/\(table)/\(id)", object: item, headers: headers)
        default: return try await server.send(.delete, "/tables/\(table)/\(id)", headers: headers)
        }
    }
}

/// Names versions and stamps by the order they first appear in, so that the answers of two
/// tables (each with its own versions and stamps) can be compared.
struct Labels {
    private var names: [String: String] = [:]

    mutating func label(_ text: String) -> JSONValue {
        if let name = names[text] { return .string(name) }
        let name = "#\(names.count)"
        names[text] = name
        return .string(name)
    }

    /// A result or an item with its versions, `ETag` and stamps replaced by their labels.
    mutating func normalized(_ object: JSONObject) -> JSONObject {
        var object = object
        for key in ["version", "createdAt", "updatedAt"] {
            if case .string(let text)? = object[key] { object[key] = label(text) }
        }
        if case .string(let tag)? = object["etag"] { object["etag"] = label(ETag.version(from: tag) ?? tag) }
        if case .object(let body)? = object["body"] { object["body"] = .object(normalized(body)) }
        return object
    }
}
