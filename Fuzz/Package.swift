// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for the query path and the request-body decoder. A package of its own, apart
// from the root package: these executables link only when built with the fuzzer sanitizer
// (`bash scripts/fuzz` builds them with `-sanitize=fuzzer`), and `swift build` in the root
// package builds every product it has.
let package = Package(
    name: "CipherSyncFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "CipherSync", path: "..")
    ],
    targets: [
        // libFuzzer's driver entry point, declared for Swift.
        .target(name: "CFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"], swiftSettings: upcomingFeatures),
        // OData query options: parse, print and parse again, translate to SQL, prepare in SQLite.
        .executableTarget(
            name: "fuzz-query",
            dependencies: [
                "FuzzSupport",
                // The modules under test (SyncWire, SyncSQL, SyncSQLite) are not products of
                // their own; they come with the one product, whose targets depend on them.
                .product(name: "CipherSync", package: "CipherSync"),
            ],
            swiftSettings: upcomingFeatures),
        // Request bodies: the strict JSON parser, and the writer's round trip.
        .executableTarget(
            name: "fuzz-json",
            dependencies: ["FuzzSupport", .product(name: "CipherSync", package: "CipherSync")],
            swiftSettings: upcomingFeatures),
    ]
)

/// The upcoming language features the root package's targets build with.
var upcomingFeatures: [SwiftSetting] {
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
