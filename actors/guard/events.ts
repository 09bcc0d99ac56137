/**
 * Events of the guard actor (key `guard:<flow>:<scope>:<subject>`): failures of guesses at a
 * secret (a password, a TOTP code, a CLI login's user code) counted for one account or one client
 * address, and the locks they cause. A published `_tag` is never renamed.
 */
import { Schema } from "effect"
import { Attempt } from "./protocol.ts"

export class FailureCounted extends Schema.TaggedClass<FailureCounted>()("guard.failure_counted", {
  /** Failures in a row, this one included. */
  failures: Schema.Int.pipe(Schema.positive()),
  /** ISO 8601. */
  at: Schema.String
}) {}

/** The security event: guesses are refused until `lockedUntil`. */
export class Locked extends Schema.TaggedClass<Locked>()("guard.locked", {
  ...Attempt.fields,
  failures: Schema.Int.pipe(Schema.positive()),
  lockMs: Schema.Int.pipe(Schema.positive()),
  /** ISO 8601. */
  lockedUntil: Schema.String
}) {}

/** A right guess outside a lock: the count starts again. */
export class FailuresCleared extends Schema.TaggedClass<FailuresCleared>()("guard.cleared", {}) {}

export const GuardEvent = Schema.Union(FailureCounted, Locked, FailuresCleared)
export type GuardEvent = typeof GuardEvent.Type
