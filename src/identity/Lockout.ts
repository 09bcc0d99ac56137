/**
 * Brute-force protection for guessed secrets: passwords and TOTP codes at sign-in, and the user
 * codes of CLI logins. Failures are counted per account and per client address by guard actors
 * (actors/guard/); enough of them in a row lock the guard, with a lock that doubles with each
 * further failure up to a bound. While a guard is locked every guess it covers is refused with
 * 429, right or wrong, so a lock tells nothing about the secret.
 *
 * A guess goes: `refuseWhileLocked` (a read of the guards' states, so that a locked guard costs no
 * password hash), the check of the secret, then `countFailure` or `admit`, which the guards'
 * owners decide in order with every other node's: the count is exact across a cluster, and a right
 * guess that reaches a guard after the failures that locked it is refused like them.
 */
import { Clock, Context, Effect, Schema } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { isIPv4, isIPv6 } from "node:net"
import { GuardActor } from "../../actors/guard/actor.ts"
import { Admit, type Attempt, CountFailure } from "../../actors/guard/protocol.ts"
import { lockedAt } from "../../actors/guard/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import type { LockoutConfig } from "../platform/Config.ts"
import { retryAfterSeconds } from "../platform/Errors.ts"
import { orOwnerUnreachable } from "../platform/Failures.ts"
import { guardLockEnds } from "./Queries.ts"

/** The node's lockout settings. */
export class Lockout extends Context.Tag("svc/Lockout")<Lockout, LockoutConfig>() {}

/** A failure a day after the previous one counts from one again. */
export const FAILURES_FORGOTTEN_AFTER_MS = 24 * 60 * 60 * 1000

/** Refused: the gateway answers 429 `rate_limited` with `Retry-After`. */
export class TooManyAttempts extends Schema.TaggedError<TooManyAttempts>()("TooManyAttempts", {
  retryAfterSeconds: Schema.Int
}) {
  override get message() {
    return `too many failed attempts; retry in ${this.retryAfterSeconds} s`
  }
}

/** The guesses of one attempt: what is guessed, at which account, from which client address. */
export interface Guesses {
  readonly flow: Attempt["flow"]
  /** The account's subject: a digest of the email tried at sign-in; the person entering a user code. */
  readonly account: string
  /** The client's address (null when unknown: only the account is guarded then). */
  readonly address: string | null
}

/** A digest of an email as a guard's subject: the log's keys do not spell addresses out. */
export const emailSubject = (email: string): string => createHash("sha256").update(email).digest("hex").slice(0, 32)

/**
 * A client address as a guard's subject: IPv4 as it is; IPv6 by its /64, the block one subscriber
 * is usually given, or changing the last bits would make a fresh client of every guess.
 */
export const addressSubject = (address: string): string => {
  const plain = address.toLowerCase().replace(/%.*$/, "")
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain)
  if (mapped !== null) return mapped[1]
  if (isIPv4(plain) || !isIPv6(plain)) return plain
  const [head, tail] = plain.split("::") as [string, string | undefined]
  const before = head === "" ? [] : head.split(":")
  const after = tail === undefined || tail === "" ? [] : tail.split(":")
  const groups = tail === undefined ? before : [...before, ...Array<string>(Math.max(0, 8 - before.length - after.length)).fill("0"), ...after]
  return `${groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(":")}::/64`
}

interface Guard {
  readonly id: string
  readonly scope: Attempt["scope"]
}

const guardsOf = (guesses: Guesses): ReadonlyArray<Guard> => [
  { id: `${guesses.flow}:account:${guesses.account}`, scope: "account" },
  ...(guesses.address === null ? [] : [{ id: `${guesses.flow}:address:${addressSubject(guesses.address)}`, scope: "address" as const }])
]

const refusal = (lockedUntil: ReadonlyArray<string>, now: number) => {
  const until = Math.max(...lockedUntil.map(Date.parse))
  return new TooManyAttempts({ retryAfterSeconds: retryAfterSeconds(until - now) })
}

/**
 * Refuses at once while a guard of these guesses is locked, as the read models show it (this
 * node's own writes included): the cheap check before a password hash is spent. It may miss a
 * lock decided on another node a moment ago; `countFailure` and `admit` do not.
 */
export const refuseWhileLocked = (guesses: Guesses) =>
  Effect.gen(function* () {
    const keys = guardsOf(guesses).map((guard) => keyOf(GuardActor, guard.id))
    const ends = yield* guardLockEnds(keys)
    const now = yield* Clock.currentTimeMillis
    const locked = ends.filter((until) => Date.parse(until) > now)
    if (locked.length > 0) return yield* refusal(locked, now)
  })

/** Sends one command to every guard of the guesses; fails with `TooManyAttempts` when one is locked after it. */
const decideAll = (guesses: Guesses, command: (guard: Guard) => CountFailure | Admit, actor: string) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const now = yield* Clock.currentTimeMillis
    const at = new Date(now).toISOString()
    // each guard's lock end, if it is locked after the command (a rejection: it was locked before)
    const ends = yield* orOwnerUnreachable(Effect.forEach(
      guardsOf(guesses),
      (guard) =>
        host.send(GuardActor, guard.id, command(guard), { commandId: randomUUID(), at, actor }).pipe(
          Effect.map(({ state }) => (lockedAt(state, at) ? state.lockedUntil : null)),
          Effect.catchTag("AttemptsLocked", (locked) => Effect.succeed(locked.lockedUntil))
        ),
      { concurrency: "unbounded" }
    ))
    const locked = ends.filter((end): end is string => end !== null)
    if (locked.length > 0) return yield* refusal(locked, now)
  })

/**
 * Counts a wrong guess against each guard; fails with `TooManyAttempts` when a guard is locked,
 * by this failure or before it. `who` names the attempt in the security record of a lock.
 */
export const countFailure = (
  guesses: Guesses,
  who: Pick<Attempt, "email" | "userId" | "orgIds">,
  actor: string
) =>
  Effect.flatMap(Lockout, (config) =>
    decideAll(guesses, (guard) => new CountFailure({
      policy: {
        failuresBeforeLock: guard.scope === "account" ? config.accountFailures : config.addressFailures,
        lockMs: config.lockMs,
        maxLockMs: config.maxLockMs,
        forgetAfterMs: FAILURES_FORGOTTEN_AFTER_MS
      },
      attempt: { ...who, flow: guesses.flow, scope: guard.scope, address: guesses.address }
    }), actor)
  )

/**
 * Lets a right guess through unless a guard is locked (then `TooManyAttempts`, as for a wrong one).
 * `reset` (a completed sign-in or approval) clears the account's failures; an address's stay
 * until they are forgotten, or one account of the attacker's own would wipe its count.
 */
export const admit = (guesses: Guesses, reset: boolean, actor: string) =>
  decideAll(guesses, (guard) => new Admit({ reset: reset && guard.scope === "account" }), actor)
