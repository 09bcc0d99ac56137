/** Commands of the key budget actor. The budget's numbers are configuration and ride in the
 * command; time comes from the command's metadata. */
import { Schema } from "effect"

const PositiveInt = Schema.Int.pipe(Schema.positive())

export const BudgetPolicy = Schema.Struct({
  /** Turns the key may start in one window, across every node. */
  perWindow: PositiveInt,
  /** How long a window lasts from its first slice (a minute). */
  windowMs: PositiveInt,
  /** The most one slice hands a node. */
  slice: PositiveInt
})
export type BudgetPolicy = typeof BudgetPolicy.Type

/**
 * A node asks for a slice of the key's budget, to spend on its own until the window ends.
 * Granted up to `policy.slice` of what the window has left; refused once the window's budget is
 * handed out.
 */
export class TakeSlice extends Schema.TaggedClass<TakeSlice>()("TakeSlice", {
  policy: BudgetPolicy
}) {}

export const KeyBudgetCommand = TakeSlice
export type KeyBudgetCommand = TakeSlice
