import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { firedAt, sameJson, samePlaybook, type Trigger } from "./definition.ts"
import {
  AutomationExists,
  type AutomationError,
  AutomationIsDisabled,
  AutomationNotFound,
  HumanRequired,
  TickAlreadyDecided,
  TriggerMismatch
} from "./errors.ts"
import {
  AutomationCreated,
  AutomationDeleted,
  AutomationDisabled,
  AutomationEnabled,
  type AutomationEvent,
  AutomationHeld,
  AutomationUpdated,
  RunAdmitted,
  ScheduledRunEnded,
  TickSkipped
} from "./events.ts"
import type { AdmitRun, AutomationCommand, CreateAutomation, EnableAutomation, UpdateAutomation } from "./protocol.ts"
import { type AutomationState, enablerOf, type LiveAutomation } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<AutomationEvent>, AutomationError>

/** The live automation a command may act on; one of another workspace is reported as not found. */
const live = (state: AutomationState, command: { readonly automationId: string; readonly workspaceId: string }) =>
  state._tag === "Live" && state.workspaceId === command.workspaceId
    ? Either.right(state)
    : Either.left(new AutomationNotFound({ automationId: command.automationId }))

/** Spec 3.4: an AI origin always creates it disabled; a person only when `enabled` is explicitly true. */
const create = (state: AutomationState, command: CreateAutomation, meta: CommandMeta): Decision => {
  if (state._tag !== "Absent") return Either.left(new AutomationExists({ automationId: command.automationId }))
  const { enabled: asked, _tag, ...fields } = command
  return Either.right([new AutomationCreated({ ...fields, enabled: command.origin === "human" && asked === true, at: meta.at })])
}

/**
 * What is omitted stays. A new trigger or new steps are a new revision: from an AI origin, an
 * enabled automation goes back to disabled until a person enables it (spec 3.4 for changes as for
 * creation), so a key cannot borrow the enabler's rights; from a person, they enable it (evolve).
 */
const update = (state: AutomationState, command: UpdateAutomation, meta: CommandMeta): Decision =>
  Either.map(live(state, command), (automation) => {
    const next = {
      name: command.name ?? automation.name,
      description: command.description ?? automation.description,
      trigger: command.trigger ?? automation.trigger,
      steps: command.steps ?? automation.steps
    }
    const rewritten = !samePlaybook(next, automation)
    if (!rewritten && next.name === automation.name && next.description === automation.description) return []
    const { automationId, workspaceId } = automation
    const { origin, by } = command
    const updated = new AutomationUpdated({ automationId, workspaceId, ...next, triggerReplaced: !sameJson(next.trigger, automation.trigger), origin, by, at: meta.at })
    return rewritten && origin === "ai" && automation.enabled ? [updated, new AutomationHeld({ automationId, workspaceId, by, at: meta.at })] : [updated]
  })

/** Only a person enables, and enabling is what lets the current revision run as them: an automation
 * enabled with no enabler of its revision (stored before enablers were) is enabled anew. */
const enable = (state: AutomationState, command: EnableAutomation, meta: CommandMeta): Decision =>
  Either.flatMap(live(state, command), (automation) => {
    const { automationId, workspaceId } = automation
    if (command.origin !== "human") return Either.left(new HumanRequired({ automationId }))
    return Either.right(enablerOf(automation) !== null ? [] : [new AutomationEnabled({ automationId, workspaceId, by: command.by, at: meta.at })])
  })

const triggerType = (trigger: Trigger) => trigger.type

const admit = (state: AutomationState, command: AdmitRun): Decision =>
  Either.gen(function* () {
    const automation: LiveAutomation = yield* live(state, command)
    const { automationId, workspaceId } = automation
    if (triggerType(automation.trigger) !== command.trigger.type) {
      return yield* Either.left(new TriggerMismatch({ automationId, expected: automation.trigger.type, got: command.trigger.type }))
    }
    // what fired before the trigger went live (while disabled, or for a replaced trigger) never runs,
    // nor a revision nobody enabled
    if (enablerOf(automation) === null || automation.liveSince === null || firedAt(command.trigger) < automation.liveSince) {
      return yield* Either.left(new AutomationIsDisabled({ automationId }))
    }
    if (command.trigger.type !== "schedule") return [new RunAdmitted({ automationId, workspaceId, runId: command.runId, tick: null })]
    const tick = command.trigger.tick
    // the driver asking again for the tick it was admitted for (it stopped before creating the
    // run): admitted already, so that run is created rather than block every later tick
    if (tick === automation.lastTick && command.runId === automation.activeScheduledRun) return []
    if (automation.lastTick !== null && tick <= automation.lastTick) {
      return yield* Either.left(new TickAlreadyDecided({ automationId, tick }))
    }
    return automation.activeScheduledRun === null
      ? [new RunAdmitted({ automationId, workspaceId, runId: command.runId, tick })]
      : [new TickSkipped({ automationId, workspaceId, runId: command.runId, tick, activeRunId: automation.activeScheduledRun })]
  })

export const decide = (state: AutomationState, command: AutomationCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "CreateAutomation":
      return create(state, command, meta)
    case "UpdateAutomation":
      return update(state, command, meta)
    case "EnableAutomation":
      return enable(state, command, meta)
    case "DisableAutomation":
      return Either.map(live(state, command), ({ automationId, workspaceId, enabled }) =>
        enabled ? [new AutomationDisabled({ automationId, workspaceId, at: meta.at })] : []
      )
    case "DeleteAutomation":
      return Either.map(live(state, command), ({ automationId, workspaceId }) => [new AutomationDeleted({ automationId, workspaceId })])
    case "AdmitRun":
      return admit(state, command)
    case "EndScheduledRun":
      return Either.map(live(state, command), ({ automationId, workspaceId, activeScheduledRun }) =>
        activeScheduledRun === command.runId ? [new ScheduledRunEnded({ automationId, workspaceId, runId: command.runId })] : []
      )
  }
}
