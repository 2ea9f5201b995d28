/// The result of a read, observed: the current value at once, then a new value after every
/// committed transaction that changed one of the observed topics (see ``StoreChanges``).
///
/// Each value is read after the commit that woke it, in a read transaction of its own, so it is
/// a state the store really had (never half of a transaction). Changes that land while the
/// consumer is busy coalesce: the next value is read once, after the last of them. A value equal
/// to the one before is skipped when the observation removes duplicates.
///
/// Iterating registers an observer; ending the iteration (cancelling the consuming task, a
/// `break`, or a read that throws) removes it and frees what it held. With no change feed the
/// observation yields the current value once and ends.
public struct StoreObservation<Element: Sendable>: AsyncSequence, Sendable {
    /// A read that throws ends the observation with its error.
    public typealias Failure = any Error

    private let changes: StoreChanges?
    private let topics: Set<StoreChangeTopic>
    private let readValue: @Sendable () async throws -> Element
    private let isSame: (@Sendable (Element, Element) -> Bool)?

    /// An observation of `read`, woken by `topics` on `changes`.
    /// - Parameters:
    ///   - changes: the store's change feed; `nil` yields the current value once.
    ///   - topics: the topics whose changes wake it.
    ///   - isSame: when given, a value that is the same as the previous one is not yielded.
    ///   - read: reads the value (in a read transaction of the store).
    public init(
        changes: StoreChanges?, topics: Set<StoreChangeTopic>,
        isSame: (@Sendable (Element, Element) -> Bool)? = nil,
        read: @escaping @Sendable () async throws -> Element
    ) {
        self.changes = changes
        self.topics = topics
        self.isSame = isSame
        self.readValue = read
    }

    /// Starts iterating: the observer is registered when the first value is asked for.
    /// - Returns: the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(observation: self)
    }

    /// The observation's iterator; it holds the observer's registration while it runs.
    public struct Iterator: AsyncIteratorProtocol {
        private let observation: StoreObservation
        private var signals: AsyncStream<Void>.Iterator?
        private var registration: StoreChangeRegistration?
        private var last: Element?
        private var started = false
        private var finished = false

        fileprivate init(observation: StoreObservation) {
            self.observation = observation
        }

        /// The current value on the first call; afterwards the value after the next change.
        /// - Returns: the value, or `nil` once the observation has ended.
        /// - Throws: the read's error (the observation ends with it).
        public mutating func next() async throws -> Element? {
            if finished { return nil }
            if !started {
                started = true
                if let changes = observation.changes {
                    // Registered before the first read, so a commit during that read is not missed.
                    let (stream, registration) = changes.register(observation.topics)
                    self.signals = stream.makeAsyncIterator()
                    self.registration = registration
                } else {
                    finished = true
                }
                let value = try await read()
                last = value
                return value
            }
            while true {
                guard var iterator = signals else { return end() }
                let signal: Void? = await iterator.next()
                signals = iterator
                guard signal != nil else { return end() }
                let value = try await read()
                if let isSame = observation.isSame, let last, isSame(last, value) { continue }
                last = value
                return value
            }
        }

        private mutating func read() async throws -> Element {
            do {
                return try await observation.readValue()
            } catch {
                _ = end()
                throw error
            }
        }

        private mutating func end() -> Element? {
            finished = true
            registration?.cancel()
            registration = nil
            signals = nil
            return nil
        }
    }
}

extension StoreObservation where Element: Equatable {
    /// An observation that skips a value equal to the previous one; see
    /// ``init(changes:topics:isSame:read:)``.
    /// - Parameters:
    ///   - changes: the store's change feed; `nil` yields the current value once.
    ///   - topics: the topics whose changes wake it.
    ///   - read: reads the value (in a read transaction of the store).
    public init(
        changes: StoreChanges?, topics: Set<StoreChangeTopic>,
        removingDuplicates read: @escaping @Sendable () async throws -> Element
    ) {
        self.init(changes: changes, topics: topics, isSame: { $0 == $1 }, read: read)
    }
}
