import { samePlaybook } from "./definition.ts"
import type { AutomationEvent } from "./events.ts"
import { type AutomationState, enablerOf } from "./state.ts"

/** Disabled: no revision is enabled, by anyone. */
const off = { enabled: false, liveSince: null, enabledBy: null, enabledRevision: null } as const

export const evolve = (state: AutomationState, event: AutomationEvent): AutomationState => {
  if (event._tag === "automation.created") {
    const { _tag, at, ...fields } = event
    return {
      _tag: "Live",
      ...fields,
      liveSince: event.enabled ? at : null,
      createdAt: at,
      updatedAt: at,
      version: 1,
      revision: 1,
      // a person's session creates it enabled: theirs (runAs) to answer for
      enabledBy: event.enabled ? event.runAs.userId : null,
      enabledRevision: event.enabled ? 1 : null,
      lastTick: null,
      activeScheduledRun: null
    }
  }
  // every other event follows the creation of a live automation
  if (state._tag !== "Live") return state
  switch (event._tag) {
    case "automation.updated": {
      const { name, description, trigger, steps, at, triggerReplaced, origin, by } = event
      const rewritten = !samePlaybook(event, state)
      const revision = rewritten ? state.revision + 1 : state.revision
      // a rename keeps its enabler; a person's own rewrite of a running playbook is theirs to answer
      // for from now on; an AI's rewrite nobody enabled (`automation.held` follows), nor a change
      // recorded before changes named their person
      const enabler = enablerOf(state)
      const enabledBy = enabler === null || by === null ? null : !rewritten ? enabler : origin === "human" ? by : null
      return {
        ...state,
        name,
        description,
        trigger,
        steps,
        updatedAt: at,
        version: state.version + 1,
        revision,
        origin: rewritten ? origin : state.origin,
        enabledBy,
        enabledRevision: enabledBy === null ? null : revision,
        // a replaced trigger goes live from now: a schedule counts its ticks afresh
        ...(triggerReplaced ? { liveSince: state.enabled ? at : null, lastTick: null } : {})
      }
    }
    case "automation.enabled":
      // enabled before enablers were recorded (`by` null): runs again once a person enables it anew
      return {
        ...state,
        enabled: true,
        liveSince: event.at,
        enabledBy: event.by,
        enabledRevision: state.revision,
        updatedAt: event.at,
        version: state.version + 1,
        lastTick: null
      }
    case "automation.disabled":
    case "automation.held":
      return { ...state, ...off, updatedAt: event.at, version: state.version + 1 }
    case "automation.deleted":
      return { _tag: "Deleted", automationId: state.automationId, workspaceId: state.workspaceId }
    case "automation.run_admitted":
      return event.tick === null ? state : { ...state, lastTick: event.tick, activeScheduledRun: event.runId }
    case "automation.tick_skipped":
      return { ...state, lastTick: event.tick }
    case "automation.scheduled_run_ended":
      return { ...state, activeScheduledRun: null }
  }
}
