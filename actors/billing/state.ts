/**
 * An organization's billing: a new organization is unmetered, not suspended and uncapped, so the
 * initial state is a real state, not an absence. Spend totals carry the month (or day) they
 * belong to; a total of an earlier period counts as zero.
 */
import { Schema } from "effect"
import { Credits } from "./events.ts"

const WorkspaceSpend = Schema.Struct({
  /** Null: no budget. */
  monthlyBudget: Schema.NullOr(Credits),
  spent: Credits,
  /** `YYYY-MM` of `spent`; null before the workspace's first charge. */
  month: Schema.NullOr(Schema.String)
})

export const BillingState = Schema.Struct({
  /** Null: unmetered, operator-paid turns cost nothing here. */
  credits: Schema.NullOr(Schema.Int),
  suspended: Schema.Boolean,
  assistantMonthlyCap: Schema.NullOr(Credits),
  assistantMonth: Schema.NullOr(Schema.String),
  assistantSpent: Credits,
  modelKeyDailyLimit: Schema.NullOr(Credits),
  modelKeyDay: Schema.NullOr(Schema.String),
  modelKeySpent: Credits,
  /** workspaceId -> its budget and spend (only workspaces given a budget or charged). */
  workspaces: Schema.Record({ key: Schema.String, value: WorkspaceSpend }),
  /** The runs charged last, oldest first: a retried charge is recognised by its run even after
   * the host has forgotten its command id. */
  chargedRuns: Schema.Array(Schema.String)
})
export type BillingState = typeof BillingState.Type

export const initialBillingState: BillingState = {
  credits: null,
  suspended: false,
  assistantMonthlyCap: null,
  assistantMonth: null,
  assistantSpent: 0,
  modelKeyDailyLimit: null,
  modelKeyDay: null,
  modelKeySpent: 0,
  workspaces: {},
  chargedRuns: []
}

/** How many charged runs the state remembers (the host remembers 32 command ids per key). */
export const CHARGED_RUNS_KEPT = 256

/** The UTC month of an ISO 8601 time, `YYYY-MM`. */
export const monthOf = (at: string | Date): string => new Date(at).toISOString().slice(0, 7)

/** The UTC day of an ISO 8601 time, `YYYY-MM-DD`. */
export const dayOf = (at: string | Date): string => new Date(at).toISOString().slice(0, 10)
