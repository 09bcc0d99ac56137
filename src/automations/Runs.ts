/**
 * Starting a run, whatever fired it: the automation admits it (its enable gate and the schedule's
 * overlap policy), then the run is created with the playbook as it stands, acting for the person
 * who enabled that revision. The run's id derives from what fired it, so firing twice (a reaction
 * reading an event again after a restart, a scheduler on a new owner) starts it once.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { AutomationActor } from "../../actors/automation/actor.ts"
import type { RunTrigger } from "../../actors/automation/definition.ts"
import { AutomationIsDisabled } from "../../actors/automation/errors.ts"
import { AdmitRun } from "../../actors/automation/protocol.ts"
import { enablerOf } from "../../actors/automation/state.ts"
import { AutomationRunActor } from "../../actors/automationrun/actor.ts"
import { CreateRun } from "../../actors/automationrun/protocol.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { personSealer } from "../audit/PersonalData.ts"
import { sealedTrigger } from "./RunWords.ts"

/** The run fired by `source` (a node event's `key#seq`, a schedule tick, an API call's id). */
export const runIdOf = (automationId: string, source: string) =>
  `arn_${createHash("sha256").update(`${automationId}\n${source}`).digest("hex").slice(0, 32)}`

export const eventSource = (key: string, seq: number) => `event:${key}#${seq}`
export const tickSource = (tick: string) => `tick:${tick}`

/** The actor named on what the engine sends for an automation. */
export const playbookActor = (automationId: string) => `playbook:${automationId}`

export type Started = { readonly runId: string; readonly status: "running" | "succeeded" | "skipped" }

/** Admits and creates the run; fails with the automation's refusal (disabled, not found, ...). */
export const startRun = (automation: { readonly automationId: string; readonly workspaceId: string }, runId: string, trigger: RunTrigger, meta: Omit<CommandMeta, "commandId">) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const { automationId, workspaceId } = automation
    const admitted = yield* host.send(AutomationActor, automationId, new AdmitRun({ automationId, workspaceId, runId, trigger }), { ...meta, commandId: `admit_${runId}` })
    const state = admitted.state
    if (state._tag !== "Live") return yield* Effect.dieMessage("an admitted run's automation is not live")
    // the run acts as the person who enabled the revision it runs; a run admitted before (asked for
    // again) whose automation was disabled or rewritten since does not start now
    const enabler = enablerOf(state)
    if (enabler === null) return yield* new AutomationIsDisabled({ automationId })
    if (admitted.events.some((e) => e._tag === "automation.tick_skipped")) return { runId, status: "skipped" } satisfies Started
    // nothing new: this run was admitted before (a schedule's tick shows it as its active run)
    if (admitted.events.length === 0 && trigger.type === "schedule" && state.activeScheduledRun !== runId) {
      return { runId, status: "skipped" } satisfies Started
    }
    const created = yield* host.send(
      AutomationRunActor,
      runId,
      new CreateRun({ runId, automationId, orgId: state.orgId, workspaceId, trigger: sealedTrigger(yield* personSealer(enabler), trigger), steps: state.steps, runAs: { userId: enabler, apiKeyId: null } }),
      { ...meta, commandId: `create_${runId}` }
    )
    return { runId, status: created.state._tag === "Run" && created.state.status === "succeeded" ? "succeeded" : "running" } satisfies Started
  })
