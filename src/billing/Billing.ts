/**
 * Capabilities of billing: the Owner reads the organization's balance, caps and spend and sets the
 * caps; the Owner or a workspace's Admin sets that workspace's monthly budget. Credits and
 * suspension are the operator's (`svc billing`), never a capability's. Amounts are credits: one
 * credit is one model token.
 */
import { Effect, Schema } from "effect"
import { BillingActor } from "../../actors/billing/actor.ts"
import { Credits } from "../../actors/billing/events.ts"
import { SetSpendCaps, SetWorkspaceBudget } from "../../actors/billing/protocol.ts"
import { dayOf, monthOf } from "../../actors/billing/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { creditsFor, readAccount, readWorkspaceBudget } from "./TurnCharges.ts"
import { type AnyCapability, defineCapability, type Invocation } from "../checkpoint/Capability.ts"
import { Db, query } from "../../streams/Db.ts"
import { askers } from "../assistant/Assistant.ts"

const common = { needsApproval: false, claimedBy: "builtin", destructive: false, surfaces: ["api", "mcp"] } as const
/** Limits are set by a signed-in person: the roles allowed (Owner, workspace Admin) are never a key's. */
const writes = { ...common, requiresPerson: true, mutating: true, sensitivity: "high" } as const

const orgOf = (invocation: Invocation) => invocation.orgId!

const Caps = Schema.Struct({
  /** Null: no cap. */
  assistantMonthlyCap: Schema.NullOr(Credits),
  modelKeyDailyLimit: Schema.NullOr(Credits)
})

const WorkspaceBudget = Schema.Struct({
  workspaceId: Schema.String,
  slug: Schema.String,
  /** Null: no budget. */
  monthlyBudget: Schema.NullOr(Credits),
  spentThisMonth: Credits
})

export const getBilling = defineCapability({
  ...common,
  name: "org.billing.get",
  description:
    "The organization's billing: credits left (null while unmetered), whether the operator suspended it, the monthly assistant cap and this month's assistant spend, the daily limit of its own model key and today's spend on it, and each workspace's monthly budget and spend (months and days in UTC).",
  scope: "organization",
  roles: ["org:owner"],
  sensitivity: "medium",
  mutating: false,
  input: Schema.Struct({}),
  output: Schema.Struct({
    credits: Schema.NullOr(Schema.Int),
    suspended: Schema.Boolean,
    ...Caps.fields,
    /** `YYYY-MM`, the month the spends below are of. */
    month: Schema.String,
    assistantSpentThisMonth: Credits,
    /** `YYYY-MM-DD`. */
    day: Schema.String,
    modelKeySpentToday: Credits,
    workspaces: Schema.Array(WorkspaceBudget)
  }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const db = yield* Db
      const orgId = orgOf(invocation)
      const now = new Date(invocation.at)
      const month = monthOf(now)
      const account = yield* readAccount(orgId, now)
      const rows = yield* query("workspace budgets", () => db.sql`
        select w.workspace_id, w.slug, b.monthly_budget, b.month, b.spent
        from ${db.table("workspaces")} w left join ${db.table("workspace_budgets")} b using (workspace_id)
        where w.org_id = ${orgId} order by w.slug, w.workspace_id`)
      return {
        ...account,
        month,
        day: dayOf(now),
        workspaces: rows.map((r) => ({
          workspaceId: r.workspace_id as string,
          slug: r.slug as string,
          monthlyBudget: (r.monthly_budget ?? null) as number | null,
          spentThisMonth: (r.month === month ? r.spent : 0) as number
        }))
      }
    })
})

export const setSpendCaps = defineCapability({
  ...writes,
  name: "org.billing.set_caps",
  description:
    "Set the organization's monthly assistant spend cap and the daily spend limit of its own model key, in credits (one per model token); null removes a cap, a field left out keeps its value. A turn is refused once this month's spend reaches the cap; a turn on the organization's key stops once today's spend on it reaches the limit.",
  scope: "organization",
  roles: ["org:owner"],
  input: Schema.Struct({
    assistantMonthlyCap: Schema.optional(Schema.NullOr(Credits)),
    modelKeyDailyLimit: Schema.optional(Schema.NullOr(Credits))
  }),
  output: Caps,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const orgId = orgOf(invocation)
      const { state } = yield* host.send(BillingActor, orgId, new SetSpendCaps({ orgId, ...input }), invocation.meta)
      return { assistantMonthlyCap: state.assistantMonthlyCap, modelKeyDailyLimit: state.modelKeyDailyLimit }
    })
})

export const setWorkspaceBudget = defineCapability({
  ...writes,
  name: "workspace.budget.set",
  description:
    "Set this workspace's monthly assistant budget in credits (one per model token); null removes it. A turn in the workspace is refused once this month's spend reaches the budget.",
  scope: "workspace",
  roles: ["org:owner", "workspace:admin"],
  input: Schema.Struct({ monthlyBudget: Schema.NullOr(Credits) }),
  output: Schema.Struct({ workspaceId: Schema.String, monthlyBudget: Schema.NullOr(Credits) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const orgId = orgOf(invocation)
      const workspaceId = invocation.workspaceId!
      yield* host.send(BillingActor, orgId, new SetWorkspaceBudget({ orgId, workspaceId, monthlyBudget: input.monthlyBudget }), invocation.meta)
      return { workspaceId, monthlyBudget: input.monthlyBudget }
    })
})

/** What runs spent: how many, their tokens and the credits those cost. */
const RunSpend = {
  runs: Schema.NonNegativeInt,
  promptTokens: Schema.NonNegativeInt,
  completionTokens: Schema.NonNegativeInt,
  totalTokens: Schema.NonNegativeInt,
  credits: Credits
}
type RunSpend = { -readonly [K in keyof typeof RunSpend]: number }

const noSpend = (): RunSpend => ({ runs: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, credits: 0 })

const addSpend = (into: RunSpend, row: Record<string, any>) => {
  into.runs += row.runs
  into.promptTokens += row.prompt_tokens
  into.completionTokens += row.completion_tokens
  into.totalTokens += row.total_tokens
  into.credits += creditsFor({ totalTokens: row.total_tokens })
}

/** `rows` summed per `keyOf(row)`, in the rows' order of first appearance. */
const spendBy = (rows: ReadonlyArray<Record<string, any>>, keyOf: (row: Record<string, any>) => string) => {
  const sums = new Map<string, RunSpend>()
  for (const row of rows) {
    const key = keyOf(row)
    const sum = sums.get(key) ?? noSpend()
    addSpend(sum, row)
    sums.set(key, sum)
  }
  return [...sums]
}

export const getSpend = defineCapability({
  ...common,
  name: "spend.get",
  description:
    "This workspace's assistant spend this month (UTC), in credits (one per model token): what its budget counts (turns and run summaries), the monthly budget and what is left of it, and its runs' tokens by day (the day each ended) and by model.",
  scope: "workspace",
  roles: askers,
  surfaces: ["api", "mcp", "agent"],
  sensitivity: "medium",
  mutating: false,
  input: Schema.Struct({}),
  output: Schema.Struct({
    /** `YYYY-MM`. */
    month: Schema.String,
    /** What the workspace's budget counts this month. */
    spent: Credits,
    /** Null: no budget. */
    budget: Schema.NullOr(Credits),
    /** What is left of the budget (never below 0); null without a budget. */
    remaining: Schema.NullOr(Credits),
    /** The runs that ended this month. */
    ...RunSpend,
    byDay: Schema.Array(Schema.Struct({ day: Schema.String, ...RunSpend })),
    byModel: Schema.Array(Schema.Struct({ model: Schema.String, ...RunSpend }))
  }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const db = yield* Db
      const now = new Date(invocation.at)
      const month = monthOf(now)
      const start = new Date(`${month}-01T00:00:00.000Z`)
      const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1))
      const { budget, spent } = yield* readWorkspaceBudget(orgOf(invocation), invocation.workspaceId!, now)
      // float8: a sum of bigints would come back as a string
      const rows = yield* query("workspace run spend", () => db.sql`
        select to_char(ended_at at time zone 'UTC', 'YYYY-MM-DD') as day, model, count(*)::int as runs,
          sum((usage->>'promptTokens')::bigint)::float8 as prompt_tokens,
          sum((usage->>'completionTokens')::bigint)::float8 as completion_tokens,
          sum((usage->>'totalTokens')::bigint)::float8 as total_tokens
        from ${db.table("runs")}
        where workspace_id = ${invocation.workspaceId} and ended_at >= ${start} and ended_at < ${end}
          and (usage->>'totalTokens')::bigint > 0
        group by 1, 2 order by 1, 2`)
      const total = noSpend()
      for (const row of rows) addSpend(total, row)
      return {
        month,
        spent,
        budget,
        remaining: budget === null ? null : Math.max(0, budget - spent),
        ...total,
        byDay: spendBy(rows, (row) => row.day).map(([day, sum]) => ({ day, ...sum })),
        byModel: spendBy(rows, (row) => row.model)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([model, sum]) => ({ model, ...sum }))
      }
    })
})

export const billingCapabilities: ReadonlyArray<AnyCapability> = [getBilling, setSpendCaps, setWorkspaceBudget, getSpend]
