import SyncTestSupport

/// The built `sync-keys`, run with the insecure test profile allowed (tests stay fast).
let CLI = BuiltTool("sync-keys", environment: ["CIPHERSYNC_ALLOW_INSECURE_PROFILE": "1"])
