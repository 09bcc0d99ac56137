import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { BudgetSpent, type KeyBudgetError } from "./errors.ts"
import { type KeyBudgetEvent, SliceTaken } from "./events.ts"
import type { KeyBudgetCommand } from "./protocol.ts"
import type { KeyBudgetState } from "./state.ts"

/**
 * A slice of the window the command falls in: the current window while it lasts, else a new one
 * from the command's time. Refused once the window has handed out `perWindow`; a budget lowered
 * under what is already handed out refuses until the window ends.
 */
export const decide = (state: KeyBudgetState, { policy }: KeyBudgetCommand, meta: CommandMeta): Either.Either<ReadonlyArray<KeyBudgetEvent>, KeyBudgetError> => {
  const now = Date.parse(meta.at)
  const current = state.windowEnd !== null && now < Date.parse(state.windowEnd)
  const windowStart = current ? state.windowStart! : meta.at
  const windowEnd = current ? state.windowEnd! : new Date(now + policy.windowMs).toISOString()
  const granted = current ? state.granted : 0
  const left = policy.perWindow - granted
  if (left <= 0) return Either.left(new BudgetSpent({ windowEnd }))
  const tokens = Math.min(policy.slice, left)
  return Either.right([new SliceTaken({ windowStart, windowEnd, tokens, granted: granted + tokens })])
}
