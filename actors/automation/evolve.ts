import type { AutomationEvent } from "./events.ts"
import type { AutomationState } from "./state.ts"

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
      lastTick: null,
      activeScheduledRun: null
    }
  }
  // every other event follows the creation of a live automation
  if (state._tag !== "Live") return state
  switch (event._tag) {
    case "automation.updated": {
      const { name, description, trigger, steps, at, triggerReplaced } = event
      return {
        ...state,
        name,
        description,
        trigger,
        steps,
        updatedAt: at,
        version: state.version + 1,
        // a replaced trigger goes live from now: a schedule counts its ticks afresh
        ...(triggerReplaced ? { liveSince: state.enabled ? at : null, lastTick: null } : {})
      }
    }
    case "automation.enabled":
      return { ...state, enabled: true, liveSince: event.at, updatedAt: event.at, version: state.version + 1, lastTick: null }
    case "automation.disabled":
      return { ...state, enabled: false, liveSince: null, updatedAt: event.at, version: state.version + 1 }
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
