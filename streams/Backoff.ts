/**
 * How the node waits between tries while a dependency (Postgres, the Kafka broker) is down or
 * restarting: growing from 100 ms, never past a second. A restart lasts seconds; a longer wait
 * than that would keep the node failing well after its dependency is back (postgres.js's own
 * reaches 20 s), and a shorter one would hammer a server that is starting.
 */
import { Schedule } from "effect"

const FIRST_MS = 100
const MOST_MS = 1_000

/** For the loops that tail the log or the read models (projection, signals, reactions), and a partition catching up. */
export const dependencyRetry = Schedule.exponential(`${FIRST_MS} millis`).pipe(
  Schedule.union(Schedule.spaced(`${MOST_MS} millis`)),
  Schedule.jittered
)

/** postgres.js's `backoff` option: seconds before a pooled connection tries again, by failures in a row (shared by the pool). */
export const reconnectDelaySeconds = (failures: number) => (0.5 + Math.random() / 2) * Math.min((FIRST_MS / 2) * 2 ** failures, MOST_MS) / 1000
