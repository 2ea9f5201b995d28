import PostgresNIO
import Synchronization

/// Every statement of this engine runs on a connection leased here, within a bounded wait.
///
/// The rule (docs/deploy.md, "Storage outages"): a call that gets no connection of the pool
/// within ``PostgresSettings/connectionWait`` throws ``StorageUnavailableError`` and its lease
/// request leaves the pool's queue, so none of its statements runs later. A call that got its
/// connection in time is never cut short by the bound: its statements run and it waits for their
/// answer. A lost connection (the database stopping) makes a read, or a write whose commit was
/// not sent yet, a ``StorageUnavailableError`` too; a write whose commit was sent is a
/// ``StorageOutcomeUnknownError``.
extension PostgresTableStorage {
    /// Runs `body` on a connection of the pool, leased within the wait bound; on the connection
    /// of the open transaction when the task runs in one (``inTransaction(_:)``).
    ///
    /// The lease is held by a task of its own, which hands the connection over and holds it until
    /// `body` is done; a timer ends the wait. Whichever of the two comes first decides, under one
    /// lock: a connection handed over after the wait ended goes back to the pool unused. The
    /// caller never waits for the lease task: when the wait ends, the task is cancelled and left
    /// to end on its own (the pool answers a cancelled lease request on its own time, and it was
    /// seen never to answer one cancelled while it was opening a connection).
    ///
    /// - Parameter body: What to run on the connection.
    /// - Returns: What `body` returns.
    /// - Throws: ``StorageUnavailableError`` when no connection came in time or the database
    ///   cannot be reached or the connection was lost; what `body` throws otherwise.
    func leased<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        if let connection = transactionConnection {
            // Inside an open transaction (``inTransaction(_:)``): its connection.
            do {
                return try await body(connection)
            } catch {
                throw Self.unavailable(error, settings.connectionWait) ?? error
            }
        }
        let handoff = LeaseHandoff()
        let client = self.client
        let wait = settings.connectionWait
        let started = ContinuousClock.now
        let holder = Task {
            do {
                try await client.withConnection { connection in
                    guard handoff.offer(connection) else { return }
                    await handoff.released()
                }
            } catch {
                handoff.fail(error)
            }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: wait)) != nil else { return }
            handoff.expire()
        }
        defer { timer.cancel() }
        let connection: PostgresConnection
        do {
            connection = try await handoff.connection()
        } catch is LeaseExpired {
            holder.cancel()
            throw StorageUnavailableError(.noConnection, timeout: wait)
        } catch {
            // The pool could not lease one (it cannot connect, or its circuit breaker is open):
            // nothing ran.
            holder.cancel()
            throw StorageUnavailableError(.unreachable, timeout: wait)
        }
        ServerMetrics.current?.connectionWaited(started.duration(to: .now))
        defer { handoff.release() }
        do {
            return try await body(connection)
        } catch {
            throw Self.unavailable(error, wait) ?? error
        }
    }

    /// Runs one statement on `connection` and returns its rows, or throws
    /// ``StorageUnavailableError`` at once when the connection is closed.
    ///
    /// The statement is handed to the connection on its event loop, after checking there that
    /// the connection is open. PostgresNIO drops a statement sent to a connection that already
    /// closed (its channel has no handler left to answer it), and the caller would wait for
    /// its answer forever; a connection the pool hands over just as the database ends its
    /// session (a shutdown, a terminated backend) is such a connection. Checked on the event
    /// loop, the statement reaches the connection's handler before any close can remove it,
    /// and a connection lost afterwards fails the statement with the driver's error.
    ///
    /// - Parameters:
    ///   - query: The statement with its values.
    ///   - connection: A connection leased by ``leased(_:)``.
    /// - Returns: The rows, all read.
    /// - Throws: ``StorageUnavailableError`` for a closed connection; the driver's error otherwise.
    func run(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [PostgresRow] {
        let (logger, closed) = (self.logger, StorageUnavailableError(.unreachable, timeout: settings.connectionWait))
        let eventLoop = connection.eventLoop
        return try await eventLoop.flatSubmit {
            guard !connection.isClosed else { return eventLoop.makeFailedFuture(closed) }
            return connection.query(query, logger: logger).map(\.rows)
        }.get()
    }

    /// The ``StorageUnavailableError`` an error of a leased connection stands for (the
    /// connection lost), `nil` for an error of the statement itself.
    static func unavailable(_ error: any Error, _ wait: Duration) -> StorageUnavailableError? {
        switch error {
        case let error as StorageUnavailableError: return error
        case let error as PSQLError where isConnectionLoss(error): return StorageUnavailableError(.unreachable, timeout: wait)
        default: return nil
        }
    }

    /// Whether the driver's error says the connection is gone or was never made (not that a
    /// statement failed): the socket closed or failed, or the server ended the session
    /// (SQLSTATE class 08, or 57P01–57P03: shutting down, crashed, starting up).
    static func isConnectionLoss(_ error: PSQLError) -> Bool {
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .poolClosed: return true
        case .server:
            guard let state = error.serverInfo?[.sqlState] else { return false }
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
        default: return false
        }
    }
}

/// The wait for a connection ended before one came.
struct LeaseExpired: Error {}

/// The meeting point of a lease: the child task holding the lease offers its connection, the
/// timer expires the wait, the pool may fail it; the first of the three decides.
final class LeaseHandoff: Sendable {
    private enum Outcome {
        case pending
        case leased(PostgresConnection)
        case expired
        case failed(any Error)
    }

    private struct State {
        var outcome = Outcome.pending
        var waiter: CheckedContinuation<PostgresConnection, any Error>?
        var releaser: CheckedContinuation<Void, Never>?
        var isReleased = false
    }

    private let state = Mutex(State())

    /// Offers the leased connection; `false` when the wait already ended (the connection is
    /// returned unused).
    func offer(_ connection: PostgresConnection) -> Bool {
        let waiter: CheckedContinuation<PostgresConnection, any Error>?? = state.withLock { state in
            guard case .pending = state.outcome else { return .none }
            state.outcome = .leased(connection)
            defer { state.waiter = nil }
            return .some(state.waiter)
        }
        guard let waiter else { return false }
        waiter?.resume(returning: connection)
        return true
    }

    /// Ends the wait, unless a connection came first.
    func expire() {
        settle(.expired)
    }

    /// Fails the wait with the pool's error, unless a connection came first.
    func fail(_ error: any Error) {
        settle(.failed(error))
    }

    private func settle(_ outcome: Outcome) {
        let waiter = state.withLock { state -> CheckedContinuation<PostgresConnection, any Error>? in
            guard case .pending = state.outcome else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        switch outcome {
        case .failed(let error): waiter?.resume(throwing: error)
        default: waiter?.resume(throwing: LeaseExpired())
        }
    }

    /// The connection, once leased; throws ``LeaseExpired`` or the pool's error.
    func connection() async throws -> PostgresConnection {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLock { state -> Outcome in
                if case .pending = state.outcome { state.waiter = continuation }
                return state.outcome
            }
            switch outcome {
            case .pending: break
            case .leased(let connection): continuation.resume(returning: connection)
            case .expired: continuation.resume(throwing: LeaseExpired())
            case .failed(let error): continuation.resume(throwing: error)
            }
        }
    }

    /// Waits until ``release()`` (the lease is held meanwhile).
    func released() async {
        await withCheckedContinuation { continuation in
            let isReleased = state.withLock { state in
                if !state.isReleased { state.releaser = continuation }
                return state.isReleased
            }
            if isReleased { continuation.resume() }
        }
    }

    /// Lets the lease go.
    func release() {
        let releaser = state.withLock { state in
            state.isReleased = true
            defer { state.releaser = nil }
            return state.releaser
        }
        releaser?.resume()
    }
}
