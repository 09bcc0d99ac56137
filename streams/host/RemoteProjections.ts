/**
 * Positions projected by another node (or by this node's projector before the partition here has
 * caught up): the waits for them are settled by what is pushed, never by reading in a loop.
 *
 * Every commit of projection checkpoints announces the partitions' next offsets on the schema's
 * channel (`projectionChannel`, `pg_notify` in the committing transaction), and this node's own
 * projector tells `notice` after each commit. A wait reads the partition's checkpoint once, after
 * it registered and after the node listens, so a commit is either in that read or heard later.
 *
 * The LISTEN connection (Kafka mode only: with the embedded log one node owns and projects every
 * partition, and its projector tells it) is opened on the first wait. postgres.js listens again on
 * a new connection after it lost one (a Postgres restart, a terminated backend); what was
 * announced meanwhile is not heard, so each time it listens again the checkpoints of the
 * partitions waited for are read once more.
 */
import { Effect, Runtime, type Scope } from "effect"
import { databaseUnreachable, dependencyRetry } from "../Backoff.ts"
import type { DbService } from "../Db.ts"
import { parseProjected, projectionChannel, readCheckpoints } from "../Projector.ts"
import { OffsetWaiters } from "./Waiters.ts"

export interface RemoteProjections {
  /** The next offset of `partition` projected, as last heard (0: nothing heard). */
  readonly applied: (partition: number) => number
  /** Resolves true once `partition` is projected past `offset`, false if `timeoutMs` passes first. */
  readonly wait: (partition: number, offset: number, timeoutMs: number) => Promise<boolean>
  /** The projection of `partition` reached `next` (this node's projector, or an announcement). */
  readonly notice: (partition: number, next: number) => void
}

export const make = (db: DbService, options: { readonly listen: boolean }): Effect.Effect<RemoteProjections, never, Scope.Scope> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runPromise(runtime)
    const partitions = new Map<number, OffsetWaiters>()
    const waitersOf = (partition: number) => {
      let waiters = partitions.get(partition)
      if (waiters === undefined) partitions.set(partition, (waiters = new OffsetWaiters()))
      return waiters
    }

    const notice = (partition: number, next: number) => {
      const waiters = waitersOf(partition)
      if (next > waiters.next) waiters.advance(next)
    }

    const awaited = (wanted: ReadonlyArray<number>) => wanted.some((p) => (partitions.get(p)?.size ?? 0) > 0)
    /**
     * One read of the checkpoints: what was committed before this node listened. A read already
     * under way began while the node listened, so it serves a later wait too; not so after the
     * connection was lost (`again`). A read that cannot reach Postgres (the restart that cost the
     * LISTEN often takes the read's connection too) tries again while someone waits: what it would
     * have found may never be announced.
     */
    const reading = new Set<number>()
    const read = (wanted: ReadonlyArray<number>, again = false) => {
      const fresh = again ? wanted : wanted.filter((p) => !reading.has(p))
      if (fresh.length === 0) return
      for (const p of fresh) reading.add(p)
      run(readCheckpoints(db, fresh).pipe(Effect.retry({ schedule: dependencyRetry, while: (error) => databaseUnreachable(error) && awaited(fresh) })))
        .then((next) => next.forEach((offset, partition) => notice(partition, offset)), () => undefined)
        .finally(() => fresh.forEach((p) => reading.delete(p)))
    }

    let listening: Promise<void> | undefined
    let unlisten: (() => Promise<void>) | undefined
    let listened = 0
    const listen = (): Promise<void> => {
      if (!options.listen) return Promise.resolve()
      listening ??= db.sql
        .listen(
          projectionChannel(db.schema),
          (payload) => parseProjected(payload).forEach((next, partition) => notice(partition, next)),
          () => {
            // listening again after a lost connection: what was announced meanwhile is read instead
            if (listened++ > 0) read([...partitions].filter(([, w]) => w.size > 0).map(([p]) => p), true)
          }
        )
        .then(
          (listener) => void (unlisten = listener.unlisten),
          (error) => {
            listening = undefined
            return run(Effect.logWarning("projection waits: cannot listen for checkpoints; the next wait tries again", error))
          }
        )
      return listening
    }
    // bounded: with Postgres gone the UNLISTEN would wait for it; the pool's end closes the connection anyway
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => unlisten?.().catch(() => undefined) ?? Promise.resolve()).pipe(Effect.timeout("1 second"), Effect.ignore)
    )

    const wait: RemoteProjections["wait"] = (partition, offset, timeoutMs) => {
      const waiters = waitersOf(partition)
      if (offset < waiters.next) return Promise.resolve(true)
      const passed = waiters.wait(offset, timeoutMs)
      void listen().then(() => read([partition]))
      return passed
    }

    return { applied: (partition) => partitions.get(partition)?.next ?? 0, wait, notice } satisfies RemoteProjections
  })
