import Foundation

/// Where a pull is in the server's pages, as a value: each page that arrives returns what the
/// pull does next (read the page again from the token, apply it and fetch the next, apply it
/// and stop, or stop). The requests and the store are outside it, so the paging rules are
/// tested without a server.
///
/// A pull by query id (incremental) asks for the rows at or after its token, ordered by
/// `updatedAt`, `pageSize` at a time; a page that holds a newer `updatedAt` moves the token and
/// the next request starts from it with `$skip=0`, a page that does not pages on by `$skip`.
/// Any other pull pages by `$skip` (or the server's `Link`, when the query sets no top) until the
/// server has no more items or the query's top is reached.
struct PullCursor: Sendable {
    /// What to do with a page that arrived.
    enum Step: Equatable, Sendable {
        /// The page is empty: the pull is done.
        case finish
        /// Set the page aside (nothing of it is applied or counted) and read again from the
        /// token with `$skip=0` (``request``).
        case readAgain
        /// Apply the page (saving `token` with it, when the token moved), then fetch `next`.
        case apply(token: Int64?, next: Next)
    }

    /// The request after a page.
    enum Next: Equatable, Sendable {
        /// None: the page is the last.
        case none
        /// The request the cursor describes (``request``).
        case request
        /// The server's `Link` to the next page.
        case link
    }

    /// What the next request asks for: rows at or after `since` (an incremental pull), `top`
    /// of them after skipping `skip`.
    struct Request: Equatable, Sendable {
        var since: Int64?
        var top: Int
        var skip: Int
    }

    /// Whether the pull is incremental (by query id).
    let incremental: Bool
    /// The query's own top, if any (never with a query id).
    let top: Int?
    /// The most items asked for per request.
    let pageSize: Int
    /// The latest `updatedAt` saved or to be saved (milliseconds since 1970).
    private(set) var token: Int64
    private(set) var skip: Int
    /// The items of the pages applied so far.
    private(set) var received = 0
    /// The most items a page of this pull held: the server's page holds at least as many.
    private(set) var largestPage = 0

    /// A cursor at the start of a pull.
    /// - Parameters:
    ///   - token: the stored token of an incremental pull, or `nil` for any other pull.
    ///   - top: the query's `$top`; `skip`: its `$skip`.
    init(token: Int64?, top: Int?, skip: Int?, pageSize: Int) {
        incremental = token != nil
        self.token = token ?? 0
        self.top = top
        self.skip = skip ?? 0
        self.pageSize = pageSize
    }

    /// Whether the pull asks for anything at all: a top of zero does not.
    var wantsAnything: Bool {
        incremental || (top ?? 1) > 0
    }

    /// The next request's bounds.
    var request: Request {
        if incremental { return Request(since: token, top: pageSize, skip: skip) }
        return Request(since: nil, top: top.map { min($0 - received, pageSize) } ?? pageSize, skip: skip)
    }

    /// A page of `count` items arrived, the latest `updatedAt` over all of them (deleted and
    /// skipped ones too) being `latest`; `hasLink` when the response links a next page.
    ///
    /// The moved-boundary rule: G2 pages on by `$skip` past the rows at the token, taking them to
    /// stay put. If one of them is written again between two requests it leaves its place, and
    /// the skip passes over a row the pull has not read. So a page read past the token's rows
    /// that would move the token is set aside, and the pull reads again from the token with
    /// `$skip=0`: that page holds the token's rows and at least one newer, and moves the token
    /// with nothing skipped. Only when the token's rows fill a page of this server (`skip` at
    /// least the largest page seen) would reading again meet the same page: then the skip is
    /// trusted, as G2 does.
    mutating func pageArrived(count: Int, latest: Int64?, hasLink: Bool) -> Step {
        guard count > 0 else { return .finish }
        let advanced = incremental ? latest.flatMap { $0 > token ? $0 : nil } : nil
        largestPage = max(largestPage, count)
        if advanced != nil, skip > 0, skip < largestPage {
            skip = 0
            return .readAgain
        }
        received += count
        if let advanced {
            // The token moved: re-query from the new bound (a link would page the old one).
            token = advanced
            skip = 0
            return .apply(token: advanced, next: .request)
        }
        if !incremental, let top, received >= top { return .apply(token: nil, next: .none) }
        skip += count
        return .apply(token: nil, next: top == nil && hasLink ? .link : .request)
    }
}
