/** What a guard remembers: its failures in a row, when the last was, and the lock they caused. */
import { Schema } from "effect"

export const GuardState = Schema.Struct({
  failures: Schema.NonNegativeInt,
  /** ISO 8601; null before the first failure and after a reset. */
  lastFailureAt: Schema.NullOr(Schema.String),
  /** ISO 8601; the last lock's end, past or not. */
  lockedUntil: Schema.NullOr(Schema.String)
})
export type GuardState = typeof GuardState.Type

export const initialGuardState: GuardState = { failures: 0, lastFailureAt: null, lockedUntil: null }

/** Whether the guard refuses guesses at `at` (ISO 8601). */
export const lockedAt = (state: GuardState, at: string): boolean =>
  state.lockedUntil !== null && Date.parse(at) < Date.parse(state.lockedUntil)
