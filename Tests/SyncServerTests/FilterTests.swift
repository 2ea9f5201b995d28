import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// The filter grammar through HTTP against a fixture of our own, with each expected set computed
/// by a Swift predicate over the same data (cases 64–66).
@Suite struct FilterTests {
    struct Film: Sendable {
        let id: String, title: String, year: Int, rating: Double, winner: Bool, released: String
    }

    static let films: [Film] = {
        let titles = [
            "The Long Road", "Harbor Lights", "the quiet hour", "Signal Fire", "Paper Tiger", "The Keeper", "Winter Border",
            "Night Driver", "Salt and Stone", "the last letter", "Open Water", "Copper Sky",
        ]
        return (0..<36).map { i in
            let year = 1990 + (i * 7) % 25
            let month = 1 + (i * 5) % 12, day = 1 + (i * 11) % 28
            return Film(
                id: String(format: "film-%03d", i), title: titles[i % titles.count] + (i >= 12 ? " \(i / 12 + 1)" : ""),
                year: year, rating: Double((i * 37) % 100) / 10, winner: i % 4 == 0,
                released: String(format: "%04d-%02d-%02dT%02d:00:00.000Z", year, month, day, i % 24))
        }
    }()

    static func seed(_ server: TestServer) async throws {
        for f in films {
            let reply = try await server.send(
                .post, "/tables/films",
                object: [
                    "id": .string(f.id), "title": .string(f.title), "year": .int(Int64(f.year)), "rating": .double(f.rating),
                    "winner": .bool(f.winner), "released": .string(f.released),
                ])
            #expect(reply.status == .created)
        }
    }

    static let cases: [(String, @Sendable (Film) -> Bool)] = [
        ("startswith(tolower(title), 'the')", { $0.title.lowercased().hasPrefix("the") }),
        ("endswith(title, 'er')", { $0.title.lowercased().hasSuffix("er") }),
        ("substringof('ight', title)", { $0.title.lowercased().contains("ight") }),
        ("year(released) eq 1994", { $0.released.hasPrefix("1994") }),
        ("winner ne false", { $0.winner }),
        ("not winner and rating ge 5.5", { !$0.winner && $0.rating >= 5.5 }),
        ("released ge datetimeoffset'1999-12-31T00:00:00.000Z'", { $0.released >= "1999-12-31T00:00:00.000Z" }),
        ("released eq datetime'2007-07-11T06:00:00Z'", { $0.released == "2007-07-11T06:00:00.000Z" }),
        (
            "month(released) eq 6 or day(released) lt 5",
            { Int($0.released.dropFirst(5).prefix(2))! == 6 || Int($0.released.dropFirst(8).prefix(2))! < 5 }
        ),
        ("hour(released) eq 7", { Int($0.released.dropFirst(11).prefix(2))! == 7 }),
        ("floor(rating) eq 3", { $0.rating.rounded(.down) == 3 }),
        ("ceiling(rating) eq 3", { $0.rating.rounded(.up) == 3 }),
        ("round(rating) eq 7", { $0.rating.rounded(.toNearestOrAwayFromZero) == 7 }),
        ("year mod 5 eq 0", { $0.year % 5 == 0 }),
        ("(year sub 1990) mul 2 gt 30", { ($0.year - 1990) * 2 > 30 }),
        ("length(title) gt 12", { $0.title.count > 12 }),
        (
            "indexof(title, 'Tiger') eq 6",
            { film in film.title.range(of: "Tiger").map { film.title.distance(from: film.title.startIndex, to: $0.lowerBound) } == 6 }
        ),
        ("substring(title, 0, 3) eq 'The'", { $0.title.hasPrefix("The") }),
        ("concat(concat(title, ' '), 'x') eq 'Open Water x'", { $0.title == "Open Water" }),
        ("toupper(trim(title)) eq 'COPPER SKY 2'", { $0.title == "Copper Sky 2" }),
        ("replace(title, ' ', '') eq 'PaperTiger3'", { $0.title == "Paper Tiger 3" }),
        ("(year ge 2000 and year le 2005) or title eq 'Signal Fire'", { ($0.year >= 2000 && $0.year <= 2005) || $0.title == "Signal Fire" }),
    ]

    @Test(arguments: StorageFactory.all)
    func everyFilterMatchesItsPredicate(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(maxTop: 0), storage: storage) { server in
            try await Self.seed(server)
            for (filter, predicate) in Self.cases {
                let encoded = ODataQuery.encode(filter)
                let reply = try await server.send(.get, "/tables/films?$filter=\(encoded)&$top=1000&$orderby=id")
                #expect(reply.status == .ok, "\(filter): \(reply.errorMessage ?? "")")
                let expected = Self.films.filter(predicate).map(\.id)
                let ids = reply.array.compactMap { $0["id"]?.stringValue }
                #expect(ids.count <= 50)
                let allIDs = try await allPages(server, filter: encoded)
                #expect(allIDs == expected, "\(filter)")
                #expect(!expected.isEmpty, "the fixture must exercise \(filter)")
            }
        }
    }

    /// Every id a filter matches, following server paging.
    func allPages(_ server: TestServer, filter: String) async throws -> [String] {
        var ids: [String] = []
        while true {
            let page = try await server.send(.get, "/tables/films?$filter=\(filter)&$orderby=id&$skip=\(ids.count)&$top=50").array
            ids += page.compactMap { $0["id"]?.stringValue }
            if page.isEmpty { return ids }
        }
    }

    @Test(arguments: StorageFactory.all)
    func case64InlineCountCountsTheWholeFilteredSet(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            try await Self.seed(server)
            let filter = ODataQuery.encode("released ge datetimeoffset'1999-12-31T00:00:00.000Z'")
            let reply = try await server.send(.get, "/tables/films?$inlinecount=allpages&$top=5&$filter=\(filter)").object
            #expect(reply["results"]?.arrayValue?.count == 5)
            #expect(reply["count"] == .int(Int64(Self.films.filter { $0.released >= "1999-12-31T00:00:00.000Z" }.count)))
        }
    }
}
