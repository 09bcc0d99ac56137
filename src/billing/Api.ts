/**
 * The billing wing's contracts: the Owner reads the organization's balance, caps and spend and sets
 * the caps; the Owner or a workspace's Admin sets that workspace's monthly budget; askers read the
 * workspace's spend. Amounts are credits: one credit is one model token.
 */
import { Schema } from "effect"
import { Credits } from "../../actors/billing/events.ts"
import { defineContract } from "../checkpoint/Capability.ts"
import { askers } from "../assistant/Api.ts"

const common = { needsApproval: false, claimedBy: "builtin", destructive: false, surfaces: ["api", "mcp"] } as const
/** Limits are set by a signed-in person: the roles allowed (Owner, workspace Admin) are never a key's. */
const writes = { ...common, requiresPerson: true, mutating: true, sensitivity: "high" } as const

export const Caps = Schema.Struct({
  /** Null: no cap. */
  assistantMonthlyCap: Schema.NullOr(Credits),
  modelKeyDailyLimit: Schema.NullOr(Credits)
})

export const WorkspaceBudget = Schema.Struct({
  workspaceId: Schema.String,
  slug: Schema.String,
  /** Null: no budget. */
  monthlyBudget: Schema.NullOr(Credits),
  spentThisMonth: Credits
})
export type WorkspaceBudget = typeof WorkspaceBudget.Type

export const getBilling = defineContract({
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
  })
})

export const setSpendCaps = defineContract({
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
  output: Caps
})

export const setWorkspaceBudget = defineContract({
  ...writes,
  name: "workspace.budget.set",
  description:
    "Set this workspace's monthly assistant budget in credits (one per model token); null removes it. A turn in the workspace is refused once this month's spend reaches the budget.",
  scope: "workspace",
  roles: ["org:owner", "workspace:admin"],
  input: Schema.Struct({ monthlyBudget: Schema.NullOr(Credits) }),
  output: Schema.Struct({ workspaceId: Schema.String, monthlyBudget: Schema.NullOr(Credits) })
})

/** What runs spent: how many, their tokens and the credits those cost. */
export const RunSpend = {
  runs: Schema.NonNegativeInt,
  promptTokens: Schema.NonNegativeInt,
  completionTokens: Schema.NonNegativeInt,
  totalTokens: Schema.NonNegativeInt,
  credits: Credits
}
export type RunSpend = { -readonly [K in keyof typeof RunSpend]: number }

export const getSpend = defineContract({
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
  })
})
