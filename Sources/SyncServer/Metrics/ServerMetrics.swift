import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// The metrics of one server (docs/deploy.md, "Metrics"): swift-metrics handlers made by a
/// Prometheus factory over this object's own registry, so several servers in one process keep
/// apart and nothing is bootstrapped globally (`MetricsSystem.bootstrap` is never called).
///
/// A server records into it when ``ServerConfiguration/metrics`` is set; the scrape endpoint
/// (``buildMetricsApplication(_:host:port:logger:onListening:)``) reads it.
/// Safe to share.
public final class ServerMetrics: Sendable {
    /// The metrics of the server whose request the current task serves, if it has any.
    @TaskLocal static var current: ServerMetrics?

    private let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let requests = Mutex<[RequestKey: CoreMetrics.Counter]>([:])
    private let latencies = Mutex<[LatencyKey: CoreMetrics.Timer]>([:])
    private let storageErrors = Mutex<[String: CoreMetrics.Counter]>([:])
    private let itemsPushed: CoreMetrics.Counter
    private let itemsPulled: CoreMetrics.Counter
    private let connectionWaits: CoreMetrics.Timer
    private let batchSizes: CoreMetrics.Recorder
    private let openStreams: CoreMetrics.Gauge
    /// Counts the change streams open now; read at each scrape.
    private let streamCount = Mutex<@Sendable () -> Int>({ 0 })

    private struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    private struct LatencyKey: Hashable {
        let route: String
        let method: String
    }

    /// The metric names (documented in docs/deploy.md).
    enum Name {
        static let requests = "ciphersync_http_requests_total"
        static let requestDuration = "ciphersync_http_request_duration_seconds"
        static let openStreams = "ciphersync_change_streams_open"
        static let itemsPushed = "ciphersync_items_pushed_total"
        static let itemsPulled = "ciphersync_items_pulled_total"
        static let storageErrors = "ciphersync_storage_errors_total"
        static let connectionWait = "ciphersync_storage_connection_wait_seconds"
        static let batchOperations = "ciphersync_batch_operations"
    }

    /// Empty metrics with a registry of their own.
    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[Name.connectionWait] = [
            .microseconds(100), .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100),
            .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        ]
        factory.durationHistogramBuckets[Name.requestDuration] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        ]
        factory.valueHistogramBuckets[Name.batchOperations] = [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000]
        self.factory = factory
        itemsPushed = CoreMetrics.Counter(label: Name.itemsPushed, factory: factory)
        itemsPulled = CoreMetrics.Counter(label: Name.itemsPulled, factory: factory)
        connectionWaits = CoreMetrics.Timer(label: Name.connectionWait, dimensions: [], factory: factory)
        batchSizes = CoreMetrics.Recorder(label: Name.batchOperations, dimensions: [], aggregate: true, factory: factory)
        openStreams = CoreMetrics.Gauge(label: Name.openStreams, factory: factory)
    }

    /// Records a request's answer.
    ///
    /// - Parameters:
    ///   - route: The route's pattern (never the raw path), or `unmatched`.
    ///   - method: The HTTP method.
    ///   - status: The answer's status code.
    ///   - duration: The time until the answer's head was ready.
    func answered(route: String, method: String, status: Int, duration: Duration) {
        Self.handler(in: requests, for: RequestKey(route: route, method: method, status: status)) {
            CoreMetrics.Counter(
                label: Name.requests, dimensions: [("route", route), ("method", method), ("status", String(status))], factory: factory)
        }.increment()
        Self.handler(in: latencies, for: LatencyKey(route: route, method: method)) {
            CoreMetrics.Timer(label: Name.requestDuration, dimensions: [("route", route), ("method", method)], factory: factory)
        }.record(duration: duration)
    }

    /// Records a storage error by its kind (`no_connection`, `unreachable`, `busy`,
    /// `outcome_unknown`, `other`).
    func storageFailed(_ kind: String) {
        Self.handler(in: storageErrors, for: kind) {
            CoreMetrics.Counter(label: Name.storageErrors, dimensions: [("kind", kind)], factory: factory)
        }.increment()
    }

    /// The handler of one label set, made on its first use and kept (a lookup is cheaper than
    /// the factory's registry).
    private static func handler<Key: Hashable & Sendable, Handler: Sendable>(
        in handlers: borrowing Mutex<[Key: Handler]>, for key: Key, make: () -> Handler
    ) -> Handler {
        handlers.withLock { handlers in
            if let handler = handlers[key] { return handler }
            let handler = make()
            handlers[key] = handler
            return handler
        }
    }

    /// Records the time a statement waited for a storage connection.
    func connectionWaited(_ duration: Duration) {
        connectionWaits.record(duration: duration)
    }

    /// Counts items written by requests (each applied write of a single route or a batch).
    func pushed(_ count: Int) {
        if count > 0 { itemsPushed.increment(by: count) }
    }

    /// Counts items answered to reads (a page's items, or one item).
    func pulled(_ count: Int) {
        if count > 0 { itemsPulled.increment(by: count) }
    }

    /// Records the number of operations of a batch request.
    func batch(operations: Int) {
        batchSizes.record(operations)
    }

    /// Where each scrape counts the open change streams (the server's change notifications).
    func countStreams(_ count: @escaping @Sendable () -> Int) {
        streamCount.withLock { $0 = count }
    }

    /// The metrics in the Prometheus text format (version 0.0.4), the open change streams
    /// counted now.
    ///
    /// - Returns: The exposition's bytes.
    func exposition() -> [UInt8] {
        openStreams.record(streamCount.withLock { $0 }())
        return registry.emitToBuffer()
    }
}

extension CoreMetrics.Timer {
    /// Records a `Duration` (in nanoseconds, as swift-metrics keeps it).
    fileprivate func record(duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
