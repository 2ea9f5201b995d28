import Foundation
import HTTPTypes
import Hummingbird
import SyncServer
import SyncWire
import Testing

/// The OpenAPI document (`Sources/SyncServer/Resources/openapi.json`): served as it is kept in
/// the repository, and describing exactly the routes the router registers, so a new route cannot
/// go undocumented (nor a documented one disappear).
@Suite struct OpenAPIDocumentTests {
    /// The document as kept in the repository.
    static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/SyncServer/Resources/openapi.json")

    /// The HTTP methods a path item of OpenAPI 3.1 can hold an operation for.
    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    static func document() throws -> JSONObject {
        try JSONParser.parseObject(try Data(contentsOf: file))
    }

    @Test func theServedDocumentIsTheFileWithoutAPIVersionOrToken() async throws {
        let file = try Data(contentsOf: Self.file)
        try await TestServer.run(.testing(authentication: .sharedToken(UUID().uuidString))) { server in
            let reply = try await server.send(.get, "/openapi.json", headers: [:])
            #expect(reply.status == .ok)
            #expect(reply.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(reply.body == file, "the served document is the repository's file, byte for byte")
        }
        let document = try Self.document()
        #expect(document["openapi"] == "3.1.0")
        #expect(document["info"]?.objectValue?["title"]?.stringValue?.isEmpty == false)
    }

    @Test func everyRegisteredRouteIsDocumentedAndNothingMore() async throws {
        let database = try await StorageFactory.default.makeDatabase()
        let storage = try await database.open(nil)
        let routes = buildRouter(storage: storage, configuration: .testing()).routes
        try await storage.close()
        try await database.remove()
        let registered = Set(routes.map { "\($0.method.rawValue) \($0.path)" })

        let paths = try #require(try Self.document()["paths"]?.objectValue)
        var documented: Set<String> = []
        for (path, item) in paths {
            let operations = try #require(item.objectValue, "\(path) is a path item")
            for method in Self.methods where operations[method] != nil { documented.insert("\(method.uppercased()) \(path)") }
        }
        #expect(registered.count >= 8, "the router lists its routes: \(registered.sorted())")
        #expect(registered.subtracting(documented).isEmpty, "routes missing from openapi.json: \(registered.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(registered).isEmpty, "openapi.json names routes the server lacks: \(documented.subtracting(registered).sorted())")
    }

    /// Every table operation documents the answers every table request can get; every one that
    /// takes a body, the answer to one that is too large.
    @Test func everyTableOperationDocumentsItsErrors() throws {
        let paths = try #require(try Self.document()["paths"]?.objectValue)
        var checked = 0
        for (path, item) in paths where path.hasPrefix("/tables/") {
            for method in Self.methods {
                guard let operation = item.objectValue?[method]?.objectValue else { continue }
                let statuses = Set(operation["responses"]?.objectValue.map { Array($0.keys) } ?? [])
                var required: Set<String> = ["400", "401", "404"]
                if operation["requestBody"] != nil { required.insert("413") }
                #expect(required.isSubset(of: statuses), "\(method) \(path) documents \(statuses.sorted())")
                #expect(operation["operationId"]?.stringValue != nil, "\(method) \(path) has an operationId")
                checked += 1
            }
        }
        #expect(checked == 9)
    }

    /// Every operation documents the 431 of header fields beyond the HTTP layer's limits, and the
    /// document says what a method a path does not take is answered.
    @Test func everyOperationDocumentsTheHeaderLimitAndTheDocumentTheMethodRule() throws {
        let document = try Self.document()
        let paths = try #require(document["paths"]?.objectValue)
        var checked = 0
        for (path, item) in paths {
            for method in Self.methods {
                guard let operation = item.objectValue?[method]?.objectValue else { continue }
                #expect(operation["responses"]?.objectValue?["431"] != nil, "\(method) \(path) documents 431")
                checked += 1
            }
        }
        #expect(checked >= 11)
        let description = document["info"]?.objectValue?["description"]?.stringValue ?? ""
        #expect(description.contains("405") && description.contains("`Allow`") && description.contains("431"))
    }

    @Test func everyReferenceResolves() throws {
        let document = try Self.document()
        var references: [String] = []
        func collect(_ value: JSONValue) {
            switch value {
            case .object(let object):
                if case .string(let reference)? = object["$ref"] { references.append(reference) }
                object.values.forEach(collect)
            case .array(let array): array.forEach(collect)
            default: break
            }
        }
        collect(.object(document))
        #expect(references.count > 20)
        for reference in references {
            #expect(reference.hasPrefix("#/"), "\(reference) points inside the document")
            var target: JSONValue? = .object(document)
            for token in reference.dropFirst(2).split(separator: "/", omittingEmptySubsequences: false) {
                let name = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
                target = target?.objectValue?[name]
            }
            #expect(target != nil, "\(reference) resolves")
        }
    }
}
