/**
 * One key as of a moment, read from the log itself: its own events up to a time or a log position
 * (`Until`, as a point-in-time replay takes it), applied by the projection's rule (`follows`)
 * through the kind's evolver; and, for a read that answers from read models, projected by the
 * kind into scratch copies of the tables it reads. Only the key's partition is read, from its
 * start: an auditor's read, paid by the length of one partition.
 */
import { Effect, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { type ActorKind, type AnyActorKind, decodeEvent, keyOf, type RowOp } from "../actors/kernel.ts"
import { type DbError, type DbService, query } from "./Db.ts"
import { EventLog, readUpTo } from "./EventLog.ts"
import { follows, rememberCommand, type StoredActor, writeRowOps } from "./Projector.ts"
import { partitionFor } from "./partitioner.ts"
import { cutAtTime, endAt, type Until } from "./Replay.ts"

/** What folding a key needs of its kind. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type FoldableKind<S> = Pick<ActorKind<S, any, any, any>, "kind" | "initialState" | "evolve" | "events" | "project">

export type StateAsOf<S> =
  /** The moment lies past now, or past the end of the key's partition. */
  | { readonly _tag: "Future"; readonly partition: number; readonly end: number }
  /** No state the key ever had, up to the log's end, is the reader's (`belongs`): unknown to them. */
  | { readonly _tag: "Unknown" }
  /** The key is the reader's, but none of its events lies at or before the moment. */
  | { readonly _tag: "Before"; readonly partition: number }
  /** The state after the key's last event at or before the moment, and the rows its events up to then project. */
  | { readonly _tag: "Folded"; readonly state: S; readonly rows: ReadonlyArray<RowOp> }

/**
 * The state of `id` as of `until` (`now`: the reader's time, past which a time is in the future).
 * The key's events are folded up to the log's end as it stands, so that `belongs` can tell an
 * entity that was never the reader's (as the live read tells it) from one that did not exist yet.
 */
export const stateAsOf = <S>(kind: FoldableKind<S>, id: string, until: Until, now: number, belongs: (state: S) => boolean) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const key = keyOf(kind, id)
    const partition = partitionFor(key, log.partitions)
    const end = (yield* log.endOffsets([partition])).get(partition) ?? 0
    const future = until._tag === "time" ? until.at > now : (until.through.get(partition) ?? -1) >= end
    if (future) return { _tag: "Future", partition, end } satisfies StateAsOf<S>
    const through = endAt(until, partition, end)
    const cut = until._tag === "time" ? cutAtTime(until.at) : undefined
    let last: StoredActor | undefined
    let state = kind.initialState
    let then: S | undefined
    let theirs = false
    const rows: Array<RowOp> = []
    yield* readUpTo(log, new Map([[partition, 0]]), new Map([[partition, end]])).pipe(
      Stream.runForEach((read) =>
        Effect.sync(() => {
          // the events of this read that lie at or before the moment: a prefix of them
          const upTo = cut === undefined ? read.events.filter((e) => e.offset < through).length : cut(read).events.length
          read.events.forEach((record, i) => {
            if (record.key !== key || !follows(last, record)) return
            const event = decodeEvent(kind as AnyActorKind, record.type, record.payload)
            state = kind.evolve(state, event)
            last = { seq: record.seq, state, recentCommands: rememberCommand(last?.recentCommands ?? [], record.commandId) }
            theirs ||= belongs(state)
            if (i >= upTo) return
            then = state
            rows.push(...kind.project(state, event, { key, seq: record.seq, at: record.at, actor: record.actor, commandId: record.commandId }))
          })
        })
      )
    )
    if (!theirs) return { _tag: "Unknown" } satisfies StateAsOf<S>
    return then === undefined ? ({ _tag: "Before", partition } satisfies StateAsOf<S>) : ({ _tag: "Folded", state: then, rows } satisfies StateAsOf<S>)
  }).pipe(Effect.withSpan("AsOf.stateAsOf", { attributes: { kind: kind.kind } }))

/**
 * `read` run against `rows` (a key's projection as of a moment) written into empty copies of
 * `tables` of `db`'s schema, in a scratch schema of one transaction that leaves nothing behind.
 * Rows of other tables are left out: the read sees only what the key projected.
 */
export const readRowsAsOf = <A, E>(
  db: DbService,
  tables: ReadonlyArray<string>,
  rows: ReadonlyArray<RowOp>,
  read: (scratch: DbService) => Effect.Effect<A, E>
): Effect.Effect<A, E | DbError> =>
  Effect.flatten(
    query("read as of", () =>
      db.sql.begin(async (tx) => {
        const schema = `as_of_${randomUUID().replaceAll("-", "")}`
        const scratch: DbService = { ...db, sql: tx as never, schema, table: (name) => tx(`${schema}.${name}`) }
        await tx`create schema ${tx(schema)}`
        for (const table of tables) await tx`create table ${scratch.table(table)} (like ${db.table(table)} including all)`
        await writeRowOps(tx, scratch, rows.filter((op) => tables.includes(op.table)))
        const answer = await Effect.runPromise(Effect.either(read(scratch)))
        await tx`drop schema ${tx(schema)} cascade`
        return answer
      })
    )
  )
