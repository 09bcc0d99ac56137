/**
 * Events of the billing actor (key `billing:<orgId>`): an organization's credits, suspension,
 * spend caps and workspace budgets, and the turns metered against them. Each event records the
 * decision's results (balances, the month's and the day's totals after it), so `evolve` only
 * copies them and a projection needs nothing else. A published `_tag` is never renamed.
 */
import { Schema } from "effect"

/** An amount of credits: one credit is one model token (docs/decisions.md). */
export const Credits = Schema.NonNegativeInt

/** Who paid the model call: the operator's key (deducts credits when metered) or the
 * organization's own key (counts toward that key's daily limit). */
export const PaidBy = Schema.Literal("operator", "organization")
export type PaidBy = typeof PaidBy.Type

/** The operator granted credits; the first grant turns metering on, counted from 0. */
export class CreditsGranted extends Schema.TaggedClass<CreditsGranted>()("billing.credits_granted", {
  orgId: Schema.NonEmptyString,
  amount: Schema.Int.pipe(Schema.positive()),
  /** The balance after the grant. */
  balance: Schema.Int,
  grantedAt: Schema.String
}) {}

export class SuspensionSet extends Schema.TaggedClass<SuspensionSet>()("billing.suspension_set", {
  orgId: Schema.NonEmptyString,
  suspended: Schema.Boolean,
  setAt: Schema.String
}) {}

/** The Owner's caps as they stand after the change; null is no cap. */
export class CapsSet extends Schema.TaggedClass<CapsSet>()("billing.caps_set", {
  orgId: Schema.NonEmptyString,
  assistantMonthlyCap: Schema.NullOr(Credits),
  modelKeyDailyLimit: Schema.NullOr(Credits),
  setAt: Schema.String
}) {}

export class WorkspaceBudgetSet extends Schema.TaggedClass<WorkspaceBudgetSet>()("billing.workspace_budget_set", {
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  /** Null: no budget. */
  monthlyBudget: Schema.NullOr(Credits),
  setAt: Schema.String
}) {}

/** A finished turn metered: what it cost and every total it moved. */
export class TurnCharged extends Schema.TaggedClass<TurnCharged>()("billing.turn_charged", {
  orgId: Schema.NonEmptyString,
  workspaceId: Schema.NonEmptyString,
  runId: Schema.NonEmptyString,
  credits: Credits,
  paidBy: PaidBy,
  /** Credits left after the charge (below zero when the turn cost more than was left); null while unmetered. */
  balance: Schema.NullOr(Schema.Int),
  /** `YYYY-MM` (UTC) the month's totals below belong to. */
  month: Schema.String,
  /** The organization's assistant spend in `month`, this charge included. */
  assistantSpent: Credits,
  /** The workspace's spend in `month`, this charge included. */
  workspaceSpent: Credits,
  /** `YYYY-MM-DD` (UTC) the model key's spend below belongs to. */
  day: Schema.String,
  /** The organization's own model key's spend on `day` (grows only on turns it paid for). */
  modelKeySpent: Credits,
  chargedAt: Schema.String
}) {}

export const BillingEvent = Schema.Union(CreditsGranted, SuspensionSet, CapsSet, WorkspaceBudgetSet, TurnCharged)
export type BillingEvent = typeof BillingEvent.Type
