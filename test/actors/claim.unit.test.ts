/**
 * The claim actor (`claim:<namespace>:<value>`, one unique name held by one owner) as decider
 * specifications, for both of its namespaces, and the `claims` row its projection writes. An
 * `Idempotency-Key`'s claim is named by the key's seed and owned by the first request's digest
 * (src/checkpoint/IdempotencyKeys.ts): the same request again changes nothing, another one is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ClaimActor } from "../../actors/claim/actor.ts"
import { NameTaken } from "../../actors/claim/errors.ts"
import { Claimed } from "../../actors/claim/events.ts"
import { Claim, claimId } from "../../actors/claim/protocol.ts"
import { ClaimState } from "../../actors/claim/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T12:00:00.000Z"
const seed = "5e".repeat(32)
const firstDigest = "d1".repeat(32)
const otherDigest = "d2".repeat(32)

const cases = [
  { namespace: "email", value: "ada@example.com", owner: "usr_1", other: "usr_2" },
  { namespace: "idempotency_key", value: seed, owner: firstDigest, other: otherDigest }
] as const

describe.each(cases)("claim decider ($namespace)", ({ namespace, value, owner, other }) => {
  const claim = (ownerId: string) => new Claim({ namespace, value, ownerId })
  const claimed = new Claimed({ namespace, value, ownerId: owner, claimedAt: T0 })

  it("a free name goes to its first owner, at the command's time", () =>
    spec(ClaimActor).given([]).when(claim(owner), meta({ at: T0 })).then([claimed]))

  it("the same owner claiming again changes nothing, under any command id", () =>
    spec(ClaimActor).given([claimed]).when(claim(owner), meta({ commandId: "cmd-2" })).thenNothingHappened())

  it("another owner is refused, and the name stays its first owner's", () =>
    spec(ClaimActor).given([claimed]).when(claim(other), meta({ commandId: "cmd-2" })).thenThrows(new NameTaken({ namespace, value })))

  it.effect("its state survives the JSON it is stored as", () =>
    Effect.gen(function* () {
      const state = ClaimActor.evolve(ClaimActor.initialState, claimed)
      expect(yield* jsonRoundTrip(ClaimState, state)).toEqual(state)
    })
  )

  it("projects one claims row", () =>
    expect(projectedRows(ClaimActor, keyOf(ClaimActor, claimId(namespace, value)), [[claimed, T0]])).toEqual({
      claims: [{ namespace, value, owner_id: owner, claimed_at: T0 }]
    }))
})
