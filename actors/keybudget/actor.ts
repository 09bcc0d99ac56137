/** The key budget actor, key `keybudget:<aky_ id>`: how many turns one API key may start in a
 * window across the cluster. Nodes take the budget in slices and spend each on their own
 * (src/assistant/KeyRateLimit.ts); the single writer makes the slices add up to the budget, however
 * many nodes ask. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { KeyBudgetError } from "./errors.ts"
import { KeyBudgetEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { KeyBudgetCommand } from "./protocol.ts"
import { initialKeyBudgetState, KeyBudgetState } from "./state.ts"

export const KeyBudgetActor: ActorKind<KeyBudgetState, KeyBudgetCommand, KeyBudgetEvent, KeyBudgetError> = {
  kind: "keybudget",
  initialState: initialKeyBudgetState,
  state: KeyBudgetState,
  commands: KeyBudgetCommand,
  events: KeyBudgetEvent,
  errors: KeyBudgetError,
  decide,
  evolve,
  project
}
