/** No read model: the state (`actor_state`) is all a key budget keeps, and only its owner reads it. */
import type { EventContext, RowOp } from "../kernel.ts"
import type { KeyBudgetEvent } from "./events.ts"
import type { KeyBudgetState } from "./state.ts"

export const project = (_after: KeyBudgetState, _event: KeyBudgetEvent, _ctx: EventContext): ReadonlyArray<RowOp> => []
