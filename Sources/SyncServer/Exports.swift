// The modules whose types the server's API names (`JSONObject` in `TableStorage`'s rows,
// `ColumnType` in its schemas, `QueryError`), so that an integrator who imports SyncServer to run
// the server in-process or over another `TableStorage` needs no other CipherSync import.
@_exported public import SyncSQL
@_exported public import SyncWire
