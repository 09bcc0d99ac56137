import type { GuardEvent } from "./events.ts"
import { type GuardState, initialGuardState } from "./state.ts"

export const evolve = (state: GuardState, event: GuardEvent): GuardState => {
  switch (event._tag) {
    case "guard.failure_counted":
      return { ...state, failures: event.failures, lastFailureAt: event.at }
    case "guard.locked":
      return { ...state, lockedUntil: event.lockedUntil }
    case "guard.cleared":
      return initialGuardState
  }
}
