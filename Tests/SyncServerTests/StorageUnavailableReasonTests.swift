import SyncServer
import Testing

/// Why a storage could not serve a request is one of a set of static reasons that may grow,
/// compared with `==`; its name is the label of the storage-error metric, and the 503's message
/// says what happened.
@Suite struct StorageUnavailableReasonTests {
    @Test func eachReasonHasItsLabelAndMessage() {
        let reasons: [(StorageUnavailableError.Reason, String, String)] = [
            (.noConnection, "no_connection", "The storage is unavailable: no database connection within 2 s; the request was not applied"),
            (.unreachable, "unreachable", "The storage is unavailable: the database cannot be reached; the request was not applied"),
            (.busy, "busy", "The storage is unavailable: the database stayed locked for 2 s; the request was not applied"),
        ]
        for (reason, label, message) in reasons {
            let error = StorageUnavailableError(reason, timeout: .seconds(2))
            #expect(error.reason == reason)
            #expect(reason.description == label)
            #expect(error.description == message)
        }
        #expect(StorageUnavailableError.Reason.busy != .unreachable)
    }
}
