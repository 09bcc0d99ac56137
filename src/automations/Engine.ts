/**
 * What runs automations on a node: for each partition it owns, the reaction to its node events;
 * for each run in those partitions, its driver; for each scheduled automation in them, its
 * schedule. Work starts as soon as the tail says there is some (a run started, an automation
 * created or enabled), and a sweep takes up what a node gets by a rebalance or a restart. The host
 * tells the engine when the partitions it owns and has caught up change (`readyChanges`).
 */
import { Duration, Effect, FiberMap, Layer, Stream } from "effect"
import { AutomationActor } from "../../actors/automation/actor.ts"
import { AutomationRunActor } from "../../actors/automationrun/actor.ts"
import { initialRunState } from "../../actors/automationrun/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { Db } from "../../streams/Db.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { LogSignals } from "../../streams/LogSignals.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { drive, type DriveOptions } from "./Driver.ts"
import { activeRunIds, scheduledAutomationIds } from "./Queries.ts"
import { reactToPartitions } from "./Reactor.ts"
import { keepSchedule } from "./Scheduler.ts"
import { dependencyRetry } from "../../streams/Backoff.ts"

/** How often every owned run and schedule is looked for, beyond what the tail announces. */
const SWEEP_EVERY_MS = 10_000

/**
 * Runs call capabilities, whose requirements the registry types as `any`; the context the engine
 * is built in holds them all (as the gateway's runtime does for requests).
 */
const onNode = <E>(work: Effect.Effect<void, E, any>) => work as Effect.Effect<void, E, never>

export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const host = yield* ActorHost
    const log = yield* EventLog
    const signals = yield* LogSignals
    const fibers = yield* FiberMap.make<string>()
    const run = yield* FiberMap.runtime(fibers)<never>()

    let ready: ReadonlySet<number> = new Set()
    const owns = (key: string) => () => ready.has(partitionFor(key, log.partitions))

    const retried = <E>(what: string, work: Effect.Effect<void, E, any>) =>
      onNode(work).pipe(
        Effect.tapErrorCause((cause) => Effect.logWarning(`automations: ${what} failed; retrying`, cause)),
        Effect.retry(dependencyRetry)
      )

    const driveRun = (runId: string, started?: DriveOptions["started"]) => {
      const key = keyOf(AutomationRunActor, runId)
      if (owns(key)()) run(key, retried(`run ${runId}`, drive(runId, { owns: owns(key), started })), { onlyIfMissing: true })
    }
    const keepScheduleOf = (automationId: string) => {
      const key = keyOf(AutomationActor, automationId)
      if (owns(key)()) run(key, retried(`the schedule of ${automationId}`, keepSchedule(automationId, owns(key))), { onlyIfMissing: true })
    }

    const tail = [
      signals.listenKind(
        AutomationRunActor,
        // a playbook with steps: the start is the whole state (a blank one ends in the same append)
        (signal) => {
          const { event } = signal
          if (event._tag === "automation_run.started" && event.steps.length > 0) {
            driveRun(event.runId, { state: AutomationRunActor.evolve(initialRunState, event), seq: signal.seq })
          }
        },
        ["automation_run.started"]
      ),
      signals.listenKind(AutomationActor, (signal) => keepScheduleOf(signal.event.automationId), ["automation.created", "automation.updated", "automation.enabled"])
    ]
    yield* Effect.addFinalizer(() => Effect.sync(() => tail.forEach((t) => t.stop())))

    /** Every active run and enabled schedule of the owned partitions (the table is small: only what is live). */
    const db = yield* Db
    const sweep = Effect.gen(function* () {
      for (const runId of yield* activeRunIds()) driveRun(runId)
      for (const automationId of yield* scheduledAutomationIds()) keepScheduleOf(automationId)
    }).pipe(
      Effect.provideService(Db, db),
      Effect.catchAllCause((cause) => Effect.logWarning("automations: sweep failed", cause))
    )

    let sweptAt = Date.now()
    const sweepNow = Effect.zipRight(Effect.sync(() => (sweptAt = Date.now())), sweep)
    const follow = (now: ReadonlySet<number>) =>
      Effect.gen(function* () {
        const gained = [...now].some((p) => !ready.has(p))
        const changed = gained || [...ready].some((p) => !now.has(p))
        ready = now
        // one reader of the owned partitions, started again as they change; runs and schedules of a
        // lost partition stop themselves before their next step
        if (changed) {
          yield* FiberMap.remove(fibers, "reaction")
          const partitions = [...now].sort((a, b) => a - b)
          if (partitions.length > 0) run("reaction", retried("the reaction to node events", reactToPartitions(partitions)))
        }
        if (gained) yield* sweepNow
      })
    yield* Effect.forkScoped(Stream.runForEach(host.readyChanges, (partitions) => follow(new Set(partitions))))
    // beyond what the tail announces and what a gained partition brings: SWEEP_EVERY_MS after the last sweep
    const sweepWhenDue: Effect.Effect<void> = Effect.suspend(() => {
      const due = sweptAt + SWEEP_EVERY_MS - Date.now()
      return due > 0 ? Effect.sleep(Duration.millis(due)) : sweepNow
    })
    yield* Effect.forkScoped(Effect.forever(sweepWhenDue))
  })
)
