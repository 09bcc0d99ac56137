/**
 * The partition worker: one per owned partition drains the commands queued for it, decides each in
 * arrival order against in-memory state (a later command sees the earlier ones' events), appends
 * the whole batch's events in one append through the partition's fenced writer, and answers each
 * command once that append is durable.
 */
import { Effect, Either, Runtime } from "effect"
import { type AnyActorKind, type CommandMeta, encodeEvent, type KindRegistry } from "../../actors/kernel.ts"
import { type DbService, query } from "../Db.ts"
import type { EventLog, EventRecord } from "../EventLog.ts"
import type { NodeMetricsService } from "../Metrics.ts"
import { decodeState, rememberCommand, type StoredActor } from "../Projector.ts"
import { addPosition } from "../ReadFence.ts"
import { boundedAppend } from "./Appender.ts"
import type { Gate, Release } from "../Admission.ts"
import { failure, type Job, notOwner, type Outcome, overloaded } from "./Outcome.ts"
import { type CachedActor, type Ownership, type Partitions, stalledOutcome } from "./Ownership.ts"

/** Commands one batch decides and appends together. */
const MAX_COMMANDS_PER_BATCH = 512

export interface WorkerEnv {
  readonly db: DbService
  readonly kinds: KindRegistry
  readonly metrics: NodeMetricsService
  readonly runtime: Runtime.Runtime<EventLog>
  readonly partitions: Pick<Partitions, "owned" | "isOwned" | "resync" | "evict" | "appended" | "handingOver">
  readonly counted: (ownership: Ownership, events: number) => void
  /** The highest offset this node acknowledged, per partition. */
  readonly acked: Map<number, number>
  readonly commandTimeoutMs: number
  /** The commands this node's workers hold at once, queued or being decided, over every partition; undefined: unbounded. */
  readonly queued: Gate | undefined
}

/**
 * Loads the states of the keys the batch needs that are not cached (all projected: see `evict`).
 * States loaded while the partition resynced (its `ready` is no longer `catchUp`) are not kept:
 * the read models may not yet hold what it catches up with.
 */
const loadMissing = async (env: WorkerEnv, ownership: Ownership, jobs: ReadonlyArray<Job>, catchUp: Ownership["ready"]) => {
  const kindOf = new Map<string, AnyActorKind>()
  for (const job of jobs) if (!ownership.cache.has(job.key)) kindOf.set(job.key, job.kind)
  if (kindOf.size === 0) return
  // the driver's failure, not a fiber's pretty-printed cause: it becomes the caller's answer
  const stored = await Runtime.runPromise(env.runtime)(Effect.either(loadActors(env.db, [...kindOf.keys()]))).then((loaded) =>
    Either.isRight(loaded) ? loaded.right : Promise.reject(new Error(loaded.left.message))
  )
  if (ownership.ready !== catchUp) return
  for (const [key, kind] of kindOf) {
    const found = stored.get(key)
    ownership.cache.set(key, found === undefined
      ? { seq: 0, state: kind.initialState, recentCommands: [], position: undefined }
      : { ...found, state: decodeState(kind, found.state), position: undefined })
  }
}

export const makePartitionWorker = (env: WorkerEnv) => {
  const { partitions, metrics } = env
  const run = Runtime.runPromise(env.runtime)

  const enqueue = (ownership: Ownership, job: Job) => {
    if (ownership.stalled !== undefined) return job.settle(stalledOutcome(ownership))
    ownership.queue.push(job)
    if (!ownership.working) void work(ownership)
  }

  const work = async (ownership: Ownership) => {
    ownership.working = true
    try {
      while (ownership.queue.length > 0) {
        const ready = await ownership.ready
        if (!ready || !partitions.isOwned(ownership)) {
          for (const job of ownership.queue.splice(0)) job.settle(notOwner())
          break
        }
        await decideBatch(ownership, ownership.queue.splice(0, MAX_COMMANDS_PER_BATCH))
      }
    } finally {
      ownership.working = false
    }
  }

  const decideBatch = async (ownership: Ownership, jobs: ReadonlyArray<Job>) => {
    metrics.batchCommands.observe(jobs.length)
    const catchUp = ownership.ready
    try {
      await loadMissing(env, ownership, jobs, catchUp)
    } catch (error) {
      for (const job of jobs) job.settle(failure(`loading actor state failed: ${(error as Error).message}`))
      return
    }
    if (!partitions.isOwned(ownership)) {
      for (const job of jobs) job.settle(notOwner())
      return
    }
    // resynced since the batch was taken (an append of the partition failed, a raw one included):
    // its cache was cleared and its writer may be reopening; the batch waits for the catch-up, first in line
    const writer = ownership.writer
    if (ownership.ready !== catchUp || !ownership.caughtUp || writer === undefined) {
      ownership.queue.unshift(...jobs)
      return
    }
    // decided in order against the states as the batch's earlier commands leave them
    const working = new Map<string, CachedActor>()
    const records: Array<EventRecord> = []
    const decided: Array<{ readonly job: Job; readonly outcome: Outcome; readonly lastRecord: number | undefined }> = []
    for (const job of jobs) {
      const actor = working.get(job.key) ?? ownership.cache.get(job.key)!
      const { outcome, next, events } = decideOne(job, actor, ownership.partition)
      if (next === undefined) {
        decided.push({ job, outcome, lastRecord: undefined })
        continue
      }
      events.forEach((e, i) =>
        records.push({
          key: job.key,
          seq: actor.seq + i + 1,
          firstSeq: actor.seq + 1,
          type: e.type,
          payload: e.payload,
          at: job.meta.at,
          commandId: job.meta.commandId,
          actor: job.meta.actor
        })
      )
      working.set(job.key, next)
      decided.push({ job, outcome, lastRecord: records.length - 1 })
    }
    if (records.length === 0) {
      for (const { job, outcome } of decided) job.settle(outcome)
      return
    }
    const appendStarted = performance.now()
    const appended = await run(Effect.either(boundedAppend(writer.writer, records, env.commandTimeoutMs)))
    // observed together, so that a scrape never sees one without the other
    metrics.appendSeconds.observe((performance.now() - appendStarted) / 1000)
    metrics.appendEvents.observe(records.length)
    if (Either.isLeft(appended)) {
      // the batch is not acknowledged; what it may have written (an unknown outcome) is read back
      // from the log before the next decision
      const error = appended.left
      const outcome: Outcome = error._tag === "LogFenced"
        ? { ok: false, unavailable: "ownership_lost", message: `partition ${ownership.partition}: ${error.message}; retry` }
        : failure(error.message)
      for (const { job } of decided) job.settle(outcome)
      if (partitions.isOwned(ownership)) partitions.resync(ownership, error._tag !== "LogFenced")
      return
    }
    const offsets = appended.right
    const last = offsets[offsets.length - 1]
    addPosition(env.acked, { partition: ownership.partition, offset: last })
    env.counted(ownership, records.length)
    for (let i = 0; i < records.length; i++) {
      const key = records[i].key
      const actor = working.get(key)!
      if (actor.seq === records[i].seq) working.set(key, { ...actor, position: offsets[i] })
    }
    for (const [key, actor] of working) remember(ownership, key, actor)
    // in the same tick as the cache takes the batch's states, before any command is answered
    partitions.appended(ownership, offsets)
    for (const { job, outcome, lastRecord } of decided) {
      if (!outcome.ok) {
        job.settle(outcome)
        continue
      }
      const offset = lastRecord !== undefined ? offsets[lastRecord] : ownership.cache.get(job.key)?.position
      job.settle({ ...outcome, position: offset === undefined ? undefined : { partition: ownership.partition, offset } })
    }
    partitions.evict(ownership)
  }

  const commandSeconds = new Map([...env.kinds.keys()].map((kind) => [kind, metrics.commandSeconds.labels(kind)]))

  /** Queues a command on its partition's worker; undefined when this node does not own it. */
  const decideHere = (partition: number, kind: AnyActorKind, key: string, command: { readonly _tag: string }, meta: CommandMeta) => {
    const ownership = partitions.owned.get(partition)
    if (ownership === undefined || partitions.handingOver()) return undefined
    return Effect.async<Outcome>((resume) => {
      const release = placeFor(env.queued, metrics)
      if (typeof release !== "function") return resume(Effect.succeed(release))
      const enqueued = performance.now()
      const latency = commandSeconds.get(kind.kind)
      enqueue(ownership, {
        kind,
        key,
        command,
        meta,
        settle: (outcome) => {
          release()
          latency?.observe((performance.now() - enqueued) / 1000)
          resume(Effect.succeed(outcome))
        }
      })
    })
  }

  return { decideHere }
}

const noRelease = () => {}

/**
 * A place among the commands this node holds, taken before a command is queued and given back as
 * it is answered; past the bound, the refusal (counted) as the command's outcome.
 */
const placeFor = (queued: Gate | undefined, metrics: NodeMetricsService): Release | Outcome => {
  if (queued === undefined) return noRelease
  const release = queued.tryAcquire()
  if (release !== undefined) return release
  metrics.admissionRefusals.inc({ bound: "queued_commands" })
  return overloaded(queued.limit)
}

/** One command against one key's state: the outcome, and the key's next state if it caused events. */
const decideOne = (job: Job, actor: CachedActor, partition: number): {
  readonly outcome: Outcome
  readonly next: CachedActor | undefined
  readonly events: ReadonlyArray<{ type: string; payload: unknown }>
} => {
  const { kind, command, meta } = job
  const position = actor.position === undefined ? undefined : { partition, offset: actor.position }
  if (actor.recentCommands.includes(meta.commandId)) {
    return { outcome: { ok: true, seq: actor.seq, state: actor.state, events: [], duplicate: true, position }, next: undefined, events: [] }
  }
  try {
    const decision = kind.decide(actor.state, command, meta)
    if (Either.isLeft(decision)) return { outcome: { ok: false, rejected: decision.left }, next: undefined, events: [] }
    const events = decision.right as ReadonlyArray<{ readonly _tag: string }>
    if (events.length === 0) {
      return { outcome: { ok: true, seq: actor.seq, state: actor.state, events: [], duplicate: false, position }, next: undefined, events: [] }
    }
    const encoded = events.map((e) => encodeEvent(kind, e))
    const state = events.reduce((s: unknown, e: unknown) => kind.evolve(s, e), actor.state)
    const seq = actor.seq + events.length
    return {
      outcome: { ok: true, seq, state, events, duplicate: false, position: undefined },
      next: { seq, state, recentCommands: rememberCommand(actor.recentCommands, meta.commandId), position: actor.position },
      events: encoded
    }
  } catch (error) {
    return { outcome: failure(`deciding ${command._tag} for ${job.key} failed: ${String(error)}`), next: undefined, events: [] }
  }
}

/** Caches a key's state, most recent last. */
const remember = (ownership: Ownership, key: string, actor: CachedActor) => {
  ownership.cache.delete(key)
  ownership.cache.set(key, actor)
}

/** The folded states of `keys` in the read model (absent: never written). */
const loadActors = (db: DbService, keys: ReadonlyArray<string>) =>
  query("load actor states", async () => {
    const rows = await db.sql`
      select key, seq, state, recent_commands from ${db.table("actor_state")} where key = any(${keys as string[]}::text[])`
    return new Map<string, StoredActor>(rows.map((r) => [r.key as string, { seq: r.seq, state: r.state, recentCommands: r.recent_commands }]))
  })
