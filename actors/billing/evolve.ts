import type { BillingEvent } from "./events.ts"
import { type BillingState, CHARGED_RUNS_KEPT } from "./state.ts"

// Events carry the decision's results; evolving copies them.
export const evolve = (state: BillingState, event: BillingEvent): BillingState => {
  switch (event._tag) {
    case "billing.credits_granted":
      return { ...state, credits: event.balance }
    case "billing.suspension_set":
      return { ...state, suspended: event.suspended }
    case "billing.caps_set":
      return { ...state, assistantMonthlyCap: event.assistantMonthlyCap, modelKeyDailyLimit: event.modelKeyDailyLimit }
    case "billing.workspace_budget_set": {
      const current = state.workspaces[event.workspaceId]
      const workspace = { monthlyBudget: event.monthlyBudget, spent: current?.spent ?? 0, month: current?.month ?? null }
      return { ...state, workspaces: { ...state.workspaces, [event.workspaceId]: workspace } }
    }
    case "billing.turn_charged": {
      const current = state.workspaces[event.workspaceId]
      return {
        ...state,
        credits: event.balance,
        assistantMonth: event.month,
        assistantSpent: event.assistantSpent,
        modelKeyDay: event.day,
        modelKeySpent: event.modelKeySpent,
        workspaces: {
          ...state.workspaces,
          [event.workspaceId]: { monthlyBudget: current?.monthlyBudget ?? null, month: event.month, spent: event.workspaceSpent }
        },
        chargedRuns: [...state.chargedRuns, event.runId].slice(-CHARGED_RUNS_KEPT)
      }
    }
  }
}
