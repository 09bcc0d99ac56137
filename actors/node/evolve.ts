import type { Properties } from "../schema/definition.ts"
import type { NodeEvent, NodeUpdated } from "./events.ts"
import type { NodeState } from "./state.ts"

/** The properties after an update's changes (`to: null` removes one). */
export const applyChanges = (properties: Properties, changes: NodeUpdated["changes"]): Properties => {
  const next: Record<string, Properties[string]> = { ...properties }
  for (const [property, { to }] of Object.entries(changes)) {
    if (to === null) delete next[property]
    else next[property] = to
  }
  return next
}

export const evolve = (state: NodeState, event: NodeEvent): NodeState => {
  switch (event._tag) {
    case "node.created": {
      const { nodeId, workspaceId, label, properties, at } = event
      return { _tag: "live", nodeId, workspaceId, label, properties, version: 1, createdAt: at, updatedAt: at }
    }
    case "node.updated":
      // Events of a key apply in order after its creation, so an update only ever follows a live state.
      return state._tag === "live"
        ? {
            ...state,
            properties: applyChanges(state.properties, event.changes),
            version: state.version + 1,
            updatedAt: event.at
          }
        : state
    case "node.deleted":
      return { _tag: "deleted" }
  }
}
