import type { ApiKeyEvent } from "./events.ts"
import type { ApiKeyState } from "./state.ts"

export const evolve = (state: ApiKeyState, event: ApiKeyEvent): ApiKeyState => {
  switch (event._tag) {
    case "api_key.created": {
      const { _tag, ...fields } = event
      return { _tag: "Active", ...fields }
    }
    case "api_key.rotated": {
      // The decider rotates only an active key; a log that says otherwise is corrupt.
      if (state._tag !== "Active") throw new Error(`api_key.rotated for key ${event.keyId} in state ${state._tag}`)
      return { ...state, _tag: "Grace", supersededBy: event.supersededBy, graceEndsAt: event.graceEndsAt, successor: event.successor }
    }
    case "api_key.revoked": {
      if (state._tag !== "Active" && state._tag !== "Grace") throw new Error(`api_key.revoked for key ${event.keyId} in state ${state._tag}`)
      const { graceEndsAt: _grace, ...key } = state._tag === "Grace" ? state : { ...state, supersededBy: null, graceEndsAt: null, successor: null }
      return { ...key, _tag: "Revoked", revokedAt: event.revokedAt }
    }
  }
}
