/**
 * Where a command or an append goes: to this node's partition worker (or writer) when it owns the
 * partition, else through the cluster to the partition's owner. Ownership moves during rebalances,
 * so each retry asks afresh who owns the partition, until the command timeout. `onCommand` is the
 * other end: what a command or append that reached this node over the cluster comes to.
 */
import { Effect, Runtime, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { type ActorKind, type AnyActorKind, type CommandMeta, type KindRegistry, keyOf, kindOfKey } from "../../actors/kernel.ts"
import type { ClusterService, RemoteCommand } from "../Cluster.ts"
import { type EventLog, type EventRecord, LogError } from "../EventLog.ts"
import { partitionFor } from "../partitioner.ts"
import { addPosition, noteWrite } from "../ReadFence.ts"
import {
  type Accepted,
  accepted,
  APPEND_KEY,
  AppendedRecords,
  type AppendReply,
  fromReply,
  HostUnavailable,
  notOwner,
  type Outcome,
  type Reply,
  toReply
} from "./Outcome.ts"

export interface RouterEnv {
  readonly partitionCount: number
  readonly cluster: ClusterService
  readonly kinds: KindRegistry
  readonly runtime: Runtime.Runtime<EventLog>
  readonly decideHere: (partition: number, kind: AnyActorKind, key: string, command: { readonly _tag: string }, meta: CommandMeta) => Effect.Effect<Outcome> | undefined
  readonly appendHere: (partition: number, records: ReadonlyArray<EventRecord>) => Promise<AppendReply> | undefined
  /** The highest offset this node acknowledged, per partition. */
  readonly acked: Map<number, number>
  readonly commandTimeoutMs: number
}

const remoteFailure = (e: { readonly reason: string; readonly message: string }) =>
  new HostUnavailable({ reason: e.reason === "timeout" ? "timeout" : "not_owner", message: e.message })

export const makeRouter = (env: RouterEnv) => {
  const { cluster, decideHere, appendHere, commandTimeoutMs } = env
  const run = Runtime.runPromise(env.runtime)

  /**
   * Partitions whose last command or append from this node found no owner to decide it (refused
   * as not owned, fenced, or unanswered): moving, as far as this node can tell, until one is
   * decided there again. A read need not wait for their projection (`ActorHost.awaitSettled`).
   */
  const moving = new Set<number>()
  const heard = (partition: number, unavailable: HostUnavailable["reason"] | undefined) => {
    if (unavailable === "not_owner" || unavailable === "timeout" || unavailable === "ownership_lost") moving.add(partition)
    else moving.delete(partition)
  }
  const unavailableOf = (outcome: Outcome) => (!outcome.ok && "unavailable" in outcome ? outcome.unavailable : undefined)

  const send = <S, C extends { readonly _tag: string }, E extends { readonly _tag: string }, Err>(
    kind: ActorKind<S, C, E, Err>,
    id: string,
    command: C,
    meta: CommandMeta
  ): Effect.Effect<Accepted<S, E>, Err | HostUnavailable> => {
    const key = keyOf(kind, id)
    const partition = partitionFor(key, env.partitionCount)
    const until = Date.now() + commandTimeoutMs
    const attempt = (): Effect.Effect<Outcome, HostUnavailable> =>
      decideHere(partition, kind, key, command, meta)?.pipe(
        // the command may still be decided; a retry with its id is recognised
        Effect.timeoutFail({
          duration: Math.max(1, until - Date.now()),
          onTimeout: () => new HostUnavailable({ reason: "timeout", message: `partition ${partition} did not decide within ${commandTimeoutMs} ms` })
        })
      ) ??
        cluster
          .send(partition, { key, commandId: meta.commandId, at: meta.at, actor: meta.actor, body: Schema.encodeSync(kind.commands)(command) }, Math.max(1, until - Date.now()))
          .pipe(
            Effect.map((reply) => fromReply(kind, reply as Reply)),
            Effect.mapError(remoteFailure),
            // the owner it reached was fenced by the partition's next one (nothing written, a known
            // outcome): the next owner decides it. Decided here, the caller hears it, as before.
            Effect.flatMap((outcome) =>
              !outcome.ok && "unavailable" in outcome && outcome.unavailable === "ownership_lost"
                ? Effect.fail(new HostUnavailable({ reason: "ownership_lost", message: outcome.message }))
                : Effect.succeed(outcome)
            )
          )
    // ownership moves during rebalances: retry until the deadline, then give up retryably; each
    // attempt asks afresh who owns the partition (a retry bound to the first attempt's owner would
    // knock on a lost partition's door until the deadline)
    const routed: Effect.Effect<Outcome, HostUnavailable> = Effect.suspend(attempt).pipe(
      Effect.tapBoth({
        onFailure: (e) => Effect.sync(() => heard(partition, e.reason)),
        onSuccess: (outcome) => Effect.sync(() => heard(partition, unavailableOf(outcome)))
      }),
      Effect.flatMap((outcome) =>
        !outcome.ok && "unavailable" in outcome && outcome.unavailable === "not_owner"
          ? Effect.fail(new HostUnavailable({ reason: "not_owner", message: outcome.message }))
          : Effect.succeed(outcome)
      ),
      Effect.catchTag("HostUnavailable", (e) =>
        Date.now() < until ? Effect.zipRight(Effect.sleep("100 millis"), Effect.suspend(() => routed)) : Effect.fail(e)
      )
    )
    return routed.pipe(
      Effect.flatMap((outcome) => accepted<S, E, Err>(outcome)),
      Effect.tap(({ position }) => {
        if (position === undefined) return Effect.void
        // what this node acknowledged, wherever it was decided, is what its reads must see
        addPosition(env.acked, position)
        return noteWrite(position)
      }),
      Effect.withSpan("ActorHost.send", { attributes: { key, partition, command: command._tag }, captureStackTrace: false })
    )
  }

  /** Appends through the partition's one writer, this node's or its owner's; retried while ownership moves. */
  const append = (partition: number, records: ReadonlyArray<EventRecord>): Effect.Effect<ReadonlyArray<number>, LogError> => {
    if (records.length === 0) return Effect.succeed([])
    const until = Date.now() + commandTimeoutMs
    const attempt = (): Effect.Effect<AppendReply, HostUnavailable> => {
      const here = appendHere(partition, records)
      // a partition still catching up holds its appends: the caller waits no longer than its deadline
      if (here !== undefined) {
        return Effect.promise(() => here).pipe(
          Effect.timeoutFail({
            duration: Math.max(1, until - Date.now()),
            onTimeout: () => new HostUnavailable({ reason: "timeout", message: `partition ${partition} did not append within ${commandTimeoutMs} ms` })
          })
        )
      }
      const remote: RemoteCommand = { key: APPEND_KEY, commandId: randomUUID(), at: records[0].at, actor: records[0].actor, body: Schema.encodeSync(AppendedRecords)(records) }
      return cluster.send(partition, remote, Math.max(1, until - Date.now())).pipe(
        Effect.map((reply) => reply as AppendReply),
        Effect.mapError(remoteFailure)
      )
    }
    // the same retries as a command's: ownership moves during rebalances
    const routed: Effect.Effect<ReadonlyArray<number>, HostUnavailable> = Effect.suspend(attempt).pipe(
      Effect.tapBoth({
        onFailure: (e) => Effect.sync(() => heard(partition, e.reason)),
        onSuccess: (reply) => Effect.sync(() => heard(partition, reply.ok ? undefined : reply.unavailable))
      }),
      Effect.flatMap((reply) =>
        reply.ok ? Effect.succeed(reply.offsets) : Effect.fail(new HostUnavailable({ reason: reply.unavailable, message: reply.message }))
      ),
      Effect.catchTag("HostUnavailable", (e) =>
        e.reason !== "failure" && Date.now() < until ? Effect.zipRight(Effect.sleep("100 millis"), Effect.suspend(() => routed)) : Effect.fail(e)
      )
    )
    return routed.pipe(
      Effect.mapError((e) => new LogError({ operation: `append to partition ${partition}`, message: e.message })),
      Effect.withSpan("ActorHost.append", { attributes: { partition, count: records.length }, captureStackTrace: false })
    )
  }

  /** A command or an append that reached this node over the cluster for `partition`. */
  const onCommand = async (partition: number, remote: RemoteCommand): Promise<Reply | AppendReply> => {
    if (remote.key === APPEND_KEY) {
      const records = Schema.decodeUnknownSync(AppendedRecords)(remote.body)
      return (await appendHere(partition, records)) ?? (notOwner() as AppendReply)
    }
    const kind = env.kinds.get(kindOfKey(remote.key))
    if (kind === undefined) return { ok: false, unavailable: "failure", message: `unknown actor kind of ${remote.key}` }
    const command = Schema.decodeUnknownSync(kind.commands)(remote.body) as { readonly _tag: string }
    const decided = decideHere(partition, kind, remote.key, command, { commandId: remote.commandId, at: remote.at, actor: remote.actor })
    return decided === undefined ? notOwner() as Reply : toReply(kind, await run(decided))
  }

  return { send, append, onCommand, moving: (partition: number) => moving.has(partition) }
}
