import AsyncHTTPClient
import Foundation
import HTTPTypes
import SyncSQL
import SyncServer
import SyncWire
import Testing

/// A fleet on one server: 200 devices hold an idle change stream of a 20,000-row table, and a
/// `GET` by id of that table stays as fast as without them (within 2×, measured in this test).
@Suite(.timeLimit(.minutes(5))) struct ChangeStreamFleetTests {
    static let rows = 20_000
    static let streams = 200
    static let samples = 60

    @Test func twoHundredIdleStreamsLeaveAGetByIDOnATwentyThousandRowTableAsFast() async throws {
        var configuration = ServerConfiguration.testing()
        configuration.changeStream = ChangeStreamSettings(keepAliveInterval: .seconds(1))
        let storage = try await SQLiteTableStorage.open(.memory, logger: .quiet)
        _ = try await storage.ensureColumns("items", scope: .shared, ["text": .text])
        try await storage.inTransaction {
            for index in 0..<Self.rows {
                _ = try await storage.insert(table: "items", scope: .shared, item: ["id": .string("i\(index)"), "text": .string("row \(index)")])
            }
        }
        let server = try await RunningServer.start(configuration, storage: storage)
        let streaming = IdleChangeStreamTests.streamingClient(connections: Self.streams + 8)
        let client = HTTPTestClient()
        var failure: (any Error)?
        do {
            let beforeAlone = storage.statements.count
            let alone = try await Self.medianGet(client, server.url)
            let aloneStatements = storage.statements.count - beforeAlone
            var open: [ChangeStreamTests.Stream] = []
            for _ in 0..<Self.streams {
                var stream = try await ChangeStreamTests.Stream.open(streaming, server.url, tables: "items")
                let initial = try #require(try await stream.nextEvent())
                #expect(initial.id == "items|" + (initial.data["updatedAt"]?.stringValue ?? "-"))
                open.append(stream)
            }
            let before = storage.statements.count
            let withStreams = try await Self.medianGet(client, server.url)
            #expect(withStreams <= alone * 2, "median GET by id: \(withStreams) with \(Self.streams) streams, \(alone) without")
            // The GETs were the only statements: the streams added none.
            #expect(storage.statements.count - before == aloneStatements)
            #expect(open.count == Self.streams)
        } catch {
            failure = error
        }
        try? await streaming.shutdown()
        try? await client.shutdown()
        await server.stop()
        if let failure { throw failure }
    }

    /// The median time of ``samples`` `GET /tables/items/{id}`, ids spread over the table.
    static func medianGet(_ client: HTTPTestClient, _ base: URL) async throws -> Duration {
        var times: [Duration] = []
        for sample in 0..<samples {
            let id = "i\((sample * 7_919) % rows)"
            let start = ContinuousClock.now
            let reply = try await client.send(.get, base, "/tables/items/\(id)")
            times.append(ContinuousClock.now - start)
            #expect(reply.status == .ok)
        }
        return times.sorted()[times.count / 2]
    }
}
