/**
 * Billing around a chat turn (spec 7.1, the 402 rows; 7.2, `assistant_model_key_limit`).
 *
 * Before a turn, the checks read the billing read models (`billing_accounts`, `workspace_budgets`,
 * migration 0009) and refuse with a tagged 402 error. After it, metering sends `ChargeTurns` to the
 * organization's billing actor, as a reaction to the run's `run.finished` on the log tail of the
 * node that ran it (Turn.ts), after the turn has answered. A check and a charge are not one
 * transaction: turns that start together, or one that starts while the previous turn's charge is
 * on its way, all pass the same check, and the balance may go below zero by what they cost, which
 * a later check then refuses (docs/decisions.md).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { BillingActor } from "../../actors/billing/actor.ts"
import type { PaidBy } from "../../actors/billing/events.ts"
import { ChargeTurns, TurnChargeEntry } from "../../actors/billing/protocol.ts"
import { dayOf, monthOf } from "../../actors/billing/state.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost, type HostUnavailable } from "../../streams/ActorHost.ts"
import * as GroupCommit from "../../streams/GroupCommit.ts"
import type { Db, DbError } from "../../streams/Db.ts"
import { type BillingRow, billingRow } from "./Queries.ts"

export class BillingSuspended extends Schema.TaggedError<BillingSuspended>()("BillingSuspended", {
  orgId: Schema.String
}) {
  override get message() {
    return "the organization's billing is suspended; the operator can resume it"
  }
}

/** The operator pays for the turn's model, metering is on, and no credits are left. */
export class InsufficientCredits extends Schema.TaggedError<InsufficientCredits>()("InsufficientCredits", {
  orgId: Schema.String,
  credits: Schema.Int
}) {
  override get message() {
    return `the organization has ${this.credits} credits left; the operator can grant more`
  }
}

export class AssistantSpendCap extends Schema.TaggedError<AssistantSpendCap>()("AssistantSpendCap", {
  orgId: Schema.String,
  cap: Schema.Int,
  spent: Schema.Int
}) {
  override get message() {
    return `the organization's assistant spend this month (${this.spent} credits) reached its cap of ${this.cap}`
  }
}

export class WorkspaceBudgetSpent extends Schema.TaggedError<WorkspaceBudgetSpent>()("WorkspaceBudgetSpent", {
  workspaceId: Schema.String,
  budget: Schema.Int,
  spent: Schema.Int
}) {
  override get message() {
    return `this workspace's assistant spend this month (${this.spent} credits) reached its budget of ${this.budget}`
  }
}

/** The organization's own model key reached its daily spend limit (reported in the stream). */
export class ModelKeyLimitReached extends Schema.TaggedError<ModelKeyLimitReached>()("ModelKeyLimitReached", {
  orgId: Schema.String,
  limit: Schema.Int,
  spent: Schema.Int
}) {
  override get message() {
    return `the organization's model key reached its daily spend limit (${this.spent} of ${this.limit} credits)`
  }
}

/** An organization's billing as of a moment: totals of an earlier month or day read as zero. */
export interface BillingAccount {
  /** Null: unmetered. */
  readonly credits: number | null
  readonly suspended: boolean
  readonly assistantMonthlyCap: number | null
  readonly assistantSpentThisMonth: number
  readonly modelKeyDailyLimit: number | null
  readonly modelKeySpentToday: number
}

/** An account row's columns as of `now` (null throughout for an organization without a row:
 * unmetered, uncapped). */
const accountFrom = (row: BillingRow | undefined, now: Date): BillingAccount => ({
  credits: row?.credits ?? null,
  suspended: row?.suspended ?? false,
  assistantMonthlyCap: row?.assistantMonthlyCap ?? null,
  assistantSpentThisMonth: row?.assistantMonth === monthOf(now) ? row.assistantSpent! : 0,
  modelKeyDailyLimit: row?.modelKeyDailyLimit ?? null,
  modelKeySpentToday: row?.modelKeyDay === dayOf(now) ? row.modelKeySpent! : 0
})

/** The organization's account and (when named) one workspace's budget and month spend, as of
 * `now`, in one round trip: the check runs on every chat request. */
const readBilling = (orgId: string, workspaceId: string | null, now: Date) =>
  Effect.map(billingRow(orgId, workspaceId), (row) => ({
    account: accountFrom(row, now),
    workspaceBudget: (row?.monthlyBudget ?? null) as number | null,
    workspaceSpentThisMonth: (row?.budgetMonth === monthOf(now) ? row.budgetSpent : 0) as number
  }))

/** The organization's account as of `now`. */
export const readAccount = (orgId: string, now: Date): Effect.Effect<BillingAccount, DbError, Db> =>
  Effect.map(readBilling(orgId, null, now), ({ account }) => account)

/** A workspace's monthly budget (null: none) and what it spent in the month of `now`. */
export const readWorkspaceBudget = (orgId: string, workspaceId: string, now: Date) =>
  Effect.map(readBilling(orgId, workspaceId, now), ({ workspaceBudget, workspaceSpentThisMonth }) => ({ budget: workspaceBudget, spent: workspaceSpentThisMonth }))

export interface SpendCheck {
  readonly orgId: string
  readonly workspaceId: string
  /** Who pays for the turn's model: only operator-paid turns need credits. */
  readonly paidBy: PaidBy
  readonly now: Date
}

/**
 * Whether a turn may start, in the spec's order of refusals: suspended; operator-paid while
 * metered with no credits left; the month's assistant spend at its cap; the workspace's month
 * spend at its budget.
 */
export const checkAssistantSpend = (
  check: SpendCheck
): Effect.Effect<void, BillingSuspended | InsufficientCredits | AssistantSpendCap | WorkspaceBudgetSpent | DbError, Db> =>
  Effect.gen(function* () {
    const { orgId, workspaceId } = check
    const { account, workspaceBudget, workspaceSpentThisMonth } = yield* readBilling(orgId, workspaceId, check.now)
    if (account.suspended) return yield* new BillingSuspended({ orgId })
    if (check.paidBy === "operator" && account.credits !== null && account.credits <= 0) {
      return yield* new InsufficientCredits({ orgId, credits: account.credits })
    }
    if (account.assistantMonthlyCap !== null && account.assistantSpentThisMonth >= account.assistantMonthlyCap) {
      return yield* new AssistantSpendCap({ orgId, cap: account.assistantMonthlyCap, spent: account.assistantSpentThisMonth })
    }
    if (workspaceBudget !== null && workspaceSpentThisMonth >= workspaceBudget) {
      return yield* new WorkspaceBudgetSpent({ workspaceId, budget: workspaceBudget, spent: workspaceSpentThisMonth })
    }
  })

/** Whether a turn paid by the organization's own model key may still call it today. */
export const checkModelKeyLimit = (check: { readonly orgId: string; readonly now: Date }): Effect.Effect<void, ModelKeyLimitReached | DbError, Db> =>
  Effect.gen(function* () {
    const account = yield* readAccount(check.orgId, check.now)
    if (account.modelKeyDailyLimit !== null && account.modelKeySpentToday >= account.modelKeyDailyLimit) {
      return yield* new ModelKeyLimitReached({ orgId: check.orgId, limit: account.modelKeyDailyLimit, spent: account.modelKeySpentToday })
    }
  })

export interface TurnCharge {
  readonly orgId: string
  readonly workspaceId: string
  /** The run (`tse_`) metered; a retry of the same run charges once. */
  readonly runId: string
  readonly usage: { readonly totalTokens: number }
  readonly paidBy: PaidBy
  /** Time and actor of the charge; its command id is replaced by one derived from the run. */
  readonly meta: CommandMeta
}

/** One credit per token (docs/decisions.md). A provider that reports no usable total costs
 * nothing rather than failing the metering of a turn that has already answered. */
export const creditsFor = (usage: { readonly totalTokens: number }): number =>
  Number.isFinite(usage.totalTokens) ? Math.max(0, Math.ceil(usage.totalTokens)) : 0

/** At most this many turns in one charge: well within the runs the actor remembers for retries. */
const MAX_CHARGES_PER_COMMAND = 100

/** A charge as the node's charger queues it. */
interface QueuedCharge {
  readonly orgId: string
  readonly entry: typeof TurnChargeEntry.Type
  readonly meta: CommandMeta
}

/**
 * The node's charger: finished turns' charges wait while a charge is on its way, then go together,
 * one `ChargeTurns` command per organization (at most `MAX_CHARGES_PER_COMMAND` turns each; the
 * organizations' commands in parallel): with one actor per organization, charging turn by turn
 * would cap an organization's turns per second at the actor's command rate (bench/chat.ts).
 */
export class Charges extends Context.Tag("svc/assistant/Charges")<
  Charges,
  { readonly charge: (charge: TurnCharge) => Effect.Effect<void, HostUnavailable> }
>() {}

export const chargesLayer: Layer.Layer<Charges, never, ActorHost> = Layer.scoped(
  Charges,
  Effect.gen(function* () {
    const host = yield* ActorHost
    const sendAll = (queued: ReadonlyArray<QueuedCharge>) => {
      const byOrg = new Map<string, Array<QueuedCharge>>()
      for (const charge of queued) byOrg.set(charge.orgId, [...(byOrg.get(charge.orgId) ?? []), charge])
      return Effect.forEach(
        [...byOrg.values()].flatMap((charges) => chunksOf(charges, MAX_CHARGES_PER_COMMAND)),
        (batch) =>
          host.send(
            BillingActor,
            batch[0].orgId,
            new ChargeTurns({ orgId: batch[0].orgId, charges: batch.map((c) => c.entry) }),
            // a retry of a lost command is safe whatever its id: the actor charges a run once
            { ...batch[0].meta, commandId: `charge_${batch[0].entry.runId}_${batch.length}` }
          ).pipe(
            // the actor refuses grants only, never a charge
            Effect.catchTag("CreditsLimitExceeded", (e) => Effect.die(e))
          ),
        { concurrency: "unbounded", discard: true }
      ).pipe(Effect.as(queued.map(() => undefined)))
    }
    const committer = yield* GroupCommit.make({ maxItems: MAX_CHARGES_PER_COMMIT, commit: sendAll })
    return {
      charge: (charge) =>
        committer.submit({
          orgId: charge.orgId,
          entry: { workspaceId: charge.workspaceId, runId: charge.runId, credits: creditsFor(charge.usage), paidBy: charge.paidBy },
          meta: charge.meta
        })
    }
  })
)

/** Charges one commit carries, over every organization. */
const MAX_CHARGES_PER_COMMIT = 1_000

const chunksOf = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))

/**
 * Meters a finished turn: its credits count against the balance (operator-paid, when metered),
 * the month's assistant spend, the workspace's budget and (organization-paid) the key's day.
 */
export const chargeTurn = (charge: TurnCharge): Effect.Effect<void, HostUnavailable, Charges> =>
  Effect.flatMap(Charges, (charges) => charges.charge(charge))
