/**
 * Commands of the billing actor. Who may send which is decided before the command: the operator's
 * command line alone grants credits and suspends (no capability sends them), the checkpoint lets
 * the Owner set caps and the Owner or the workspace's Admin set a budget, and the engine meters a
 * turn after it ran. Time comes from the command's metadata.
 */
import { Schema } from "effect"
import { Credits, PaidBy } from "./events.ts"

export class GrantCredits extends Schema.TaggedClass<GrantCredits>()("GrantCredits", {
  orgId: Schema.NonEmptyString,
  amount: Schema.Int.pipe(Schema.positive())
}) {}

export class SetBillingSuspended extends Schema.TaggedClass<SetBillingSuspended>()("SetBillingSuspended", {
  orgId: Schema.NonEmptyString,
  suspended: Schema.Boolean
}) {}

/** A cap left out keeps its current value; null removes it. */
export class SetSpendCaps extends Schema.TaggedClass<SetSpendCaps>()("SetSpendCaps", {
  orgId: Schema.NonEmptyString,
  assistantMonthlyCap: Schema.optional(Schema.NullOr(Credits)),
  modelKeyDailyLimit: Schema.optional(Schema.NullOr(Credits))
}) {}

export class SetWorkspaceBudget extends Schema.TaggedClass<SetWorkspaceBudget>()("SetWorkspaceBudget", {
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  monthlyBudget: Schema.NullOr(Credits)
}) {}

/** Metering after a turn: `credits` is what the turn cost (its total tokens). */
export const TurnChargeEntry = Schema.Struct({
  workspaceId: Schema.NonEmptyString,
  runId: Schema.NonEmptyString,
  credits: Credits,
  paidBy: PaidBy
})

/** Metering of ended turns, in order: one process's charges for one organization go together, so
 * the organization's actor decides once for many turns rather than once per turn. */
export class ChargeTurns extends Schema.TaggedClass<ChargeTurns>()("ChargeTurns", {
  orgId: Schema.NonEmptyString,
  charges: Schema.Array(TurnChargeEntry).pipe(Schema.minItems(1))
}) {}

export const BillingCommand = Schema.Union(GrantCredits, SetBillingSuspended, SetSpendCaps, SetWorkspaceBudget, ChargeTurns)
export type BillingCommand = typeof BillingCommand.Type
