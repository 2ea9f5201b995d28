import Foundation
import SyncWire

/// Conversions between `Codable` models and JSON items. Dates travel as the protocol's
/// millisecond ISO 8601 text.
enum ModelCoding {
    static func object<Model: Encodable>(_ model: Model) throws -> JSONObject {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(WireDate.string(from: date))
        }
        do {
            return try JSONCoding.decode(JSONObject.self, from: try encoder.encode(model))
        } catch {
            throw SyncError(.invalidItem, reason: "The model does not encode as a JSON object.", underlying: error)
        }
    }

    static func model<Model: Decodable>(_ object: JSONObject, as type: Model.Type = Model.self) throws -> Model {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = WireDate.date(from: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not an ISO 8601 timestamp.")
            }
            return date
        }
        do {
            return try decoder.decode(type, from: try JSONCoding.encode(object))
        } catch {
            throw SyncError(.invalidItem, reason: "The item does not decode as the model type.", underlying: error)
        }
    }
}

/// An offline table of `Model` values: a ``SyncTable`` that encodes and decodes with `Codable`.
///
/// The model encodes to a JSON object with a string `id` property (optional on insert: a new
/// GUID is generated). Properties such as `version` or `updatedAt` are filled in when the model
/// declares them.
public struct TypedSyncTable<Model: Codable & Sendable>: Sendable {
    /// The untyped table underneath.
    public let table: SyncTable

    /// Wraps an untyped table.
    public init(_ table: SyncTable) { self.table = table }

    /// Inserts a model; see ``SyncTable/insert(_:)``.
    /// - Returns: the stored model, with its id.
    @discardableResult
    public func insert(_ model: Model) async throws -> Model {
        try ModelCoding.model(try await table.insert(try ModelCoding.object(model)))
    }

    /// Updates a model; see ``SyncTable/update(_:)``.
    public func update(_ model: Model) async throws {
        try await table.update(try ModelCoding.object(model))
    }

    /// Deletes a model; see ``SyncTable/delete(_:)``.
    public func delete(_ model: Model) async throws {
        try await table.delete(try ModelCoding.object(model))
    }

    /// The local model with `id`, or `nil`.
    public func lookup(id: String) async throws -> Model? {
        try await table.lookup(id: id).map { try ModelCoding.model($0) }
    }

    /// Runs a query on the local table; see ``SyncTable/read(_:)``.
    public func read(_ query: Query = Query()) async throws -> [Model] {
        try await table.read(query).items.map { try ModelCoding.model($0) }
    }

    /// Pulls server items; see ``SyncTable/pull(_:queryId:pageSize:)``.
    @discardableResult
    public func pull(_ query: Query = Query(), queryId: String? = nil, pageSize: Int = 50) async throws -> Int {
        try await table.pull(query, queryId: queryId, pageSize: pageSize)
    }

    /// Purges local rows; see ``SyncTable/purge(_:queryId:force:)``.
    public func purge(_ query: Query? = nil, queryId: String? = nil, force: Bool = false) async throws {
        try await table.purge(query, queryId: queryId, force: force)
    }
}

/// An online table of `Model` values: a ``RemoteTable`` that encodes and decodes with `Codable`.
public struct TypedRemoteTable<Model: Codable & Sendable>: Sendable {
    /// The untyped table underneath.
    public let table: RemoteTable

    /// Wraps an untyped table.
    public init(_ table: RemoteTable) { self.table = table }

    /// Inserts a model on the server; see ``RemoteTable/insert(_:)``.
    public func insert(_ model: Model) async throws -> Model {
        try ModelCoding.model(try await table.insert(try ModelCoding.object(model)))
    }

    /// Updates a model on the server; see ``RemoteTable/update(_:)``.
    public func update(_ model: Model) async throws -> Model {
        try ModelCoding.model(try await table.update(try ModelCoding.object(model)))
    }

    /// Deletes a model on the server; see ``RemoteTable/delete(_:)``.
    public func delete(_ model: Model) async throws {
        try await table.delete(try ModelCoding.object(model))
    }

    /// The server's model with `id`, or `nil`.
    public func lookup(id: String) async throws -> Model? {
        try await table.lookup(id: id).map { try ModelCoding.model($0) }
    }

    /// Runs a query on the server; see ``RemoteTable/read(_:)``.
    public func read(_ query: Query = Query()) async throws -> [Model] {
        try await table.read(query).items.map { try ModelCoding.model($0) }
    }
}
