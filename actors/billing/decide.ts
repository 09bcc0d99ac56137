import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { type BillingError, CreditsLimitExceeded, MAX_BALANCE } from "./errors.ts"
import { type BillingEvent, CapsSet, CreditsGranted, SuspensionSet, TurnCharged, WorkspaceBudgetSet } from "./events.ts"
import { evolve } from "./evolve.ts"
import type { BillingCommand, ChargeTurns, TurnChargeEntry } from "./protocol.ts"
import { type BillingState, dayOf, monthOf } from "./state.ts"

/** Limits are checked before a turn, not here: metering records a turn that has already run. */
type Decision = Either.Either<ReadonlyArray<BillingEvent>, BillingError>

const nothing: Decision = Either.right([])

/** The later of two `YYYY-MM` (or `YYYY-MM-DD`) periods: a node whose clock lags at the turn of a
 * month or day must not reset the new period's totals. */
const latest = (period: string, current: string | null) => (current !== null && current > period ? current : period)

export const decide = (state: BillingState, command: BillingCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "GrantCredits": {
      const { orgId, amount } = command
      const balance = state.credits ?? 0
      if (balance + amount > MAX_BALANCE) return Either.left(new CreditsLimitExceeded({ orgId, balance, amount }))
      return Either.right([new CreditsGranted({ orgId, amount, balance: balance + amount, grantedAt: meta.at })])
    }
    case "SetBillingSuspended":
      if (state.suspended === command.suspended) return nothing
      return Either.right([new SuspensionSet({ orgId: command.orgId, suspended: command.suspended, setAt: meta.at })])
    case "SetSpendCaps": {
      const assistantMonthlyCap = command.assistantMonthlyCap === undefined ? state.assistantMonthlyCap : command.assistantMonthlyCap
      const modelKeyDailyLimit = command.modelKeyDailyLimit === undefined ? state.modelKeyDailyLimit : command.modelKeyDailyLimit
      if (assistantMonthlyCap === state.assistantMonthlyCap && modelKeyDailyLimit === state.modelKeyDailyLimit) return nothing
      return Either.right([new CapsSet({ orgId: command.orgId, assistantMonthlyCap, modelKeyDailyLimit, setAt: meta.at })])
    }
    case "SetWorkspaceBudget": {
      const { orgId, workspaceId, monthlyBudget } = command
      if ((state.workspaces[workspaceId]?.monthlyBudget ?? null) === monthlyBudget) return nothing
      return Either.right([new WorkspaceBudgetSet({ orgId, workspaceId, monthlyBudget, setAt: meta.at })])
    }
    case "ChargeTurns":
      return chargeAll(state, command, meta)
  }
}

/** Each charge sees the state the ones before it left. */
const chargeAll = (state: BillingState, command: ChargeTurns, meta: CommandMeta): Decision => {
  const events: Array<TurnCharged> = []
  let current = state
  for (const entry of command.charges) {
    const charged = charge(current, command.orgId, entry, meta)
    if (charged === undefined) continue
    events.push(charged)
    current = evolve(current, charged)
  }
  return Either.right(events)
}

const charge = (state: BillingState, orgId: string, entry: typeof TurnChargeEntry.Type, meta: CommandMeta): TurnCharged | undefined => {
  // a retried charge (the same run) is charged once
  if (state.chargedRuns.includes(entry.runId)) return undefined
  const { workspaceId, runId, credits, paidBy } = entry
  const month = latest(monthOf(meta.at), state.assistantMonth)
  const day = latest(dayOf(meta.at), state.modelKeyDay)
  const workspace = state.workspaces[workspaceId]
  // the turn already ran: the balance may go below zero, and the next turn's check refuses
  const balance = paidBy === "operator" && state.credits !== null ? state.credits - credits : state.credits
  return new TurnCharged({
    orgId,
    workspaceId,
    runId,
    credits,
    paidBy,
    balance,
    month,
    assistantSpent: (state.assistantMonth === month ? state.assistantSpent : 0) + credits,
    workspaceSpent: (workspace?.month === month ? workspace.spent : 0) + credits,
    day,
    modelKeySpent: (state.modelKeyDay === day ? state.modelKeySpent : 0) + (paidBy === "organization" ? credits : 0),
    chargedAt: meta.at
  })
}
