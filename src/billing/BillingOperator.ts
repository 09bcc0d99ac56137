/**
 * The operator's side of billing (`svc billing grant|suspend|resume <orgSlug>`): grant credits
 * (the first grant turns metering on) and suspend or resume an organization. No capability does
 * this: an organization never sets its own balance.
 *
 * Unlike `svc issue-key`, which writes keys nobody else has written, these commands go to an
 * organization's billing actor that the running nodes also write (caps, budgets, metering), so
 * they are decided by that key's owner, through an actor host (`operatorHost`, bin/App.ts).
 */
import { Clock, Effect, Layer, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { BillingActor } from "../../actors/billing/actor.ts"
import { GrantCredits, SetBillingSuspended } from "../../actors/billing/protocol.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import * as ActorHost from "../../streams/ActorHost.ts"
import { organizationIdBySlug } from "./Queries.ts"

/** The operator's request cannot be carried out; `reason` says why. */
export class BillingOperatorRefused extends Schema.TaggedError<BillingOperatorRefused>()("BillingOperatorRefused", {
  reason: Schema.Literal("organization_not_found", "invalid_amount"),
  message: Schema.String
}) {}

export interface OperatorBilling {
  readonly orgId: string
  /** Null: unmetered. */
  readonly credits: number | null
  readonly suspended: boolean
}

const organizationOf = (orgSlug: string) =>
  Effect.gen(function* () {
    const orgId = yield* organizationIdBySlug(orgSlug)
    if (orgId === undefined) return yield* new BillingOperatorRefused({ reason: "organization_not_found", message: `no organization ${orgSlug}` })
    return orgId
  })

const operatorMeta = Effect.map(Clock.currentTimeMillis, (now): CommandMeta => ({
  commandId: randomUUID(),
  at: new Date(now).toISOString(),
  actor: "system"
}))

/** The operator's change shows in every read once the command returns (the projection runs behind answers). */
const untilReadable = (host: ActorHost.ActorHostService) =>
  Effect.promise(() => host.awaitProjected(host.unprojected(), OPERATOR_READ_TIMEOUT_MS))

const OPERATOR_READ_TIMEOUT_MS = 30_000

/** Adds `credits` to the organization's balance; an unmetered organization starts from 0. A
 * balance past `MAX_BALANCE` is refused by the actor (`CreditsLimitExceeded`). */
export const grantCredits = Effect.fn("BillingOperator.grantCredits")(function* (orgSlug: string, credits: number) {
  if (!Number.isSafeInteger(credits) || credits <= 0) {
    return yield* new BillingOperatorRefused({ reason: "invalid_amount", message: "credits must be a whole number above 0" })
  }
  const orgId = yield* organizationOf(orgSlug)
  const host = yield* ActorHost.ActorHost
  const { state } = yield* host.send(BillingActor, orgId, new GrantCredits({ orgId, amount: credits }), yield* operatorMeta)
  yield* untilReadable(host)
  return { orgId, credits: state.credits, suspended: state.suspended } satisfies OperatorBilling
})

/** Suspends (every turn is refused with `billing_suspended`) or resumes the organization. */
export const setBillingSuspended = Effect.fn("BillingOperator.setBillingSuspended")(function* (orgSlug: string, suspended: boolean) {
  const orgId = yield* organizationOf(orgSlug)
  const host = yield* ActorHost.ActorHost
  const { state } = yield* host.send(BillingActor, orgId, new SetBillingSuspended({ orgId, suspended }), yield* operatorMeta)
  yield* untilReadable(host)
  return { orgId, credits: state.credits, suspended: state.suspended } satisfies OperatorBilling
})
