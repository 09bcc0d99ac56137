/**
 * The billing actor (`billing:<orgId>`) as decider specifications: grants turn metering on,
 * suspension, caps and budgets change only when they change, and metering: operator-paid turns
 * spend credits (below zero if need be), every turn counts toward the month and its workspace,
 * organization-paid turns toward the key's day; months and days roll over by the command's time,
 * and a run is charged once. Then the rows its projection writes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BillingActor } from "../../actors/billing/actor.ts"
import { CreditsLimitExceeded, MAX_BALANCE } from "../../actors/billing/errors.ts"
import { type BillingEvent, CapsSet, CreditsGranted, SuspensionSet, TurnCharged, WorkspaceBudgetSet } from "../../actors/billing/events.ts"
import { ChargeTurns, GrantCredits, SetBillingSuspended, SetSpendCaps, SetWorkspaceBudget, TurnChargeEntry } from "../../actors/billing/protocol.ts"
import { BillingState, CHARGED_RUNS_KEPT, dayOf, monthOf } from "../../actors/billing/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const orgId = "org_1"
const ws = "wsp_1"
const other = "wsp_2"

const MAY_1 = "2024-05-01T12:00:00.000Z"
const MAY_1_LATE = "2024-05-01T23:59:59.999Z"
const MAY_2 = "2024-05-02T00:00:00.000Z"
const JUNE_1 = "2024-06-01T00:00:00.000Z"
const APRIL_30 = "2024-04-30T23:59:59.000Z"

const at = (time: string) => meta({ at: time })
const billing = spec(BillingActor)

const granted = (amount: number, balance: number, time = MAY_1) => new CreditsGranted({ orgId, amount, balance, grantedAt: time })

/** A charge event with everything it moved; fields not named are those of a first charge on MAY_1. */
const charged = (fields: Partial<ConstructorParameters<typeof TurnCharged>[0]>) =>
  new TurnCharged({
    orgId,
    workspaceId: ws,
    runId: "tse_1",
    credits: 100,
    paidBy: "operator",
    balance: null,
    month: "2024-05",
    assistantSpent: 100,
    workspaceSpent: 100,
    day: "2024-05-01",
    modelKeySpent: 0,
    chargedAt: MAY_1,
    ...fields
  })

type Entry = typeof TurnChargeEntry.Type

const entry = (fields: Partial<Entry> = {}): Entry => ({ workspaceId: ws, runId: "tse_1", credits: 100, paidBy: "operator", ...fields })

/** One turn's charge. */
const charge = (fields: Partial<Entry> = {}) => new ChargeTurns({ orgId, charges: [entry(fields)] })

describe("periods", () => {
  it("are UTC months and days", () => {
    expect(monthOf("2024-05-31T23:59:59.999Z")).toBe("2024-05")
    expect(monthOf("2024-06-01T01:00:00+02:00")).toBe("2024-05")
    expect(dayOf("2024-06-01T01:00:00+02:00")).toBe("2024-05-31")
  })
})

describe("credits", () => {
  it("a first grant turns metering on, counted from 0", () =>
    billing.given([]).when(new GrantCredits({ orgId, amount: 500 }), at(MAY_1)).then([granted(500, 500)]))

  it("a later grant adds to the balance, even one below zero", () =>
    billing
      .given([granted(500, 500), charged({ balance: -100, credits: 600, assistantSpent: 600, workspaceSpent: 600 })])
      .when(new GrantCredits({ orgId, amount: 300 }), at(MAY_2))
      .then([granted(300, 200, MAY_2)]))

  it("a grant may take the balance up to the limit kept exactly, not past it", () => {
    billing.given([granted(500, 500)]).when(new GrantCredits({ orgId, amount: MAX_BALANCE - 500 }), at(MAY_1)).then([granted(MAX_BALANCE - 500, MAX_BALANCE)])
    billing
      .given([granted(500, 500)])
      .when(new GrantCredits({ orgId, amount: MAX_BALANCE - 499 }), at(MAY_1))
      .thenThrows(new CreditsLimitExceeded({ orgId, balance: 500, amount: MAX_BALANCE - 499 }))
  })
})

describe("suspension", () => {
  const suspended = new SuspensionSet({ orgId, suspended: true, setAt: MAY_1 })
  const table: ReadonlyArray<readonly [string, ReadonlyArray<BillingEvent>, boolean, ReadonlyArray<BillingEvent>]> = [
    ["suspends an active organization", [], true, [suspended]],
    ["suspending twice records one suspension", [suspended], true, []],
    ["resumes a suspended organization", [suspended], false, [new SuspensionSet({ orgId, suspended: false, setAt: MAY_1 })]],
    ["resuming an active organization: nothing", [], false, []]
  ]
  for (const [name, given, value, outcome] of table) {
    it(name, () => billing.given(given).when(new SetBillingSuspended({ orgId, suspended: value }), at(MAY_1)).then(outcome))
  }
})

describe("caps and budgets", () => {
  const caps = new CapsSet({ orgId, assistantMonthlyCap: 1000, modelKeyDailyLimit: 50, setAt: MAY_1 })
  const table: ReadonlyArray<readonly [string, ReadonlyArray<BillingEvent>, SetSpendCaps, ReadonlyArray<BillingEvent>]> = [
    ["sets both caps", [], new SetSpendCaps({ orgId, assistantMonthlyCap: 1000, modelKeyDailyLimit: 50 }), [caps]],
    [
      "a cap left out keeps its value",
      [caps],
      new SetSpendCaps({ orgId, modelKeyDailyLimit: 80 }),
      [new CapsSet({ orgId, assistantMonthlyCap: 1000, modelKeyDailyLimit: 80, setAt: MAY_1 })]
    ],
    [
      "null removes a cap",
      [caps],
      new SetSpendCaps({ orgId, assistantMonthlyCap: null }),
      [new CapsSet({ orgId, assistantMonthlyCap: null, modelKeyDailyLimit: 50, setAt: MAY_1 })]
    ],
    ["the same caps again: nothing", [caps], new SetSpendCaps({ orgId, assistantMonthlyCap: 1000, modelKeyDailyLimit: 50 }), []],
    ["no caps given: nothing", [caps], new SetSpendCaps({ orgId }), []]
  ]
  for (const [name, given, command, outcome] of table) {
    it(name, () => billing.given(given).when(command, at(MAY_1)).then(outcome))
  }

  const budget = new WorkspaceBudgetSet({ orgId, workspaceId: ws, monthlyBudget: 300, setAt: MAY_1 })
  it("sets a workspace's budget", () =>
    billing.given([]).when(new SetWorkspaceBudget({ orgId, workspaceId: ws, monthlyBudget: 300 }), at(MAY_1)).then([budget]))
  it("the same budget again: nothing", () =>
    billing.given([budget]).when(new SetWorkspaceBudget({ orgId, workspaceId: ws, monthlyBudget: 300 }), at(MAY_1)).thenNothingHappened())
  it("no budget for a workspace that has none: nothing", () =>
    billing.given([]).when(new SetWorkspaceBudget({ orgId, workspaceId: ws, monthlyBudget: null }), at(MAY_1)).thenNothingHappened())
  it("a budget set after charges keeps the month's spend", () => {
    const state = [charged({}), new WorkspaceBudgetSet({ orgId, workspaceId: ws, monthlyBudget: 50, setAt: MAY_1 })].reduce(
      BillingActor.evolve,
      BillingActor.initialState
    )
    expect(state.workspaces[ws]).toEqual({ monthlyBudget: 50, spent: 100, month: "2024-05" })
  })
})

describe("metering", () => {
  const table: ReadonlyArray<readonly [string, ReadonlyArray<BillingEvent>, ChargeTurns, string, ReadonlyArray<BillingEvent>]> = [
    ["unmetered: the balance stays null, the month and workspace count", [], charge(), MAY_1, [charged({})]],
    ["metered, operator pays: credits go down", [granted(500, 500)], charge(), MAY_1, [charged({ balance: 400 })]],
    [
      "metered, operator pays more than is left: below zero",
      [granted(50, 50)],
      charge(),
      MAY_1,
      [charged({ balance: -50 })]
    ],
    [
      "metered, organization pays: credits stay, the key's day counts",
      [granted(500, 500)],
      charge({ paidBy: "organization" }),
      MAY_1,
      [charged({ paidBy: "organization", balance: 500, modelKeySpent: 100 })]
    ],
    [
      "a second turn the same day adds up, per workspace",
      [charged({ paidBy: "organization", modelKeySpent: 100 })],
      charge({ runId: "tse_2", workspaceId: other, paidBy: "organization", credits: 30 }),
      MAY_1_LATE,
      [
        charged({
          runId: "tse_2",
          workspaceId: other,
          paidBy: "organization",
          credits: 30,
          assistantSpent: 130,
          workspaceSpent: 30,
          modelKeySpent: 130,
          chargedAt: MAY_1_LATE
        })
      ]
    ],
    [
      "the next day: the key's day starts over, the month goes on",
      [charged({ paidBy: "organization", modelKeySpent: 100 })],
      charge({ runId: "tse_2", paidBy: "organization", credits: 30 }),
      MAY_2,
      [
        charged({
          runId: "tse_2",
          paidBy: "organization",
          credits: 30,
          assistantSpent: 130,
          workspaceSpent: 130,
          day: "2024-05-02",
          modelKeySpent: 30,
          chargedAt: MAY_2
        })
      ]
    ],
    [
      "an operator-paid turn the next day leaves the key's new day at zero",
      [charged({ paidBy: "organization", modelKeySpent: 100 })],
      charge({ runId: "tse_2", credits: 30 }),
      MAY_2,
      [charged({ runId: "tse_2", credits: 30, assistantSpent: 130, workspaceSpent: 130, day: "2024-05-02", modelKeySpent: 0, chargedAt: MAY_2 })]
    ],
    [
      "the next month: the month's and the workspace's spend start over",
      [charged({ paidBy: "organization", modelKeySpent: 100 })],
      charge({ runId: "tse_2", credits: 30 }),
      JUNE_1,
      [charged({ runId: "tse_2", credits: 30, month: "2024-06", assistantSpent: 30, workspaceSpent: 30, day: "2024-06-01", modelKeySpent: 0, chargedAt: JUNE_1 })]
    ],
    [
      "a workspace last charged in an earlier month starts over even when the organization does not",
      [charged({ chargedAt: APRIL_30, month: "2024-04", day: "2024-04-30" }), charged({ runId: "tse_2", workspaceId: other, chargedAt: MAY_1 })],
      charge({ runId: "tse_3", credits: 10 }),
      MAY_1_LATE,
      [charged({ runId: "tse_3", credits: 10, assistantSpent: 110, workspaceSpent: 10, chargedAt: MAY_1_LATE })]
    ],
    [
      "a lagging clock at the turn of the month does not reset the new month",
      [charged({ credits: 30, assistantSpent: 30, workspaceSpent: 30, month: "2024-06", day: "2024-06-01", chargedAt: JUNE_1 })],
      charge({ runId: "tse_2", credits: 5 }),
      "2024-05-31T23:59:59.000Z",
      [charged({ runId: "tse_2", credits: 5, assistantSpent: 35, workspaceSpent: 35, month: "2024-06", day: "2024-06-01", chargedAt: "2024-05-31T23:59:59.000Z" })]
    ],
    ["a retried charge of the same run: nothing", [granted(500, 500), charged({ balance: 400 })], charge(), MAY_2, []],
    [
      "one command for several turns: each charge sees the ones before it, a run named twice is charged once",
      [granted(500, 500)],
      new ChargeTurns({ orgId, charges: [entry(), entry({ runId: "tse_2", workspaceId: other, credits: 30 }), entry()] }),
      MAY_1,
      [charged({ balance: 400 }), charged({ runId: "tse_2", workspaceId: other, credits: 30, balance: 370, assistantSpent: 130, workspaceSpent: 30 })]
    ]
  ]
  for (const [name, given, command, time, outcome] of table) {
    it(name, () => billing.given(given).when(command, at(time)).then(outcome))
  }

  it("remembers the last runs charged, and only those", () => {
    const runs = Array.from({ length: CHARGED_RUNS_KEPT + 1 }, (_, i) => `tse_${i}`)
    const state = runs.map((runId) => charged({ runId })).reduce(BillingActor.evolve, BillingActor.initialState)
    expect(state.chargedRuns).toHaveLength(CHARGED_RUNS_KEPT)
    expect(state.chargedRuns[CHARGED_RUNS_KEPT - 1]).toBe(runs[CHARGED_RUNS_KEPT])
    const history = runs.map((runId) => charged({ runId }))
    billing.given(history).when(charge({ runId: runs[CHARGED_RUNS_KEPT] }), at(MAY_1)).thenNothingHappened()
  })

  it.effect("the state survives the trip through JSON (the actor_state read model)", () =>
    Effect.gen(function* () {
      const state = [granted(500, 500), charged({ balance: 400 }), new WorkspaceBudgetSet({ orgId, workspaceId: other, monthlyBudget: 7, setAt: MAY_1 })].reduce(
        BillingActor.evolve,
        BillingActor.initialState
      )
      expect(yield* jsonRoundTrip(BillingState, state)).toEqual(state)
    })
  )
})

describe("projection into billing_accounts and workspace_budgets", () => {
  const key = keyOf(BillingActor, orgId)
  const account = {
    org_id: orgId,
    credits: null,
    suspended: false,
    assistant_monthly_cap: null,
    assistant_month: null,
    assistant_spent: 0,
    model_key_daily_limit: null,
    model_key_day: null,
    model_key_spent: 0
  }

  it("a grant: one account row, no workspace", () =>
    expect(projectedRows(BillingActor, key, [[granted(500, 500), MAY_1]])).toEqual({
      billing_accounts: [{ ...account, credits: 500, updated_at: MAY_1 }]
    }))

  it("caps, a budget and charges: the account after all of them, each workspace's month", () =>
    expect(
      projectedRows(BillingActor, key, [
        [granted(500, 500), MAY_1],
        [new CapsSet({ orgId, assistantMonthlyCap: 1000, modelKeyDailyLimit: 50, setAt: MAY_1 }), MAY_1],
        [new WorkspaceBudgetSet({ orgId, workspaceId: other, monthlyBudget: 7, setAt: MAY_1 }), MAY_1],
        [charged({ balance: 400 }), MAY_1],
        [charged({ runId: "tse_2", paidBy: "organization", credits: 20, balance: 400, assistantSpent: 120, workspaceSpent: 120, modelKeySpent: 20, chargedAt: MAY_2, day: "2024-05-02" }), MAY_2],
        [new SuspensionSet({ orgId, suspended: true, setAt: MAY_2 }), MAY_2]
      ])
    ).toEqual({
      billing_accounts: [
        {
          ...account,
          credits: 400,
          suspended: true,
          assistant_monthly_cap: 1000,
          assistant_month: "2024-05",
          assistant_spent: 120,
          model_key_daily_limit: 50,
          model_key_day: "2024-05-02",
          model_key_spent: 20,
          updated_at: MAY_2
        }
      ],
      workspace_budgets: [
        { workspace_id: ws, org_id: orgId, monthly_budget: null, month: "2024-05", spent: 120, updated_at: MAY_2 },
        { workspace_id: other, org_id: orgId, monthly_budget: 7, month: null, spent: 0, updated_at: MAY_1 }
      ]
    }))
})
