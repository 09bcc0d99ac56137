/**
 * The billing wing's SQL: its read models `billing_accounts` and `workspace_budgets` (projected
 * from the `billing` actor), and what it reads of `organizations`, `workspaces` and `runs`.
 */
import { Effect } from "effect"
import { Db, query } from "../../streams/Db.ts"
import type { WorkspaceBudget } from "./Api.ts"

/** An organization's account row joined with one workspace's budget row; every column null when
 * there is no such row. Months are `YYYY-MM`, days `YYYY-MM-DD`. */
export interface BillingRow {
  readonly credits: number | null
  readonly suspended: boolean | null
  readonly assistantMonthlyCap: number | null
  readonly assistantMonth: string | null
  readonly assistantSpent: number | null
  readonly modelKeyDailyLimit: number | null
  readonly modelKeyDay: string | null
  readonly modelKeySpent: number | null
  readonly monthlyBudget: number | null
  readonly budgetMonth: string | null
  readonly budgetSpent: number | null
}

/** The organization's account and (when named) one workspace's budget, in one round trip. */
export const billingRow = (orgId: string, workspaceId: string | null) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("billing account", () => db.sql`
      select a.credits, a.suspended, a.assistant_monthly_cap, a.assistant_month, a.assistant_spent,
        a.model_key_daily_limit, a.model_key_day, a.model_key_spent,
        b.monthly_budget, b.month as budget_month, b.spent as budget_spent
      from (select 1) as one
      left join ${db.table("billing_accounts")} a on a.org_id = ${orgId}
      left join ${db.table("workspace_budgets")} b on b.workspace_id = ${workspaceId} and b.org_id = ${orgId}`)
    if (row === undefined) return undefined
    return {
      credits: row.credits,
      suspended: row.suspended,
      assistantMonthlyCap: row.assistant_monthly_cap,
      assistantMonth: row.assistant_month,
      assistantSpent: row.assistant_spent,
      modelKeyDailyLimit: row.model_key_daily_limit,
      modelKeyDay: row.model_key_day,
      modelKeySpent: row.model_key_spent,
      monthlyBudget: row.monthly_budget,
      budgetMonth: row.budget_month,
      budgetSpent: row.budget_spent
    } as BillingRow
  })

/** Each workspace of the organization with its monthly budget and what it spent in `month`, by slug. */
export const workspaceBudgets = (orgId: string, month: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("workspace budgets", () => db.sql`
      select w.workspace_id, w.slug, b.monthly_budget, b.month, b.spent
      from ${db.table("workspaces")} w left join ${db.table("workspace_budgets")} b using (workspace_id)
      where w.org_id = ${orgId} order by w.slug, w.workspace_id`)
    return rows.map((r): WorkspaceBudget => ({
      workspaceId: r.workspace_id as string,
      slug: r.slug as string,
      monthlyBudget: (r.monthly_budget ?? null) as number | null,
      spentThisMonth: (r.month === month ? r.spent : 0) as number
    }))
  })

/** What the workspace's runs that ended on one day with one model spent. */
export interface RunSpendRow {
  /** `YYYY-MM-DD` (UTC). */
  readonly day: string
  readonly model: string
  readonly runs: number
  readonly promptTokens: number
  readonly completionTokens: number
  readonly totalTokens: number
}

/** The workspace's runs that ended in [start, end) and used tokens, summed per day and model, in that order. */
export const runSpendRows = (workspaceId: string, start: Date, end: Date) =>
  Effect.gen(function* () {
    const db = yield* Db
    // float8: a sum of bigints would come back as a string
    const rows = yield* query("workspace run spend", () => db.sql`
      select to_char(ended_at at time zone 'UTC', 'YYYY-MM-DD') as day, model, count(*)::int as runs,
        sum((usage->>'promptTokens')::bigint)::float8 as prompt_tokens,
        sum((usage->>'completionTokens')::bigint)::float8 as completion_tokens,
        sum((usage->>'totalTokens')::bigint)::float8 as total_tokens
      from ${db.table("runs")}
      where workspace_id = ${workspaceId} and ended_at >= ${start} and ended_at < ${end}
        and (usage->>'totalTokens')::bigint > 0
      group by 1, 2 order by 1, 2`)
    return rows.map((r): RunSpendRow => ({
      day: r.day,
      model: r.model,
      runs: r.runs,
      promptTokens: r.prompt_tokens,
      completionTokens: r.completion_tokens,
      totalTokens: r.total_tokens
    }))
  })

/** The id of the organization with this slug (the lowest, as routes resolve slugs), if any. */
export const organizationIdBySlug = (orgSlug: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    // slugs are not unique in the read model; routes resolve them the same way (lowest id first)
    const [org] = yield* query("find organization", () => db.sql`
      select org_id from ${db.table("organizations")} where slug = ${orgSlug} order by org_id limit 1`)
    return org === undefined ? undefined : (org.org_id as string)
  })
