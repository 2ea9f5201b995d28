// The one module an app imports. `import CipherSync` brings the sync client (SyncClient), the local
// store, plain or encrypted, with its key maintenance and errors (SyncStore, SyncKeyMaintenance),
// secrets (SyncKeys), key slots sealed in the device's TPM (SyncTPM), and JSON values and queries (SyncWire). Whole modules are re-exported, not
// chosen names: the query operators and the conformances that make `Field("done") == false` work
// are members declared in extensions, which only a module import makes visible.

@_exported public import SyncClient
@_exported public import SyncKeyMaintenance
@_exported public import SyncKeys
@_exported public import SyncStore
@_exported public import SyncTPM
@_exported public import SyncWire
