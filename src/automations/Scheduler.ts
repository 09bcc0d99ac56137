/**
 * Schedule triggers: the owner of an automation's partition keeps its schedule, firing each tick
 * through the automation's actor, which decides it once however many nodes ask (a tick at or before
 * the last one decided is refused), each tick a stable offset into its minute. Ticks missed while no node kept it collapse into one catch-up
 * run; a tick while the previous scheduled run is still active is skipped, and recorded.
 */
import { Clock, Duration, Effect, Option } from "effect"
import { AutomationActor } from "../../actors/automation/actor.ts"
import type { AutomationEvent } from "../../actors/automation/events.ts"
import { EndScheduledRun } from "../../actors/automation/protocol.ts"
import type { AutomationState } from "../../actors/automation/state.ts"
import { isActive } from "../../actors/automationrun/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { follow } from "../../streams/LogSignals.ts"
import { runState } from "./Queries.ts"
import { playbookActor, runIdOf, startRun, tickSource } from "./Runs.ts"
import { dueTick, fireOffsetMs, nextFiring } from "./Schedule.ts"

/** How long an admitted scheduled run may lack its record before the scheduler creates it (its
 * starter stopped between the two). */
const ORPHAN_GRACE_MS = 30_000

/** Where a scheduled run stands: not created yet, still active, or ended. */
const scheduledRunStatus = (runId: string) =>
  runState(runId).pipe(
    Effect.map((run) => {
      if (run === undefined) return "missing" as const
      return run._tag === "Run" && !isActive(run) ? "ended" as const : "active" as const
    })
  )

/** Keeps one automation's schedule while it is live, enabled and scheduled, and `owns()` holds. */
export const keepSchedule = (automationId: string, owns: () => boolean) =>
  Effect.scoped(
    Effect.gen(function* () {
      const host = yield* ActorHost
      const followed = yield* follow(AutomationActor, automationId)
      let state: AutomationState = followed.state
      let seq = followed.seq
      /** The last tick this scheduler fired, before the automation's events say so. */
      let fired: string | null = null
      const offsetMs = fireOffsetMs(automationId)
      while (owns() && state._tag === "Live" && state.enabled && state.trigger.type === "schedule" && state.liveSince !== null) {
        const { cronExpression, timezone } = state.trigger
        const automation = { automationId, workspaceId: state.workspaceId }
        const now = yield* Clock.currentTimeMillis
        const last = [state.lastTick, fired, state.liveSince].filter((t): t is string => t !== null).sort().at(-1)!
        const due = dueTick(cronExpression, timezone, new Date(last), new Date(now), offsetMs)
        const at = new Date(now).toISOString()
        // the previous scheduled run as the tick finds it: ended unheard (a blank playbook ends as it
        // is created; a driver may stop between the run's end and telling the automation), or never
        // created (its starter stopped between admitting and creating it)
        const previous = state.activeScheduledRun
        if (due !== undefined && previous !== null) {
          const status = yield* scheduledRunStatus(previous)
          if (status === "ended") {
            const ended = yield* host.send(AutomationActor, automationId, new EndScheduledRun({ ...automation, runId: previous }), {
              commandId: `${previous}:ended`,
              at,
              actor: playbookActor(automationId)
            })
            if (ended.seq > seq) {
              state = ended.state
              seq = ended.seq
            }
          } else if (status === "missing" && state.lastTick !== null && now - Date.parse(state.lastTick) > ORPHAN_GRACE_MS) {
            yield* startRun(automation, previous, { type: "schedule", tick: state.lastTick }, { at, actor: "system" }).pipe(
              Effect.catchTags({ TickAlreadyDecided: () => Effect.void, AutomationIsDisabled: () => Effect.void })
            )
          }
        }
        if (due !== undefined) {
          const tick = due.toISOString()
          fired = tick
          yield* startRun(automation, runIdOf(automationId, tickSource(tick)), { type: "schedule", tick }, { at, actor: "system" }).pipe(
            Effect.catchTags({ TickAlreadyDecided: () => Effect.void, AutomationIsDisabled: () => Effect.void })
          )
          continue
        }
        const next = nextFiring(cronExpression, timezone, new Date(last), new Date(now), offsetMs)
        // until the next tick fires, or an event of the automation (disabled, replaced, a run ended)
        const wait = next === undefined ? Duration.infinity : Duration.millis(Math.max(1, next - now))
        const heard = yield* followed.take.pipe(Effect.timeoutOption(wait))
        if (Option.isSome(heard) && heard.value.seq > seq) {
          state = AutomationActor.evolve(state, heard.value.event as AutomationEvent)
          seq = heard.value.seq
        }
      }
    })
  )
