import Foundation
import HTTPTypes
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// `GET /metrics` on the metrics listener (``ServerConfiguration/metrics``): after known traffic
/// the counters hold exactly that traffic, by route pattern and status; two servers in one
/// process count apart; without metrics there is no listener, and the API's port never serves
/// `/metrics`.
@Suite(.timeLimit(.minutes(2))) struct MetricsTests {
    /// The samples of a Prometheus text exposition, by series (`name{labels}`), comments left out.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    static func scrape(_ client: HTTPTestClient, _ server: RunningServer) async throws -> (Reply, [String: Double]) {
        let url = try #require(server.metricsURL)
        let reply = try await client.send(.get, url, "/metrics")
        return (reply, samples(String(decoding: reply.body, as: UTF8.self)))
    }

    static func metricsServer() async throws -> RunningServer {
        var configuration = ServerConfiguration.testing()
        configuration.metrics = ServerMetrics()
        return try await RunningServer.start(configuration)
    }

    @Test func countersHoldTheTrafficByRouteAndStatus() async throws {
        let server = try await Self.metricsServer()
        let other = try await Self.metricsServer()
        let client = HTTPTestClient()
        do {
            for id in ["a", "b", "c"] {
                #expect(try await client.send(.post, server.url, "/tables/todo", object: ["id": .string(id), "n": 1]).status == .created)
            }
            #expect(try await client.send(.post, server.url, "/tables/todo", object: ["id": "a"]).status == .conflict)
            #expect(try await client.send(.get, server.url, "/tables/todo/a").status == .ok)
            #expect(try await client.send(.get, server.url, "/tables/todo/missing").status == .notFound)
            #expect(try await client.send(.get, server.url, "/tables/todo").array.count == 3)
            #expect(try await client.send(.patch, server.url, "/tables/todo/b", object: ["n": 2]).status == .ok)
            let batch: JSONObject = [
                "operations": [
                    ["method": "POST", "item": ["id": "d"]], ["method": "DELETE", "id": "c"], ["method": "DELETE", "id": "zz"],
                ]
            ]
            #expect(try await client.send(.post, server.url, "/batch/todo", object: batch).status == .ok)
            #expect(try await client.send(.get, server.url, "/health").status == .ok)

            let (reply, samples) = try await Self.scrape(client, server)
            #expect(reply.status == .ok)
            #expect(reply.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            func requests(_ route: String, _ method: String, _ status: Int) -> Double? {
                samples[#"ciphersync_http_requests_total{route="\#(route)",method="\#(method)",status="\#(status)"}"#]
            }
            #expect(requests("/tables/{table}", "POST", 201) == 3)
            #expect(requests("/tables/{table}", "POST", 409) == 1)
            #expect(requests("/tables/{table}/{id}", "GET", 200) == 1)
            #expect(requests("/tables/{table}/{id}", "GET", 404) == 1)
            #expect(requests("/tables/{table}", "GET", 200) == 1)
            #expect(requests("/tables/{table}/{id}", "PATCH", 200) == 1)
            #expect(requests("/batch/{table}", "POST", 200) == 1)
            #expect(requests("/health", "GET", 200) == 1)
            #expect(samples.keys.filter { $0.hasPrefix("ciphersync_http_requests_total{") }.count == 8, "no other series")
            #expect(samples[#"ciphersync_http_request_duration_seconds_count{route="/tables/{table}",method="POST"}"#] == 4)
            #expect(samples[#"ciphersync_http_request_duration_seconds_count{route="/tables/{table}/{id}",method="GET"}"#] == 2)
            // Pushed: three inserts, a patch, the batch's insert and delete (its third operation is a 404).
            #expect(samples["ciphersync_items_pushed_total"] == 6)
            // Pulled: one read by id, a page of three.
            #expect(samples["ciphersync_items_pulled_total"] == 4)
            #expect(samples["ciphersync_batch_operations_count"] == 1)
            #expect(samples["ciphersync_batch_operations_sum"] == 3)
            #expect(samples[#"ciphersync_batch_operations_bucket{le="1.0"}"#] == 0)
            #expect(samples[#"ciphersync_batch_operations_bucket{le="10.0"}"#] == 1)
            #expect(samples["ciphersync_change_streams_open"] == 0)
            #expect(samples["ciphersync_storage_connection_wait_seconds_count"] == 0, "memory tables have no connections to wait for")
            #expect(samples.keys.contains { $0.hasPrefix("ciphersync_storage_errors_total") } == false)

            let (_, apart) = try await Self.scrape(client, other)
            #expect(apart["ciphersync_items_pushed_total"] == 0, "another server in the process counts apart")
            #expect(apart.keys.contains { $0.hasPrefix("ciphersync_http_requests_total{") } == false)
        } catch {
            Issue.record(error)
        }
        try? await client.shutdown()
        await server.stop()
        await other.stop()
    }

    @Test func withoutMetricsThereIsNoListenerAndTheAPIPortNeverServesThem() async throws {
        let plain = try await RunningServer.start(.testing())
        let measured = try await Self.metricsServer()
        let client = HTTPTestClient()
        do {
            #expect(plain.metricsURL == nil)
            #expect(try await client.send(.get, plain.url, "/metrics").status == .notFound)
            #expect(try await client.send(.get, measured.url, "/metrics").status == .notFound)
            let url = try #require(measured.metricsURL)
            #expect(url.port != measured.url.port)
            #expect(try await client.send(.get, url, "/tables/todo").status == .notFound, "the metrics listener serves nothing else")
        } catch {
            Issue.record(error)
        }
        try? await client.shutdown()
        await plain.stop()
        await measured.stop()
    }
}
