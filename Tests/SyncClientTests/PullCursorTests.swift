import Testing

@testable import SyncClient

/// The pull's page cursor without a server: the paging rules the pull tests pin through a
/// scripted transport (IncrementalPullTests, PullTests), one page at a time.
@Suite struct PullCursorTests {
    /// A page of `count` items whose latest `updatedAt` is `latest`; returns the step and the
    /// request that would follow it.
    static func arrive(
        _ cursor: inout PullCursor, _ count: Int, latest: Int64? = nil, link: Bool = false
    ) -> (PullCursor.Step, PullCursor.Request) {
        let step = cursor.pageArrived(count: count, latest: latest, hasLink: link)
        return (step, cursor.request)
    }

    @Test func anIncrementalPullStartsAtItsStoredTokenWithoutSkip() {
        let cursor = PullCursor(token: 944_235_869_000, top: nil, skip: nil, pageSize: 50)
        #expect(cursor.wantsAnything)
        #expect(cursor.request == PullCursor.Request(since: 944_235_869_000, top: 50, skip: 0))
    }

    @Test func eachPageThatRaisesTheTokenRequeriesFromItWithSkipZero() {
        var cursor = PullCursor(token: 0, top: nil, skip: nil, pageSize: 50)
        var (step, request) = Self.arrive(&cursor, 2, latest: 300)
        #expect(step == .apply(token: 300, next: .request))
        #expect(request == PullCursor.Request(since: 300, top: 50, skip: 0))
        // a server link pages the old bound: the moved token wins over it
        (step, request) = Self.arrive(&cursor, 1, latest: 400, link: true)
        #expect(step == .apply(token: 400, next: .request))
        #expect(request.since == 400 && request.skip == 0)
        let page1 = Self.arrive(&cursor, 0)
        #expect(page1.0 == .finish)
        #expect(cursor.token == 400 && cursor.received == 3)
    }

    @Test func pagesAtTheTokensTimestampAdvanceBySkip() {
        var cursor = PullCursor(token: 0, top: nil, skip: nil, pageSize: 50)
        let page1 = Self.arrive(&cursor, 2, latest: 5)
        #expect(page1.0 == .apply(token: 5, next: .request))
        let second = Self.arrive(&cursor, 2, latest: 5)
        #expect(second.0 == .apply(token: nil, next: .request) && second.1 == PullCursor.Request(since: 5, top: 50, skip: 2))
        let third = Self.arrive(&cursor, 1, latest: 5)
        #expect(third.0 == .apply(token: nil, next: .request) && third.1.skip == 3)
        let page2 = Self.arrive(&cursor, 0)
        #expect(page2.0 == .finish)
    }

    @Test func aPageWithoutANewerStampLeavesTheToken() {
        var cursor = PullCursor(token: 500, top: nil, skip: nil, pageSize: 10)
        let page1 = Self.arrive(&cursor, 1, latest: 400)
        #expect(page1.0 == .apply(token: nil, next: .request), "an older stamp")
        let page2 = Self.arrive(&cursor, 1, latest: nil)
        #expect(page2.0 == .apply(token: nil, next: .request), "no readable stamp")
        #expect(cursor.token == 500 && cursor.request.skip == 2)
    }

    /// The moved-boundary rule (IncrementalPullTests.aRowAtTheTokenWrittenAgainSendsThePullBackToTheToken).
    @Test func aPageReadPastTheTokensRowsThatMovesTheTokenIsReadAgainFromTheToken() {
        let (t1, t2, t3, t4): (Int64, Int64, Int64, Int64) = (1000, 2000, 3000, 4000)
        var cursor = PullCursor(token: 0, top: nil, skip: nil, pageSize: 50)
        var skips = [cursor.request.skip]
        var steps: [PullCursor.Step] = []
        for (count, latest) in [(2, max(t1, t2)), (1, t2), (1, t4), (2, max(t3, t4)), (1, t4), (0, Int64(0))] {
            let (step, request) = Self.arrive(&cursor, count, latest: latest)
            steps.append(step)
            if step != .finish { skips.append(request.skip) }
        }
        #expect(
            steps == [
                .apply(token: t2, next: .request), .apply(token: nil, next: .request), .readAgain,
                .apply(token: t4, next: .request), .apply(token: nil, next: .request), .finish,
            ])
        #expect(skips == [0, 0, 1, 0, 0, 1])
        #expect(cursor.received == 6, "the page set aside is not counted")
        #expect(cursor.token == t4)
    }

    /// IncrementalPullTests.whenTheTokensRowsFillAPageTheSkipIsTrusted.
    @Test func whenTheTokensRowsFillAPageTheSkipIsTrusted() {
        let (same, t3): (Int64, Int64) = (2000, 3000)
        var cursor = PullCursor(token: 0, top: nil, skip: nil, pageSize: 50)
        let page1 = Self.arrive(&cursor, 2, latest: same)
        #expect(page1.0 == .apply(token: same, next: .request))
        let page2 = Self.arrive(&cursor, 2, latest: same)
        #expect(page2.1.skip == 2)
        let (step, request) = Self.arrive(&cursor, 1, latest: t3)
        #expect(step == .apply(token: t3, next: .request), "skip 2 is not below the largest page (2): trusted")
        #expect(request == PullCursor.Request(since: t3, top: 50, skip: 0))
        let page3 = Self.arrive(&cursor, 1, latest: t3)
        #expect(page3.1.skip == 1)
    }

    @Test func aFirstPageNeverReadsAgainWithoutASkip() {
        var cursor = PullCursor(token: 10, top: nil, skip: nil, pageSize: 2)
        let page1 = Self.arrive(&cursor, 2, latest: 20)
        #expect(page1.0 == .apply(token: 20, next: .request))
    }

    /// PullTests: `$skip` advances by what the server returned, from the query's own skip.
    @Test func aPlainPullPagesBySkipFromTheQuerysSkip() {
        var cursor = PullCursor(token: nil, top: nil, skip: 5, pageSize: 50)
        #expect(cursor.request == PullCursor.Request(since: nil, top: 50, skip: 5))
        let page1 = Self.arrive(&cursor, 25, latest: 99)
        #expect(page1.1 == PullCursor.Request(since: nil, top: 50, skip: 30), "stamps do not matter")
        let page2 = Self.arrive(&cursor, 10)
        #expect(page2.1.skip == 40)
        let page3 = Self.arrive(&cursor, 0)
        #expect(page3.0 == .finish)
        #expect(cursor.token == 0)
    }

    @Test func theQuerysTopBoundsEachRequestAndEndsThePull() {
        var cursor = PullCursor(token: nil, top: 120, skip: nil, pageSize: 50)
        #expect(cursor.request.top == 50)
        let page1 = Self.arrive(&cursor, 50)
        #expect(page1.1 == PullCursor.Request(since: nil, top: 50, skip: 50))
        let page2 = Self.arrive(&cursor, 50)
        #expect(page2.1 == PullCursor.Request(since: nil, top: 20, skip: 100))
        let page3 = Self.arrive(&cursor, 20)
        #expect(page3.0 == .apply(token: nil, next: .none), "the last page: nothing more is asked for")
        #expect(cursor.received == 120)
    }

    @Test func aTopOfZeroAsksForNothing() {
        #expect(!PullCursor(token: nil, top: 0, skip: nil, pageSize: 50).wantsAnything)
        #expect(PullCursor(token: nil, top: 1, skip: nil, pageSize: 50).wantsAnything)
    }

    @Test func theServersLinkIsFollowedOnlyWithoutATop() {
        var open = PullCursor(token: nil, top: nil, skip: nil, pageSize: 50)
        let page1 = Self.arrive(&open, 2, link: true)
        #expect(page1.0 == .apply(token: nil, next: .link))
        #expect(page1.1 == PullCursor.Request(since: nil, top: 50, skip: 2))
        var bounded = PullCursor(token: nil, top: 10, skip: nil, pageSize: 50)
        let page2 = Self.arrive(&bounded, 2, link: true)
        #expect(page2.0 == .apply(token: nil, next: .request))
        var incremental = PullCursor(token: 7, top: nil, skip: nil, pageSize: 50)
        let page3 = Self.arrive(&incremental, 2, latest: 7, link: true)
        #expect(page3.0 == .apply(token: nil, next: .link))
    }
}
