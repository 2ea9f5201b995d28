import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// Row versions and reserved names, as every write meets them.
@Suite struct RowVersionAndReservedNameTests {
    @Test func versionsAreTwelveRandomBytesInBase64() {
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let version = RowVersion.make()
            #expect(version.count == 16)
            #expect(Data(base64Encoded: version)?.count == 12)
            seen.insert(version)
        }
        #expect(seen.count == 1_000, "a version is new on every write")
    }

    @Test func versionsMadeAtOnceOnManyThreadsAreAllDifferent() async {
        let versions = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 { group.addTask { (0..<500).map { _ in RowVersion.make() } } }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(versions.count == 4_000)
        #expect(Set(versions).count == 4_000)
        #expect(versions.allSatisfy { Data(base64Encoded: $0)?.count == 12 })
    }

    @Test(arguments: StorageFactory.all)
    func reservedNamesAreRefusedInAnyCaseAndOthersAreNot(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            for name in ["createdAt", "CREATEDAT", "updatedat", "Deleted"] {
                let reply = try await server.send(.post, "/tables/todo", object: ["id": "r", name: "x"])
                #expect(reply.status == .badRequest, "\(name)")
                #expect(reply.errorMessage == "Cannot update item with property '\(name)' as it is reserved")
            }
            #expect(try await server.send(.get, "/tables/todo/r").status == .notFound, "a refused insert writes nothing")
            let other = try await server.send(.post, "/tables/todo", object: ["id": "k", "créatedAt": "x"])
            #expect(other.errorMessage == "'créatedAt' is not a valid property name", "not reserved: refused for its letters")
            let accepted = try await server.send(.post, "/tables/todo", object: ["id": "k", "createdAtLocal": "x", "deletedLater": true])
            #expect(accepted.status == .created)
            #expect(accepted.object["createdAtLocal"] == "x")
        }
    }
}
