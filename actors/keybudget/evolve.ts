import type { KeyBudgetEvent } from "./events.ts"
import type { KeyBudgetState } from "./state.ts"

export const evolve = (_state: KeyBudgetState, event: KeyBudgetEvent): KeyBudgetState => ({
  windowStart: event.windowStart,
  windowEnd: event.windowEnd,
  granted: event.granted
})
