/**
 * Event triggers (spec 2.8): a reaction to the node events on the log, never to the request that
 * caused them. The owner of each partition reads the partition's events from where the reaction
 * last got (`reaction_offsets`), finds the enabled automations watching each node event's label
 * and type, evaluates their conditions on the event, and starts a run for each that holds. The
 * run's id derives from the event's key and seq: a stretch read again after a restart or a
 * rebalance starts nothing twice.
 */
import { Clock, Effect, Stream } from "effect"
import { evaluate, subjectOfNodeEvent } from "../../actors/automation/conditions.ts"
import type { NodeEventType, RunTrigger } from "../../actors/automation/definition.ts"
import { decodeEvent, type Json } from "../../actors/kernel.ts"
import { NodeActor } from "../../actors/node/actor.ts"
import type { NodeEvent } from "../../actors/node/events.ts"
import { EventLog, type LoggedEvent } from "../../streams/EventLog.ts"
import { reactionOffsets, saveReactionOffset, watchersIn } from "./Queries.ts"
import { eventSource, runIdOf, startRun } from "./Runs.ts"

const REACTION = "automations"

/** How often the offset of a partition whose events started no run is saved. */
const SAVE_IDLE_OFFSET_MS = 1_000

/** Chunks whose runs are being started at once. */
const CONCURRENT_CHUNKS = 8

/** Runs a chunk starts at once. */
const CONCURRENT_STARTS = 32

const NODE_EVENTS: ReadonlySet<string> = new Set<NodeEventType>(["node.created", "node.updated", "node.deleted"])

/** What a run of a node event carries: the node as the event left it (as it was, for a deletion). */
const runTriggerOf = (logged: LoggedEvent, event: NodeEvent): RunTrigger => ({
  type: "event",
  eventType: event._tag,
  nodeId: event.nodeId,
  label: event.label,
  key: logged.key,
  seq: logged.seq,
  at: logged.at,
  properties: (event._tag === "node.updated" ? event.properties ?? {} : event.properties) as Record<string, Json>,
  changes: event._tag === "node.updated" ? (event.changes as unknown as Record<string, Json>) : null
})

/** The runs a chunk of one partition's events fires. */
export const react = (events: ReadonlyArray<LoggedEvent>) =>
  Effect.gen(function* () {
    const nodeEvents = events.filter((e) => NODE_EVENTS.has(e.type) && e.key.startsWith(`${NodeActor.kind}:`))
    if (nodeEvents.length === 0) return 0
    const decoded = nodeEvents.map((logged) => ({ logged, event: decodeEvent(NodeActor, logged.type, logged.payload) as NodeEvent }))
    const watchers = yield* watchersIn([...new Set(decoded.map((d) => d.event.workspaceId))])
    if (watchers.length === 0) return 0
    const starts = decoded.flatMap(({ logged, event }) =>
      watchers
        .filter((w) => w.workspaceId === event.workspaceId && w.trigger.entityType === event.label && w.trigger.eventType === event._tag)
        .filter((w) => w.trigger.conditions === undefined || evaluate(w.trigger.conditions, subjectOfNodeEvent(event, event._tag === "node.updated" ? event.properties : undefined)))
        .map((w) => ({ watcher: w, trigger: runTriggerOf(logged, event), runId: runIdOf(w.automationId, eventSource(logged.key, logged.seq)) }))
    )
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    yield* Effect.forEach(
      starts,
      ({ watcher, trigger, runId }) =>
        startRun(watcher, runId, trigger, { at, actor: "system" }).pipe(
          // disabled or deleted since the read model said otherwise: the gate refused, as it should
          Effect.catchTags({ AutomationIsDisabled: () => Effect.void, AutomationNotFound: () => Effect.void, TriggerMismatch: () => Effect.void })
        ),
      { concurrency: CONCURRENT_STARTS, discard: true }
    )
    return starts.length
  })

const savedOffsets = (partitions: ReadonlyArray<number>) => reactionOffsets(REACTION, partitions)

const saveOffset = (partition: number, next: number) => saveReactionOffset(REACTION, partition, next)

/**
 * Reacts to the given partitions' events for as long as it runs (one reader per node: the engine
 * starts it again when the owned partitions change). A partition no owner reacted to before starts
 * at the log's end: no automation watched before.
 */
export const reactToPartitions = (partitions: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const from = new Map(yield* savedOffsets(partitions))
    const fresh = partitions.filter((p) => !from.has(p))
    if (fresh.length > 0) {
      const ends = yield* log.endOffsets(fresh)
      for (const partition of fresh) {
        from.set(partition, ends.get(partition) ?? 0)
        yield* saveOffset(partition, from.get(partition)!)
      }
    }
    const savedAt = new Map<number, number>()
    yield* log.subscribe(from).pipe(
      // a chunk's runs start while the next chunks are read (a few small chunks arrive while one
      // chunk's admissions are appended); offsets are saved in order, once all before are done
      Stream.mapEffect((chunk) => Effect.map(chunk.events.length > 0 ? react(chunk.events) : Effect.succeed(0), (started) => ({ chunk, started })), {
        concurrency: CONCURRENT_CHUNKS
      }),
      Stream.runForEach(({ chunk, started }) =>
        Effect.gen(function* () {
          // a stretch that started nothing is cheap to read again: its offset is saved now and then
          const now = yield* Clock.currentTimeMillis
          if (started > 0 || now - (savedAt.get(chunk.partition) ?? 0) >= SAVE_IDLE_OFFSET_MS) {
            yield* saveOffset(chunk.partition, chunk.next)
            savedAt.set(chunk.partition, now)
          }
        })
      )
    )
  })
