import type { FleetEvent } from "./events.ts"
import type { FleetState } from "./state.ts"

export const evolve = (state: FleetState, event: FleetEvent): FleetState => {
  switch (event._tag) {
    case "fleet.policy_set":
      return { ...state, policyVersion: event.version, rules: event.rules }
    case "fleet.repository_registered":
      return { ...state, repositories: [...state.repositories, event.repository] }
    case "fleet.repository_removed":
      return { ...state, repositories: state.repositories.filter((r) => r !== event.repository) }
  }
}
