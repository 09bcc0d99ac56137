import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { AttemptsLocked, type GuardError } from "./errors.ts"
import { FailureCounted, FailuresCleared, type GuardEvent, Locked } from "./events.ts"
import type { CountFailure, GuardCommand, LockPolicy } from "./protocol.ts"
import { type GuardState, lockedAt } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<GuardEvent>, GuardError>

/**
 * A lock's length after `failures` in a row: the policy's first lock once they reach
 * `failuresBeforeLock`, doubled for each failure beyond, never more than `maxLockMs`.
 */
export const lockMsAfter = (policy: LockPolicy, failures: number): number =>
  Math.min(policy.maxLockMs, policy.lockMs * 2 ** (failures - policy.failuresBeforeLock))

export const decide = (state: GuardState, command: GuardCommand, meta: CommandMeta): Decision => {
  // a guess during a lock neither counts nor extends it: the lock ends when it was set to
  if (lockedAt(state, meta.at)) return Either.left(new AttemptsLocked({ lockedUntil: state.lockedUntil! }))
  switch (command._tag) {
    case "CountFailure":
      return countFailure(state, command, meta)
    case "Admit":
      return Either.right(command.reset && state.failures > 0 ? [new FailuresCleared()] : [])
  }
}

const countFailure = (state: GuardState, { policy, attempt }: CountFailure, meta: CommandMeta): Decision => {
  const now = Date.parse(meta.at)
  const forgotten = state.lastFailureAt === null || now - Date.parse(state.lastFailureAt) >= policy.forgetAfterMs
  const failures = (forgotten ? 0 : state.failures) + 1
  const counted = new FailureCounted({ failures, at: meta.at })
  if (failures < policy.failuresBeforeLock) return Either.right([counted])
  const lockMs = lockMsAfter(policy, failures)
  return Either.right([counted, new Locked({ ...attempt, failures, lockMs, lockedUntil: new Date(now + lockMs).toISOString() })])
}
