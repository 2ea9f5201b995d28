// The store's errors (`StoreError`) and its key maintenance (`StoreKeys`: passphrase change,
// data-key rotation, recovery codes, verification, encryption of a plain store) live in
// SyncKeyMaintenance, the module below this one that opens an encrypted store's key envelope.
// `import SyncStore` brings them along: an app opens a store, catches its errors and changes its
// passphrase with one import, as before the two modules were split.
@_exported public import SyncKeyMaintenance
