// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for the query path and the request-body decoder. A package of its own, apart
// from the root package: these executables link only when built with the fuzzer sanitizer
// (`bash scripts/fuzz` builds them with `-sanitize=fuzzer`), and `swift build` in the root
// package builds every product it has.
//
// The modules under test are compiled from the root package's own sources: `Sources/SyncWire`,
// `Sources/SyncSQL`, … here are symbolic links to `../../Sources/…`. So the sanitized release
// build compiles those few modules and nothing else (depending on the `CipherSync` product would
// also build the client's networking stack, which the fuzzers never run). Their dependencies
// below are the root package's, and must follow it.
let package = Package(
    name: "CipherSyncFuzz",
    platforms: [.macOS(.v15)],
    targets: [
        // The root package's modules under test (links to its sources).
        .systemLibrary(name: "CSQLCipher", pkgConfig: "sqlcipher"),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto"),
        .target(name: "SyncWire", swiftSettings: upcomingFeatures),
        .target(name: "SyncSQL", dependencies: ["SyncWire"], swiftSettings: upcomingFeatures),
        .target(name: "SyncKeys", dependencies: ["COpenSSL"], swiftSettings: upcomingFeatures),
        .target(
            name: "SyncSQLite", dependencies: ["CSQLCipher", "SyncKeys", "SyncSQL"], swiftSettings: upcomingFeatures),

        // libFuzzer's driver entry point, declared for Swift.
        .target(name: "CFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"], swiftSettings: upcomingFeatures),
        // OData query options: parse, print and parse again, translate to SQL, prepare in SQLite.
        .executableTarget(
            name: "fuzz-query",
            dependencies: ["FuzzSupport", "SyncWire", "SyncSQL", "SyncSQLite"],
            swiftSettings: upcomingFeatures),
        // Request bodies: the strict JSON parser, and the writer's round trip.
        .executableTarget(
            name: "fuzz-json",
            dependencies: ["FuzzSupport", "SyncWire"],
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
