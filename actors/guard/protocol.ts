/** Commands of the guard actor. The lock's numbers are configuration and ride in the command; time
 * comes from the command's metadata. */
import { Schema } from "effect"

const PositiveInt = Schema.Int.pipe(Schema.positive())

export const LockPolicy = Schema.Struct({
  /** The failure that makes this many in a row locks. */
  failuresBeforeLock: PositiveInt,
  /** How long the first lock lasts; each further failure doubles it. */
  lockMs: PositiveInt,
  /** The longest lock. */
  maxLockMs: PositiveInt,
  /** A failure this long after the previous one counts from one again. */
  forgetAfterMs: PositiveInt
})
export type LockPolicy = typeof LockPolicy.Type

/** Who tried what: the security record of a lock names it. */
export const Attempt = Schema.Struct({
  /** What was guessed: a password or TOTP code at sign-in, or a CLI login's user code. */
  flow: Schema.Literal("sign_in", "device_code"),
  /** Whether this guard counts one account's failures or one client address's. */
  scope: Schema.Literal("account", "address"),
  address: Schema.NullOr(Schema.String),
  /** The email tried at sign-in. */
  email: Schema.NullOr(Schema.String),
  /** The person the attempt was about (the account signed in to, or who entered a user code). */
  userId: Schema.NullOr(Schema.String),
  /** The organizations whose audit logs record the lock. */
  orgIds: Schema.Array(Schema.NonEmptyString)
})
export type Attempt = typeof Attempt.Type

/** A wrong guess. Refused, and not counted, while the guard is locked. */
export class CountFailure extends Schema.TaggedClass<CountFailure>()("CountFailure", {
  policy: LockPolicy,
  attempt: Attempt
}) {}

/** A right guess. Refused while the guard is locked; `reset` clears the failures counted so far. */
export class Admit extends Schema.TaggedClass<Admit>()("Admit", {
  reset: Schema.Boolean
}) {}

export const GuardCommand = Schema.Union(CountFailure, Admit)
export type GuardCommand = typeof GuardCommand.Type
