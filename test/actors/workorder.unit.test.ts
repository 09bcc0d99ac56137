/**
 * The work order actor (`workorder:<workOrderId>`) as decider specifications: created by an Owner
 * or workspace Admin, claimed once by one machine of its workspace; then the row it projects.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { keyOf } from "../../actors/kernel.ts"
import { WorkOrderActor } from "../../actors/workorder/actor.ts"
import { WorkOrderAlreadyClaimed, WorkOrderExists, WorkOrderNotFound } from "../../actors/workorder/errors.ts"
import { WorkOrderClaimed, WorkOrderCreated } from "../../actors/workorder/events.ts"
import { ClaimWorkOrder, CreateWorkOrder } from "../../actors/workorder/protocol.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = meta().at
const T1 = "2024-05-01T13:00:00.000Z"
const place = { workOrderId: "wko_1", orgId: "org_1", workspaceId: "wsp_1" }
const created = new WorkOrderCreated({ ...place, title: "Rebuild the cache", detail: null, at: T0 })
const claim = (machineId: string, claimId = "woc_1") => new ClaimWorkOrder({ ...place, machineId, claimId })
const claimed = new WorkOrderClaimed({ workOrderId: "wko_1", claimId: "woc_1", machineId: "build-01", at: T1 })

const workOrder = spec(WorkOrderActor)

describe("work orders", () => {
  it("is created once", () => {
    workOrder.given([]).when(new CreateWorkOrder({ ...place, title: "Rebuild the cache", detail: null })).then([created])
    workOrder.given([created]).when(new CreateWorkOrder({ ...place, title: "again", detail: null })).thenThrows(new WorkOrderExists({ workOrderId: "wko_1" }))
  })

  it("goes to the first machine that claims it", () => workOrder.given([created]).when(claim("build-01"), meta({ at: T1 })).then([claimed]))

  it("stays with it: the same machine claiming again changes nothing, another is refused", () => {
    workOrder.given([created, claimed]).when(claim("build-01", "woc_2")).thenNothingHappened()
    workOrder.given([created, claimed]).when(claim("build-02", "woc_2")).thenThrows(new WorkOrderAlreadyClaimed({ workOrderId: "wko_1" }))
  })

  it.each([
    ["never created", [], place],
    ["of another workspace", [created], { ...place, workspaceId: "wsp_2" }],
    ["of another organization", [created], { ...place, orgId: "org_2" }]
  ] as const)("is not found by a machine when %s", (_, history, where) =>
    workOrder.given(history).when(new ClaimWorkOrder({ ...where, machineId: "build-01", claimId: "woc_1" })).thenThrows(new WorkOrderNotFound({ workOrderId: "wko_1" })))

  it("projects one work_orders row with its claim", () => {
    const rows = projectedRows(WorkOrderActor, keyOf(WorkOrderActor, "wko_1"), [[created, T0], [claimed, T1]])
    expect(rows.work_orders).toEqual([
      { work_order_id: "wko_1", org_id: "org_1", workspace_id: "wsp_1", title: "Rebuild the cache", detail: null, created_at: T0, claim_id: "woc_1", claimed_by: "build-01", claimed_at: T1 }
    ])
  })

  it.effect("round-trips events, commands, state and errors through JSON", () =>
    Effect.gen(function* () {
      for (const event of [created, claimed]) expect(yield* jsonRoundTrip(WorkOrderActor.events, event)).toEqual(event)
      expect(yield* jsonRoundTrip(WorkOrderActor.commands, claim("build-01"))).toEqual(claim("build-01"))
      const state = [created, claimed].reduce(WorkOrderActor.evolve, WorkOrderActor.initialState)
      expect(yield* jsonRoundTrip(WorkOrderActor.state, state)).toEqual(state)
      const error = new WorkOrderAlreadyClaimed({ workOrderId: "wko_1" })
      expect(yield* jsonRoundTrip(WorkOrderActor.errors, error)).toEqual(error)
    }))
})
