/** Read models (migration 0009): `billing_accounts`, the organization's full row after every
 * event, and `workspace_budgets`, the row of the workspace an event names. The 402 checks and
 * `org.billing.get` read them. */
import type { EventContext, RowOp } from "../kernel.ts"
import type { BillingEvent } from "./events.ts"
import type { BillingState } from "./state.ts"

export const project = (after: BillingState, event: BillingEvent, ctx: EventContext): ReadonlyArray<RowOp> => {
  const account: RowOp = {
    op: "upsert",
    table: "billing_accounts",
    pk: ["org_id"],
    row: {
      org_id: event.orgId,
      credits: after.credits,
      suspended: after.suspended,
      assistant_monthly_cap: after.assistantMonthlyCap,
      assistant_month: after.assistantMonth,
      assistant_spent: after.assistantSpent,
      model_key_daily_limit: after.modelKeyDailyLimit,
      model_key_day: after.modelKeyDay,
      model_key_spent: after.modelKeySpent,
      updated_at: ctx.at
    }
  }
  if (event._tag !== "billing.workspace_budget_set" && event._tag !== "billing.turn_charged") return [account]
  const workspace = after.workspaces[event.workspaceId]
  return [
    account,
    {
      op: "upsert",
      table: "workspace_budgets",
      pk: ["workspace_id"],
      row: {
        workspace_id: event.workspaceId,
        org_id: event.orgId,
        monthly_budget: workspace?.monthlyBudget ?? null,
        month: workspace?.month ?? null,
        spent: workspace?.spent ?? 0,
        updated_at: ctx.at
      }
    }
  ]
}
