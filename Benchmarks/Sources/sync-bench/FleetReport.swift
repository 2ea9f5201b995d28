#if canImport(Glibc)
import Foundation

extension FleetWorkload {
    /// The report as text: one block per target, then the held streams.
    static func report(_ report: Report) -> String {
        func ms(_ value: Double) -> String { String(format: "%.2f ms", value) }
        func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }
        var lines: [String] = []
        for target in report.targets {
            lines.append(
                "\(target.target): \(target.streams) idle streams (a keep-alive every \(String(format: "%g", report.keepAliveSeconds)) s each), "
                    + "a table of \(target.rows) rows; \(target.get.alone.count) requests of each kind alone and "
                    + "\(target.get.withStreams.count) with the streams, in \(report.rounds) rounds taking turns")
            for (name, comparison) in [("GET by id", target.get), ("PATCH", target.patch)] {
                lines.append(
                    "  \(name): p50 \(ms(comparison.alone.p50)) → \(ms(comparison.withStreams.p50)) (\(ratio(comparison.medianRatio))), "
                        + "p99 \(ms(comparison.alone.p99)) → \(ms(comparison.withStreams.p99)) (\(ratio(comparison.p99Ratio))); goal ≤ 1.2×")
            }
            lines.append(String(format: "  storage queries/s while the streams are idle: %.1f (goal 0)", target.idleQueriesPerSecond))
            lines.append(
                "  write → event: p50 \(ms(target.eventLatency.p50)), p99 \(ms(target.eventLatency.p99)) over \(target.events) events"
                    + " (\(target.missedEvents) missed, \(target.failedStreams) streams failed)")
        }
        if let held = report.held {
            lines.append(
                "sync-server holding \(held.streams) idle streams: \(String(format: "%.1f", held.bytesPerStream / 1024)) KiB per stream "
                    + "(goal ≤ 64 KiB), \(held.delivered) of them got the next write's event, \(held.failedStreams) failed "
                    + "(descriptor limit \(held.descriptorLimit))")
        }
        return lines.joined(separator: "\n")
    }
}
#endif

#if canImport(Glibc)
extension BenchOptions {
    /// `--fleet`: runs ``FleetWorkload`` and prints its report.
    func runFleet() async throws {
        var workload = FleetWorkload()
        (workload.streams, workload.writers, workload.users) = (fleetStreams, fleetWriters, fleetUsers)
        (workload.rows, workload.samples, workload.rounds, workload.heldStreams) = (fleetRows, fleetSamples, fleetRounds, fleetHeldStreams)
        workload.postgresURL = postgresURL
        if let fleetKeepAlive { workload.keepAlive = .seconds(fleetKeepAlive) }
        let tool = fleetHeldStreams > 0 ? try BenchTools.locate("sync-server") : nil
        let report = try await workload.run(serverTool: tool)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(FleetWorkload.report(report))
        }
    }
}
#endif
