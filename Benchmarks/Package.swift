// swift-tools-version:6.2
import PackageDescription

// `sync-bench`, the benchmark of CipherSync: a package of its own beside the root package, so the
// product package ships no benchmark. It depends on the root package (`..`) and measures the
// products an app and a server integrator use; it runs the root's `sync-server` and `sync-keys`,
// which it finds beside its own executable.
//
// Build it into the root's scratch directory, beside the root's executables, so that it reuses
// the modules built there: `bash scripts/bench-build` from the root package's directory
// (`--release` for measurements, `--tests` for its tests; CONTRIBUTING.md, Benchmarks). The
// script, not a bare `swift build --package-path Benchmarks`: two packages share the scratch
// directory, and a build that meets the other package's cached plan builds the other package.
//
// `BenchProcesses` is compiled from the root's test support (the files under
// `Sources/BenchProcesses` are symbolic links to `../../../Tests/SyncTestSupport/…`): launching
// child processes and tools, `sync-server` children, a private PostgreSQL cluster, a software TPM.
/// The root package's identity, as SwiftPM names a package given by path: its directory's name.
let root = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "ciphersync").lowercased()

let package = Package(
    name: "CipherSyncBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sync-bench", targets: ["sync-bench"])
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // The root package's process helpers of its test support (links to its sources).
        .target(name: "BenchProcesses"),
        // sys/epoll.h, which Glibc's Swift module leaves out (the fleet's stream reader).
        .target(name: "CEpoll"),
        .executableTarget(
            name: "sync-bench",
            dependencies: [
                "BenchProcesses",
                "CEpoll",
                .product(name: "CipherSync", package: root),
                .product(name: "SyncServer", package: root),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Each workload run with tiny sizes: it works, its records say what they should, and it
        // leaves nothing behind (never how fast).
        .testTarget(name: "SyncBenchTests", dependencies: ["BenchProcesses"]),
    ]
)

// Every Swift target builds with the root package's upcoming features.
for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + upcomingFeatures
}

/// The upcoming language features the root package's targets build with.
var upcomingFeatures: [SwiftSetting] {
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
