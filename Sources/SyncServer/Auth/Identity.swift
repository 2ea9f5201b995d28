/// Who a request comes from, as authentication established it: the subject (`sub`) a token
/// names. Per-user tables keep each row under its owner's subject.
public struct Identity: Sendable, Hashable {
    /// The subject: the user's stable id at the identity provider.
    public let subject: String

    /// An identity.
    ///
    /// - Parameter subject: The subject.
    public init(subject: String) {
        self.subject = subject
    }
}
