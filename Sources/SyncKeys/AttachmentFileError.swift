/// Why an attachment file cannot be read or written: each kind of damage is its own kind.
///
/// A struct of kinds, so that kinds can be added later without breaking callers. Compare with the
/// static members, which match on the kind only (`error == .truncated`, `catch
/// AttachmentFileError.segmentOutOfPlace`); the detail of an occurrence is in ``segment``,
/// ``belongsAt``, ``version`` and ``reason``:
///
/// ```swift
/// catch let error as AttachmentFileError where error == .segmentAuthenticationFailed {
///     log("segment \(error.segment ?? 0) was modified")
/// }
/// ```
public struct AttachmentFileError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        case notAnAttachmentFile, unsupportedVersion, malformedHeader, truncated, segmentAuthenticationFailed
        case segmentOutOfPlace, malformedPadding, keyUnavailable, io
    }

    package let code: Code
    /// The segment that fails (``segmentAuthenticationFailed`` and ``segmentOutOfPlace``).
    public let segment: Int?
    /// Where the segment belongs (``segmentOutOfPlace``).
    public let belongsAt: Int?
    /// The format version met (``unsupportedVersion``).
    public let version: Int?
    /// The operation that failed and the system's message (``io``).
    public let reason: String?

    init(_ code: Code, segment: Int? = nil, belongsAt: Int? = nil, version: Int? = nil, reason: String? = nil) {
        self.code = code
        self.segment = segment
        self.belongsAt = belongsAt
        self.version = version
        self.reason = reason
    }

    /// One sentence; never key material or content.
    public var description: String {
        switch code {
        case .notAnAttachmentFile: return "The file is not an encrypted attachment."
        case .unsupportedVersion: return "The attachment file has an unsupported format version (\(version.map(String.init) ?? "?"))."
        case .malformedHeader: return "The attachment file's header is damaged."
        case .truncated: return "The attachment file is truncated."
        case .segmentAuthenticationFailed:
            return "Segment \(segment.map(String.init) ?? "?") of the attachment file was modified or comes from another file."
        case .segmentOutOfPlace:
            return
                "Segment \(segment.map(String.init) ?? "?") of the attachment file belongs at position \(belongsAt.map(String.init) ?? "?"): segments were reordered."
        case .malformedPadding: return "The attachment file's padding is damaged."
        case .keyUnavailable: return "The attachment's key is not available."
        case .io: return "The attachment file could not be read or written (\(reason ?? "no detail"))."
        }
    }
}

extension AttachmentFileError: Equatable, Hashable, KindedError {
    /// Matches any error against an `AttachmentFileError` kind, so that `catch
    /// AttachmentFileError.truncated` works.
    public static func ~= (pattern: AttachmentFileError, value: any Error) -> Bool { pattern.matches(value) }
}

extension AttachmentFileError {
    /// The file does not start with the attachment magic (`CSAT`).
    public static let notAnAttachmentFile = AttachmentFileError(.notAnAttachmentFile)
    /// The file has a format version this build does not read (the kind).
    public static let unsupportedVersion = AttachmentFileError(.unsupportedVersion)
    /// The header's sizes or reserved bytes are not valid.
    public static let malformedHeader = AttachmentFileError(.malformedHeader)
    /// The file ends early: bytes or whole segments were cut off the end.
    public static let truncated = AttachmentFileError(.truncated)
    /// A segment fails its tag: a byte was changed, or the segment comes from another file (the
    /// kind).
    public static let segmentAuthenticationFailed = AttachmentFileError(.segmentAuthenticationFailed)
    /// A segment of this file sits at another place: segments swapped or reordered (the kind).
    public static let segmentOutOfPlace = AttachmentFileError(.segmentOutOfPlace)
    /// The sealed content is not padded as the format says.
    public static let malformedPadding = AttachmentFileError(.malformedPadding)
    /// The attachment's key cannot be used (wrong length, or it does not unwrap).
    public static let keyUnavailable = AttachmentFileError(.keyUnavailable)
    /// Reading or writing the file failed (the kind).
    public static let io = AttachmentFileError(.io)

    /// The file has a format version this build does not read.
    ///
    /// - Parameter version: The version met.
    public static func unsupportedVersion(_ version: Int) -> AttachmentFileError {
        AttachmentFileError(.unsupportedVersion, version: version)
    }

    /// A segment fails its tag: a byte was changed, or the segment comes from another file.
    ///
    /// - Parameter segment: The segment's index.
    public static func segmentAuthenticationFailed(segment: Int) -> AttachmentFileError {
        AttachmentFileError(.segmentAuthenticationFailed, segment: segment)
    }

    /// A segment of this file sits at another place (segments swapped or reordered).
    ///
    /// - Parameters:
    ///   - segment: Where the segment sits.
    ///   - belongsAt: Where it authenticates.
    public static func segmentOutOfPlace(segment: Int, belongsAt: Int) -> AttachmentFileError {
        AttachmentFileError(.segmentOutOfPlace, segment: segment, belongsAt: belongsAt)
    }

    /// Reading or writing the file failed.
    ///
    /// - Parameter reason: The operation and the system's message.
    public static func io(_ reason: String) -> AttachmentFileError { AttachmentFileError(.io, reason: reason) }
}
