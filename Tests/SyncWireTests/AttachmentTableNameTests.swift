import SyncWire
import Testing

/// The reserved suffix of attachment companion tables: no user table may end with it, and a
/// companion's name and its table's map onto each other.
@Suite struct AttachmentTableNameTests {
    @Test func aUserTableCannotEndWithTheSuffix() {
        #expect(TableName.isValid("photos"))
        #expect(!TableName.isValid("photos__attachments"))
        #expect(!TableName.isValid("photos__ATTACHMENTS"), "the suffix is matched whatever its ASCII case")
        #expect(!TableName.isValid("__attachments"))
        #expect(TableName.isValid("photos_attachments"), "one underscore is an ordinary name")
        #expect(TableName.isValid("photos__attachmentsX"))
    }

    @Test func companionAndOwnerMapOntoEachOther() {
        #expect(TableName.attachments(of: "todoItem") == "todoItem__attachments")
        #expect(TableName.attachmentOwner(of: "todoItem__attachments") == "todoItem")
        #expect(TableName.attachmentOwner(of: "todoItem__Attachments") == "todoItem")
        for table in ["a", "Inspections", "x_1", String(repeating: "t", count: 128)] {
            #expect(TableName.attachmentOwner(of: TableName.attachments(of: table)) == table)
        }
    }

    @Test func namesThatAreNoCompanion() {
        #expect(TableName.attachmentOwner(of: "todoItem") == nil)
        #expect(TableName.attachmentOwner(of: "__attachments") == nil, "no owner")
        #expect(TableName.attachmentOwner(of: "1a__attachments") == nil, "the owner is no valid table name")
        #expect(TableName.attachmentOwner(of: "a__attachments__attachments") == nil, "a companion has no companion")
        #expect(TableName.attachmentOwner(of: "a-b__attachments") == nil)
        #expect(TableName.attachmentOwner(of: "") == nil)
    }

    @Test func headerNames() {
        #expect(WireHeader.uploadOffset == "Upload-Offset")
        #expect(WireHeader.uploadLength == "Upload-Length")
    }
}
