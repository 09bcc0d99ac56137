/**
 * How the node waits between tries while a dependency (Postgres, the Kafka broker) is down or
 * restarting: growing from 100 ms, never past a second. A restart lasts seconds; a longer wait
 * than that would keep the node failing well after its dependency is back (postgres.js's own
 * reaches 20 s), and a shorter one would hammer a server that is starting.
 */
import { Schedule } from "effect"

const FIRST_MS = 100
const MOST_MS = 1_000

const growing = Schedule.exponential(`${FIRST_MS} millis`).pipe(
  Schedule.union(Schedule.spaced(`${MOST_MS} millis`)),
  Schedule.jittered
)

/**
 * A connection lost under a statement (terminated, reset), as the Postgres driver reports it: the
 * server may well be there, and a reconnect is tried at once (the driver backs off only connects
 * that fail). A server that is really gone fails that connect, and the backoff grows from there.
 */
const driverCode = (error: unknown): unknown => (error as { cause?: { code?: unknown } } | undefined)?.cause?.code

const connectionLost = (error: unknown): boolean => {
  const code = driverCode(error)
  return code === "CONNECTION_CLOSED" || code === "ECONNRESET" || code === "57P01"
}

/** The database did not answer at all: its connection was lost, or a connect was refused or timed out, or it is starting. */
export const databaseUnreachable = (error: unknown): boolean => {
  const code = driverCode(error)
  return connectionLost(error) || code === "ECONNREFUSED" || code === "CONNECT_TIMEOUT" || code === "57P03"
}

/**
 * For the loops that tail the log or the read models (projection, signals, reactions), and a
 * partition catching up. A lost connection starts the backoff again from its first step: these
 * loops fail at each termination of their connections, and a backoff grown over a burst of them
 * kept the node waiting up to a second after the last, with Postgres there all along.
 */
export const dependencyRetry = growing.pipe(
  Schedule.intersect(Schedule.identity<unknown>()),
  Schedule.resetWhen(([, error]) => connectionLost(error))
)

/** postgres.js's `backoff` option: seconds before a pooled connection tries again, by failures in a row (shared by the pool). */
export const reconnectDelaySeconds = (failures: number) => (0.5 + Math.random() / 2) * Math.min((FIRST_MS / 2) * 2 ** failures, MOST_MS) / 1000
