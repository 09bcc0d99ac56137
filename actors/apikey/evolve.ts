import type { ApiKeyEvent } from "./events.ts"
import type { ApiKeyState } from "./state.ts"

export const evolve = (state: ApiKeyState, event: ApiKeyEvent): ApiKeyState => {
  switch (event._tag) {
    case "api_key.created": {
      const { _tag, ...fields } = event
      return { _tag: "Active", ...fields }
    }
    case "api_key.revoked": {
      // The decider revokes only an active key; a log that says otherwise is corrupt.
      if (state._tag !== "Active") throw new Error(`api_key.revoked for key ${event.keyId} in state ${state._tag}`)
      return { ...state, _tag: "Revoked", revokedAt: event.revokedAt }
    }
  }
}
