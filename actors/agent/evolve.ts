import type { AgentEvent } from "./events.ts"
import type { AgentState } from "./state.ts"

export const evolve = (state: AgentState, event: AgentEvent): AgentState => {
  switch (event._tag) {
    case "agent.created": {
      const { _tag, createdAt, ...fields } = event
      return { _tag: "Live", ...fields, version: 1, createdAt, updatedAt: createdAt }
    }
    case "agent.updated": {
      // the decider updates only a live agent; a log that says otherwise is corrupt
      if (state._tag !== "Live") throw new Error(`agent.updated for agent ${event.slug} in state ${state._tag}`)
      const { _tag, workspaceId: _workspaceId, slug: _slug, updatedAt, ...changes } = event
      return { ...state, ...changes, version: state.version + 1, updatedAt }
    }
    case "agent.deleted":
      return { _tag: "Absent" }
  }
}
