/// An error that is a struct of kinds (``KeyError``, ``AttachmentFileError``, and `StoreError`,
/// `SyncError`, `TodoError`, `AuthenticationFailure` above this module): a public struct around a
/// package code, so that kinds can be added later without breaking anyone's `switch`.
///
/// A conforming error declares only its kinds (the static members), what an occurrence carries
/// and its messages. Equality and hashing come from here and look at the kind only; its
/// pattern-matching operator, which must be declared on the type itself to be found in a client's
/// `catch KeyError.wrongPassphrase`, forwards to ``matches(_:)``.
package protocol KindedError: Error, Hashable {
    /// The kinds of the error, named as its static members are.
    associatedtype Code: Hashable, RawRepresentable<String>

    /// The kind of this occurrence.
    var code: Code { get }
}

extension KindedError {
    /// Errors are equal when they are the same kind of error; what an occurrence carries besides
    /// its kind (a reason, a count, an underlying error) is ignored.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    /// Hashes the kind of error only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Whether `value` is an error of this type and of this kind (the body of each type's `~=`).
    package func matches(_ value: any Error) -> Bool { (value as? Self)?.code == code }

    /// The type and the kind, `StoreError.storeInUse`: the message of a kind that has no sentence
    /// of its own.
    package var kindName: String { "\(Self.self).\(code.rawValue)" }
}
