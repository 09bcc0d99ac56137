import type { SkillEvent } from "./events.ts"
import type { SkillState } from "./state.ts"

export const evolve = (state: SkillState, event: SkillEvent): SkillState => {
  switch (event._tag) {
    case "skill.created": {
      const { _tag, createdAt, ...fields } = event
      return { _tag: "Live", ...fields, version: 1, createdAt, updatedAt: createdAt }
    }
    case "skill.updated": {
      // the decider updates only a live skill; a log that says otherwise is corrupt
      if (state._tag !== "Live") throw new Error(`skill.updated for skill ${event.slug} in state ${state._tag}`)
      const { _tag, workspaceId: _w, slug: _s, updatedAt, ...changes } = event
      return { ...state, ...changes, version: state.version + 1, updatedAt }
    }
    case "skill.deleted":
      return { _tag: "Absent" }
  }
}
