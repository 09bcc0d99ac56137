/** What a key budget remembers: its current window and how much of it is handed out. */
import { Schema } from "effect"

export const KeyBudgetState = Schema.Struct({
  /** ISO 8601; null before the first slice. */
  windowStart: Schema.NullOr(Schema.String),
  /** ISO 8601; null before the first slice. */
  windowEnd: Schema.NullOr(Schema.String),
  /** Turns handed out in the window. */
  granted: Schema.NonNegativeInt
})
export type KeyBudgetState = typeof KeyBudgetState.Type

export const initialKeyBudgetState: KeyBudgetState = { windowStart: null, windowEnd: null, granted: 0 }
