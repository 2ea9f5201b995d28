import Foundation
public import SyncWire

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

/// A table of JSON items, the base a ``TypedTable`` encodes and decodes around: ``SyncTable``
/// (offline) and ``RemoteTable`` (online).
public protocol ItemTable: Sendable {
    /// Inserts an item.
    /// - Parameter item: the item; without an id, one is assigned.
    /// - Returns: the stored item.
    /// - Throws: the table's ``SyncError``s.
    func insert(_ item: JSONObject) async throws -> JSONObject
    /// Deletes an item (its version, when it has one, guards the delete).
    /// - Parameter item: the item to delete.
    /// - Throws: the table's ``SyncError``s.
    func delete(_ item: JSONObject) async throws
    /// The item with `id`, or `nil`.
    /// - Parameter id: the item id.
    /// - Returns: the item, or `nil` when there is none.
    /// - Throws: the table's ``SyncError``s.
    func lookup(id: String) async throws -> JSONObject?
    /// Runs a query on the table.
    /// - Parameter query: what to read.
    /// - Returns: the items, and the total count when the query asked for it.
    /// - Throws: the table's ``SyncError``s.
    func read(_ query: Query) async throws -> QueryResult
}

extension SyncTable: ItemTable {}
extension RemoteTable: ItemTable {}

/// A table of `Model` values: an ``ItemTable`` that encodes and decodes with `Codable`.
///
/// The model encodes to a JSON object with a string `id` property (optional on insert: a new
/// GUID is generated). Properties such as `version` or `updatedAt` are filled in when the model
/// declares them. Dates travel as the protocol's millisecond ISO 8601 text.
public struct TypedTable<Base: ItemTable, Model: Codable & Sendable>: Sendable {
    /// The untyped table underneath.
    public let table: Base

    /// Wraps an untyped table.
    /// - Parameter table: the table of JSON items.
    public init(_ table: Base) { self.table = table }

    /// Inserts a model; see ``ItemTable/insert(_:)``.
    /// - Parameter model: the model; without an id, one is assigned.
    /// - Returns: the stored model, with its id.
    /// - Throws: ``SyncError/invalidItem`` (the model does not encode as a JSON object, or the
    ///   answer does not decode as `Model`), and the table's errors.
    @discardableResult
    public func insert(_ model: Model) async throws -> Model {
        try ModelCoding.model(try await table.insert(try ModelCoding.object(model)))
    }

    /// Deletes a model; see ``ItemTable/delete(_:)``.
    /// - Parameter model: the model to delete.
    /// - Throws: ``SyncError/invalidItem``, and the table's errors.
    public func delete(_ model: Model) async throws {
        try await table.delete(try ModelCoding.object(model))
    }

    /// The model with `id`, or `nil`.
    /// - Parameter id: the item id.
    /// - Returns: the model, or `nil` when there is none.
    /// - Throws: ``SyncError/invalidItem``, and the table's errors.
    public func lookup(id: String) async throws -> Model? {
        try await table.lookup(id: id).map { try ModelCoding.model($0) }
    }

    /// Runs a query; see ``ItemTable/read(_:)``.
    /// - Parameter query: what to read.
    /// - Returns: the models.
    /// - Throws: ``SyncError/invalidItem``, and the table's errors.
    public func read(_ query: Query = Query()) async throws -> [Model] {
        try await table.read(query).items.map { try ModelCoding.model($0) }
    }
}

/// An offline table of `Model` values (see ``SyncTable``).
public typealias TypedSyncTable<Model: Codable & Sendable> = TypedTable<SyncTable, Model>
/// An online table of `Model` values (see ``RemoteTable``).
public typealias TypedRemoteTable<Model: Codable & Sendable> = TypedTable<RemoteTable, Model>

extension TypedTable where Base == SyncTable {
    /// Updates a model locally and queues the update; see ``SyncTable/update(_:)``.
    /// - Parameter model: the model.
    /// - Throws: ``SyncError/invalidItem``, and the table's errors.
    public func update(_ model: Model) async throws {
        try await table.update(try ModelCoding.object(model))
    }

    /// Pulls server items; see ``SyncTable/pull(_:queryId:pageSize:)``.
    /// - Returns: the number of items applied to the store (see ``SyncTable/pull(_:queryId:pageSize:)``).
    /// - Throws: as ``SyncTable/pull(_:queryId:pageSize:)``.
    @discardableResult
    public func pull(_ query: Query = Query(), queryId: String? = nil, pageSize: Int = 1000) async throws -> Int {
        try await table.pull(query, queryId: queryId, pageSize: pageSize)
    }

    /// Purges local rows; see ``SyncTable/purge(_:queryId:force:)``.
    /// - Throws: as ``SyncTable/purge(_:queryId:force:)``.
    public func purge(_ query: Query? = nil, queryId: String? = nil, force: Bool = false) async throws {
        try await table.purge(query, queryId: queryId, force: force)
    }
}

extension TypedTable where Base == RemoteTable {
    /// Updates a model on the server; see ``RemoteTable/update(_:)``.
    /// - Parameter model: the model.
    /// - Returns: the server's model.
    /// - Throws: ``SyncError/invalidItem``, and the table's errors.
    public func update(_ model: Model) async throws -> Model {
        try ModelCoding.model(try await table.update(try ModelCoding.object(model)))
    }
}
