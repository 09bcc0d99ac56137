import type { SessionEvent } from "./events.ts"
import type { SessionState } from "./state.ts"

export const evolve = (state: SessionState, event: SessionEvent): SessionState => {
  switch (event._tag) {
    case "session.started": {
      const { _tag, ...fields } = event
      return { _tag: "Active", ...fields }
    }
    case "session.ended":
      if (state._tag !== "Active") throw new Error(`session.ended for session ${event.sessionId} in state ${state._tag}`)
      return { ...state, _tag: "Ended", endedAt: event.endedAt }
  }
}
