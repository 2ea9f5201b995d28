#if os(Linux)
import Foundation
import FoundationNetworking
import NIOCore
import NIOHTTP1
@testable import SyncClient
import Testing

/// The request head the Linux transport builds straight from a `SyncRequest`: the target as
/// percent-encoded in the URL, the `Host` header with the port only when it is not the scheme's
/// default, the request's own headers, `Content-Length` for a body, `Connection: close` for a
/// connection of its own, the timeout, and a typed error for a URL it cannot send to.
@Suite struct RequestTargetTests {
    static func request(
        _ url: String, body: Data? = nil, headers: [String: String] = ["Accept": "application/json"]
    ) throws
        -> SyncRequest
    {
        let url = try #require(URL(string: url))
        return SyncRequest(method: body == nil ? .get : .patch, url: url, headers: headers, body: body)
    }

    @Test func theHeadCarriesThePathQueryHostAndHeaders() throws {
        let request = try Self.request("http://127.0.0.1:8123/tables/to%20do/a%2Fb?$top=2&$filter=text%20eq%20'a'")
        let target = try RequestTarget(request, timeout: 2.5, keepAlive: true)
        #expect(target.head.method == .GET)
        #expect(target.head.uri == "/tables/to%20do/a%2Fb?$top=2&$filter=text%20eq%20'a'")
        #expect(target.head.headers["Host"] == ["127.0.0.1:8123"])
        #expect(target.head.headers["accept"] == ["application/json"])
        #expect(target.head.headers["Connection"].isEmpty)
        #expect(target.head.headers["Content-Length"].isEmpty)
        #expect(target.body == nil)
        #expect((target.host, target.port, target.secure) == ("127.0.0.1", 8123, false))
        #expect(target.timeout == .milliseconds(2_500))
        #expect(target.isRepeatable)
    }

    @Test func aBodyHasItsLengthAndAStreamedRequestClosesItsConnection() throws {
        let body = Data(#"{"id":"a"}"#.utf8)
        let request = try Self.request("https://example.com/tables/todo/a", body: body, headers: ["content-length": "999", "If-Match": "\"v\""])
        let target = try RequestTarget(request, timeout: .infinity, keepAlive: false)
        #expect(target.head.method == .PATCH)
        #expect(target.head.uri == "/tables/todo/a")
        #expect(target.head.headers["Host"] == ["example.com"])
        #expect(target.head.headers["Content-Length"] == [String(body.count)])
        #expect(target.head.headers["Connection"] == ["close"])
        #expect(target.head.headers["if-match"] == ["\"v\""])
        #expect(target.body == body)
        #expect((target.port, target.secure, target.serverName) == (443, true, "example.com"))
        #expect(target.timeout == .seconds(60))
        #expect(!target.isRepeatable)
    }

    @Test func anIPv6HostIsBracketedInTheHostHeaderOnly() throws {
        let target = try RequestTarget(try Self.request("http://[::1]:9000"), timeout: 1, keepAlive: true)
        #expect(target.host == "::1")
        #expect(target.serverName == nil)
        #expect(target.head.headers["Host"] == ["[::1]:9000"])
        #expect(target.head.uri == "/")
    }

    @Test func aURLItCannotSendToIsATypedError() throws {
        for url in ["ftp://example.com/tables/todo", "file:///tmp/x", "mailto:someone@example.com"] {
            let error = #expect(throws: URLError.self) { try RequestTarget(try Self.request(url), timeout: 1, keepAlive: true) }
            #expect(error?.code == .unsupportedURL)
        }
    }
}
#endif
