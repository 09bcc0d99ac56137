/**
 * The key budget actor (`keybudget:<aky_ id>`, an API key's turns across the cluster) as decider
 * specifications: slices handed out of a window's budget, the last one cut to what is left, a
 * refusal naming the window's end once it is all handed out, and a new window after it ends; then
 * the state the evolver keeps.
 */
import { describe, expect, it } from "@effect/vitest"
import { KeyBudgetActor } from "../../actors/keybudget/actor.ts"
import { BudgetSpent } from "../../actors/keybudget/errors.ts"
import { SliceTaken } from "../../actors/keybudget/events.ts"
import { type BudgetPolicy, TakeSlice } from "../../actors/keybudget/protocol.ts"
import { meta, spec } from "../support/decider.ts"

const policy: BudgetPolicy = { perWindow: 250, windowMs: 60_000, slice: 100 }
const take = new TakeSlice({ policy })

const T0 = "2024-05-01T12:00:00.000Z"
const plus = (time: string, ms: number) => new Date(Date.parse(time) + ms).toISOString()
const END = plus(T0, 60_000)
const at = (time: string) => meta({ at: time, actor: "key:aky_1" })

const slice = (tokens: number, granted: number, start = T0, end = END) => new SliceTaken({ windowStart: start, windowEnd: end, tokens, granted })

const budget = spec(KeyBudgetActor)

describe("slices of a window", () => {
  it("a first slice opens a window of the policy's length at the command's time", () =>
    budget.given([]).when(take, at(T0)).then([slice(100, 100)]))

  it("a later slice in the window counts on from what is handed out", () =>
    budget.given([slice(100, 100)]).when(take, at(plus(T0, 1_000))).then([slice(100, 200)]))

  it("the last slice is cut to what the window has left", () =>
    budget.given([slice(100, 100), slice(100, 200)]).when(take, at(plus(T0, 2_000))).then([slice(50, 250)]))

  it("a budget smaller than a slice is handed out whole", () =>
    budget.given([]).when(new TakeSlice({ policy: { ...policy, perWindow: 3 } }), at(T0)).then([slice(3, 3)]))
})

describe("a spent window", () => {
  const spent = [slice(100, 100), slice(100, 200), slice(50, 250)]

  it("refuses until the window's end", () =>
    budget.given(spent).when(take, at(plus(T0, 59_999))).thenThrows(new BudgetSpent({ windowEnd: END })))

  it("refuses while a lowered budget is under what the window handed out", () =>
    budget.given([slice(100, 100)]).when(new TakeSlice({ policy: { ...policy, perWindow: 80 } }), at(plus(T0, 1_000))).thenThrows(new BudgetSpent({ windowEnd: END })))

  it("opens a new window at its end, counting from nothing", () =>
    budget.given(spent).when(take, at(END)).then([slice(100, 100, END, plus(END, 60_000))]))

  it("opens a new window at the first slice after a quiet spell, not at the old window's end", () => {
    const later = plus(T0, 3_600_000)
    return budget.given(spent).when(take, at(later)).then([slice(100, 100, later, plus(later, 60_000))])
  })
})

describe("evolve", () => {
  it("keeps the window of the last slice and the count handed out in it", () => {
    const state = [slice(100, 100), slice(100, 200), slice(100, 100, END, plus(END, 60_000))].reduce(KeyBudgetActor.evolve, KeyBudgetActor.initialState)
    expect(state).toEqual({ windowStart: END, windowEnd: plus(END, 60_000), granted: 100 })
  })

  it("starts with no window and nothing handed out", () => {
    expect(KeyBudgetActor.initialState).toEqual({ windowStart: null, windowEnd: null, granted: 0 })
  })
})
