// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "CipherSync",
    platforms: [.macOS(.v15)],
    products: [
        // The one product an app imports (`import CipherSync`): the client, the stores, secrets, JSON
        // values and queries, and their errors; a store author's `LocalStore` contract comes with it.
        .library(name: "CipherSync", targets: ["CipherSync"]),
        // The conformance suite of the store contract, for authors of a LocalStore of their own.
        .library(name: "CipherSyncStoreConformance", targets: ["CipherSyncStoreConformance"]),
        // The server integrator's: the reference server in a Swift process, or over another
        // `TableStorage` (it re-exports SyncWire and SyncSQL, whose types its API names).
        .library(name: "SyncServer", targets: ["SyncServer"]),
        // The other library targets are the modules these are made of; SyncCLI and TodoApp
        // are the executables' own code.
        .executable(name: "sync-server", targets: ["sync-server"]),
        .executable(name: "sync-keys", targets: ["sync-keys"]),
        .executable(name: "todo", targets: ["todo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // JWT verification (sync-server --jwt-secret-file / --jwks-file); it brings swift-crypto.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        // `swift package generate-documentation`: the DocC catalogs of the library products.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Only the tests name swift-crypto themselves: they generate RSA key pairs.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.1.0"),
        // PostgreSQL storage for the server (sync-server --database postgres://…).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.25.0"),
        // The client's change stream on Linux (HTTPSyncTransport.openStream) and the tests' HTTP
        // fixtures; the server has it through Hummingbird.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // The HTTP parts the server's connection handlers see (HTTPRefusals.swift); the server
        // has it through Hummingbird.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // The server's metrics (sync-server --metrics-port): swift-metrics handlers backed by a
        // Prometheus registry of each server's own.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // MARK: C libraries (system): SQLCipher only, never plain SQLite; OpenSSL libcrypto.
        .systemLibrary(name: "CSQLCipher", pkgConfig: "sqlcipher", providers: [.apt(["libsqlcipher-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // TPM 2.0 through Debian's tpm2-tss: ESAPI, the TCTI loader and the return-code decoder.
        .systemLibrary(name: "CTSS2", pkgConfig: "tss2-esys", providers: [.apt(["libtss2-dev"])]),

        // MARK: Libraries
        .target(name: "SyncSQLite", dependencies: ["CSQLCipher", "SyncKeys", "SyncSQL"]),
        .target(name: "SyncKeys", dependencies: ["COpenSSL"]),
        // TPM 2.0 key slots: the data key's slot secret sealed in a TPM (ESAPI), every return code
        // checked in one place.
        .target(name: "SyncTPM", dependencies: ["CTSS2", "SyncKeys"]),
        .target(name: "SyncWire"),
        // The task executor over one NIO event loop that the client's pushes (on Linux) and the
        // server's change streams prefer: one `package` type, no public API.
        .target(name: "SyncEventLoop", dependencies: [.product(name: "NIOCore", package: "swift-nio")]),
        // The one place SQL text is made: the translator and its dialects, identifier quoting,
        // the bound-value type and its JSON coding. Pure Swift, no I/O, no engine.
        .target(name: "SyncSQL", dependencies: ["SyncWire"]),
        // Key maintenance of a store's files (envelope, rotation, migration, lock, verification) and
        // the store's error type; the store opens its encrypted databases through it.
        .target(name: "SyncKeyMaintenance", dependencies: ["SyncSQLite", "SyncSQL", "SyncKeys", "SyncTPM"]),
        .target(name: "SyncStore", dependencies: ["SyncKeyMaintenance", "SyncSQLite", "SyncSQL", "SyncKeys", "SyncWire"]),
        // On Linux the change stream goes over SwiftNIO, not FoundationNetworking's URLSession
        // (whose task cancellation can stop the process); Apple platforms keep URLSession.
        .target(
            name: "SyncClient",
            dependencies: [
                "SyncStore", "SyncWire", "SyncKeys", .product(name: "Logging", package: "swift-log"),
                .target(name: "SyncEventLoop", condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
            ]),

        // The one module an app imports: chosen re-exports of the client, the stores, their keys,
        // secrets and the JSON/query model (Sources/CipherSync/CipherSync.swift).
        .target(name: "CipherSync", dependencies: ["SyncClient", "SyncStore", "SyncKeyMaintenance", "SyncKeys", "SyncTPM", "SyncWire"]),
        // The store contract's conformance suite: checks any LocalStore against what the engine
        // relies on, through `import CipherSync` alone; no test framework (it returns failures).
        .target(name: "CipherSyncStoreConformance", dependencies: ["CipherSync"]),

        .target(
            name: "SyncServer",
            dependencies: [
                "SyncSQL",
                "SyncWire",
                // Change streams run on their connection's event loop.
                "SyncEventLoop",
                // SHA-256 of attachment content and names (OpenSSL, as the stores use it).
                "SyncKeys",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // Its SQLite library (the module VaporCSQLite, symbols prefixed), which the
                // embedded store calls directly (ServerSQLite).
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // NIOThreadPool: the attachment files' blocking I/O, off the threads that run tasks.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // HTTPParserError and the HTTP parts: requests the HTTP decoder refuses are
                // answered in JSON.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The OpenAPI document of the tables API, compiled into the server (GET /openapi.json).
            resources: [.embedInCode("Resources/openapi.json")]),

        .target(
            name: "SyncCLI",
            dependencies: [
                "SyncKeys", "SyncKeyMaintenance", "SyncSQLite", "SyncTPM",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // MARK: Executables (thin: parse, read secrets, call the libraries, print)
        .executableTarget(
            name: "sync-server",
            dependencies: [
                "SyncServer",
                "SyncWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),

        .executableTarget(
            name: "sync-keys",
            dependencies: [
                "SyncCLI", "SyncKeyMaintenance", "SyncStore", "SyncKeys", "SyncTPM",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        .target(name: "TodoApp", dependencies: ["SyncClient", "SyncStore", "SyncKeyMaintenance", "SyncKeys", "SyncWire"]),
        .executableTarget(
            name: "todo",
            dependencies: [
                "TodoApp", "SyncCLI", "SyncClient", "SyncStore", "SyncKeys", "SyncWire", "SyncServer", "SyncKeyMaintenance", "SyncTPM",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // One device of the chaos suite (scripts/chaos): a store and a sync context driven by
        // commands on standard input, writing a history log. Not a product.
        .executableTarget(
            name: "chaos-device",
            dependencies: ["SyncClient", "SyncStore", "SyncKeyMaintenance", "SyncKeys", "SyncWire", "SyncTestSupport"]),

        // MARK: Test support (not a product)
        .target(
            name: "SyncTestSupport", dependencies: ["SyncStore", "SyncKeys", "SyncClient", "SyncSQL", "SyncSQLite"],
            path: "Tests/SyncTestSupport"),

        // A store kept in memory, written against `import CipherSync` alone (the public store
        // contract): the conformance suite and the end-to-end tests run on it too.
        .target(name: "InMemoryStoreSupport", dependencies: ["CipherSync"], path: "Tests/InMemoryStore"),

        // A test-only SQLite VFS that fails syncs and simulates power cuts under the store.
        .target(name: "CFaultVFS", dependencies: ["CSQLCipher"], path: "Tests/CFaultVFS"),

        // MARK: Tests
        .testTarget(name: "SyncSQLiteTests", dependencies: ["SyncSQLite", "SyncSQL", "SyncTestSupport"]),
        // The Swift code blocks of README.md and the DocC articles, compiled against `import CipherSync`
        // alone, and the store conformance suite for the store-author article (scripts/examples
        // writes them into Examples.swift; a test checks it is up to date).
        .testTarget(name: "DocumentationExamplesTests", dependencies: ["CipherSync", "CipherSyncStoreConformance"]),
        .testTarget(name: "SyncKeysTests", dependencies: ["SyncKeys", "SyncTestSupport"]),
        .testTarget(
            name: "SyncKeyMaintenanceTests",
            dependencies: ["SyncKeyMaintenance", "SyncKeys", "SyncSQLite", "SyncSQL", "SyncStore", "SyncTestSupport"]),
        .testTarget(name: "SyncWireTests", dependencies: ["SyncWire", "SyncTestSupport"]),
        .testTarget(name: "SyncSQLTests", dependencies: ["SyncSQL", "SyncWire"]),
        .testTarget(
            name: "SyncServerTests",
            dependencies: [
                "SyncServer", "SyncSQL", "SyncWire", "SyncTestSupport", "SyncClient", "SyncStore", "SyncKeys",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "JWTKit", package: "jwt-kit"), .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // NIOAsyncTestingEventLoop: the keep-alive clock on a loop whose time the test moves.
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]),
        .testTarget(
            name: "SyncStoreTests",
            dependencies: [
                "SyncStore", "SyncKeys", "SyncSQLite", "SyncSQL", "SyncWire", "COpenSSL", "SyncTestSupport", "CFaultVFS",
            ]),
        .testTarget(
            name: "StoreConformanceTests",
            dependencies: ["CipherSyncStoreConformance", "InMemoryStoreSupport", "SyncStore", "SyncTestSupport"]),
        .testTarget(name: "SyncClientTests", dependencies: ["SyncClient", "SyncStore", "SyncSQL", "SyncWire", "SyncTestSupport"]),
        .testTarget(
            name: "SyncEndToEndTests",
            dependencies: [
                "SyncClient", "SyncServer", "SyncStore", "SyncWire", "SyncTestSupport", "InMemoryStoreSupport", "SyncEventLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        .testTarget(
            name: "TodoTests",
            dependencies: [
                "TodoApp", "SyncClient", "SyncStore", "SyncKeys", "SyncServer", "SyncSQL", "SyncWire", "SyncTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "SyncKeysCLITests",
            dependencies: [
                "SyncStore", "SyncKeyMaintenance", "SyncKeys", "SyncSQLite", "SyncWire", "SyncCLI", "SyncTestSupport", "SyncTPM",
            ]),
    ]
)

// Every Swift target, tests included, builds with the same upcoming features.
for target in package.targets where target.type != .system && !target.name.hasPrefix("C") {
    target.swiftSettings = (target.swiftSettings ?? []) + upcomingFeatures
}

/// The upcoming language features every target builds with: `any` spelled out, imports that say
/// what they re-export (`public import` only where a public signature needs it), and members
/// visible only through the modules a file imports.
var upcomingFeatures: [SwiftSetting] {
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
