public import Logging

/// swift-log's `StreamLogHandler` to standard error, with the logger's metadata kept as values
/// and rendered only when a line is written.
///
/// The stream handler renders its metadata to text each time it changes, and Hummingbird gives
/// every request's logger a request id: with it, each request paid for rendering a line that was
/// never written. `sync-server` logs through this handler.
public struct ServerLogHandler: LogHandler {
    private var stream: StreamLogHandler
    public var metadata: Logger.Metadata = [:]

    /// A handler writing to standard error, its lines labelled `label`.
    public init(label: String) {
        stream = .standardError(label: label)
    }

    /// A handler writing to `stream`, its lines labelled `label`.
    public init(label: String, stream: any TextOutputStream & Sendable) {
        self.stream = StreamLogHandler(label: label, stream: stream, metadataProvider: nil)
    }

    public var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        // The line's own metadata wins over the logger's, as in the stream handler.
        if !metadata.isEmpty { event.metadata = metadata.merging(event.metadata ?? [:]) { $1 } }
        stream.log(event: event)
    }
}
