/**
 * Capabilities of billing: the Owner reads the organization's balance, caps and spend and sets the
 * caps; the Owner or a workspace's Admin sets that workspace's monthly budget. Credits and
 * suspension are the operator's (`svc billing`), never a capability's. Amounts are credits: one
 * credit is one model token.
 */
import { Effect } from "effect"
import { BillingActor } from "../../actors/billing/actor.ts"
import { SetSpendCaps, SetWorkspaceBudget } from "../../actors/billing/protocol.ts"
import { dayOf, monthOf } from "../../actors/billing/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { creditsFor, readAccount, readWorkspaceBudget } from "./TurnCharges.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import * as Api from "./Api.ts"
import { type RunSpendRow, runSpendRows, workspaceBudgets } from "./Queries.ts"

const orgOf = (invocation: Invocation) => invocation.orgId!

export const getBilling = implement(Api.getBilling, (invocation) =>
  Effect.gen(function* () {
    const orgId = orgOf(invocation)
    const now = new Date(invocation.at)
    const month = monthOf(now)
    const account = yield* readAccount(orgId, now)
    const workspaces = yield* workspaceBudgets(orgId, month)
    return {
      ...account,
      month,
      day: dayOf(now),
      workspaces
    }
  })
)

export const setSpendCaps = implement(Api.setSpendCaps, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const orgId = orgOf(invocation)
    const { state } = yield* host.send(BillingActor, orgId, new SetSpendCaps({ orgId, ...input }), invocation.meta)
    return { assistantMonthlyCap: state.assistantMonthlyCap, modelKeyDailyLimit: state.modelKeyDailyLimit }
  })
)

export const setWorkspaceBudget = implement(Api.setWorkspaceBudget, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const orgId = orgOf(invocation)
    const workspaceId = invocation.workspaceId!
    yield* host.send(BillingActor, orgId, new SetWorkspaceBudget({ orgId, workspaceId, monthlyBudget: input.monthlyBudget }), invocation.meta)
    return { workspaceId, monthlyBudget: input.monthlyBudget }
  })
)

const noSpend = (): Api.RunSpend => ({ runs: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, credits: 0 })

const addSpend = (into: Api.RunSpend, row: RunSpendRow) => {
  into.runs += row.runs
  into.promptTokens += row.promptTokens
  into.completionTokens += row.completionTokens
  into.totalTokens += row.totalTokens
  into.credits += creditsFor({ totalTokens: row.totalTokens })
}

/** `rows` summed per `keyOf(row)`, in the rows' order of first appearance. */
const spendBy = (rows: ReadonlyArray<RunSpendRow>, keyOf: (row: RunSpendRow) => string) => {
  const sums = new Map<string, Api.RunSpend>()
  for (const row of rows) {
    const key = keyOf(row)
    const sum = sums.get(key) ?? noSpend()
    addSpend(sum, row)
    sums.set(key, sum)
  }
  return [...sums]
}

export const getSpend = implement(Api.getSpend, (invocation) =>
  Effect.gen(function* () {
    const now = new Date(invocation.at)
    const month = monthOf(now)
    const start = new Date(`${month}-01T00:00:00.000Z`)
    const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1))
    const { budget, spent } = yield* readWorkspaceBudget(orgOf(invocation), invocation.workspaceId!, now)
    const rows = yield* runSpendRows(invocation.workspaceId!, start, end)
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
)

export const billingCapabilities: ReadonlyArray<AnyCapability> = [getBilling, setSpendCaps, setWorkspaceBudget, getSpend]
