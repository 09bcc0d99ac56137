/**
 * The guard actor (`guard:<flow>:<scope>:<subject>`, brute-force protection) as decider
 * specifications: failures counted in a row, a lock at the policy's count that doubles with each
 * further failure up to its bound, guesses refused (and not counted) while locked, a right guess
 * clearing the count, old failures forgotten; then the security records its projection writes.
 */
import { describe, expect, it } from "@effect/vitest"
import { GuardActor } from "../../actors/guard/actor.ts"
import { lockMsAfter } from "../../actors/guard/decide.ts"
import { AttemptsLocked } from "../../actors/guard/errors.ts"
import { FailureCounted, FailuresCleared, Locked } from "../../actors/guard/events.ts"
import { Admit, type Attempt, CountFailure, type LockPolicy } from "../../actors/guard/protocol.ts"
import { keyOf } from "../../actors/kernel.ts"
import { meta, projectedRows, spec } from "../support/decider.ts"

const policy: LockPolicy = { failuresBeforeLock: 3, lockMs: 60_000, maxLockMs: 300_000, forgetAfterMs: 86_400_000 }
const attempt: Attempt = { flow: "sign_in", scope: "account", address: "192.0.2.7", email: "owner@acme.example", userId: "usr_owner", orgIds: ["org_1", "org_2"] }
const fail = new CountFailure({ policy, attempt })

const T0 = "2024-05-01T12:00:00.000Z"
const T1 = "2024-05-01T12:00:10.000Z"
const T2 = "2024-05-01T12:00:20.000Z"
const at = (time: string) => meta({ at: time, actor: "anonymous" })
const plus = (time: string, ms: number) => new Date(Date.parse(time) + ms).toISOString()

const counted = (failures: number, time: string) => new FailureCounted({ failures, at: time })
const locked = (failures: number, time: string, lockMs: number) =>
  new Locked({ ...attempt, failures, lockMs, lockedUntil: plus(time, lockMs) })
/** Three failures, the third locking for a minute from T2. */
const lockedAtT2 = [counted(1, T0), counted(2, T1), counted(3, T2), locked(3, T2, 60_000)]

const guard = spec(GuardActor)

describe("counting failures", () => {
  it("counts a first failure as one", () =>
    guard.given([]).when(fail, at(T0)).then([counted(1, T0)]))

  it("counts failures in a row", () =>
    guard.given([counted(1, T0)]).when(fail, at(T1)).then([counted(2, T1)]))

  it("locks at the policy's count, for its first lock, naming the attempt", () =>
    guard.given([counted(1, T0), counted(2, T1)]).when(fail, at(T2)).then([counted(3, T2), locked(3, T2, 60_000)]))

  it("counts from one again a day after the last failure", () =>
    guard.given([counted(1, T0), counted(2, T1)]).when(fail, at(plus(T1, 86_400_000))).then([counted(1, plus(T1, 86_400_000))]))
})

describe("while locked", () => {
  const during = plus(T2, 59_999)

  it("refuses a wrong guess without counting it, so the lock ends when it was set to", () =>
    guard.given(lockedAtT2).when(fail, at(during)).thenThrows(new AttemptsLocked({ lockedUntil: plus(T2, 60_000) })))

  it("refuses a right guess as it refuses a wrong one", () =>
    guard.given(lockedAtT2).when(new Admit({ reset: true }), at(during)).thenThrows(new AttemptsLocked({ lockedUntil: plus(T2, 60_000) })))
})

describe("after a lock", () => {
  const after = plus(T2, 60_000)

  it("locks again at the next failure, twice as long", () =>
    guard.given(lockedAtT2).when(fail, at(after)).then([counted(4, after), locked(4, after, 120_000)]))

  it("never locks longer than the policy's bound", () => {
    expect([3, 4, 5, 6, 7, 40, 5000].map((failures) => lockMsAfter(policy, failures))).toEqual([60_000, 120_000, 240_000, 300_000, 300_000, 300_000, 300_000])
  })

  it("lets a right guess through and clears the count", () =>
    guard.given(lockedAtT2).when(new Admit({ reset: true }), at(after)).then([new FailuresCleared()]))

  it("lets a right guess through without clearing when told not to (an address's count stays)", () =>
    guard.given(lockedAtT2).when(new Admit({ reset: false }), at(after)).thenNothingHappened())

  it("after a clear, counts from one", () =>
    guard.given([...lockedAtT2, new FailuresCleared()]).when(fail, at(after)).then([counted(1, after)]))
})

describe("a right guess with nothing counted", () => {
  it("changes nothing, so a sign-in writes nothing to the guard", () =>
    guard.given([]).when(new Admit({ reset: true }), at(T0)).thenNothingHappened())
})

describe("projection", () => {
  it("records a lock in the audit log of each organization the attempt names; counting and clearing record nothing", () => {
    const key = keyOf(GuardActor, "sign_in:account:abc")
    const rows = projectedRows(GuardActor, key, [...lockedAtT2.map((e) => [e, T2] as const), [new FailuresCleared(), T2]])
    expect(rows.audit_log.map((row) => ({ org: row.org_id, kind: row.kind, event: row.event, user: row.user_id, detail: row.detail }))).toEqual(
      ["org_1", "org_2"].map((org) => ({
        org,
        kind: "security",
        event: "guard.locked",
        user: "usr_owner",
        detail: { flow: "sign_in", scope: "account", email: "owner@acme.example", address: "192.0.2.7", failures: 3, lockSeconds: 60, lockedUntil: plus(T2, 60_000) }
      }))
    )
  })
})
