/**
 * The fleet actor (`fleet:<workspaceId>`) as decider specifications: the policy bundle an Owner or
 * workspace Admin sets for the workspace's machines, versioned, and the repositories its machines
 * may get Git credentials for; then the rows its projection writes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FleetActor } from "../../actors/fleet/actor.ts"
import { PolicyVersionMismatch } from "../../actors/fleet/errors.ts"
import { PolicySet, RepositoryRegistered, RepositoryRemoved } from "../../actors/fleet/events.ts"
import { RegisterRepository, RemoveRepository, SetPolicy } from "../../actors/fleet/protocol.ts"
import { keyOf } from "../../actors/kernel.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = meta().at
const place = { orgId: "org_1", workspaceId: "wsp_1" }
const rules = [{ id: "no-egress", effect: "deny" as const, action: "network.egress", resource: "*" }]
const v1 = new PolicySet({ ...place, version: 1, rules, at: T0 })
const repo = "https://git.example.com/acme/app.git"
const registered = new RepositoryRegistered({ ...place, repository: repo, at: T0 })
const removed = new RepositoryRemoved({ ...place, repository: repo, at: T0 })

const fleet = spec(FleetActor)

describe("policy bundle", () => {
  it("sets version 1 first", () => fleet.given([]).when(new SetPolicy({ ...place, rules, expectedVersion: null })).then([v1]))

  it("sets the next version over the last, with or without the version the caller expects", () => {
    fleet.given([v1]).when(new SetPolicy({ ...place, rules: [], expectedVersion: null })).then([new PolicySet({ ...place, version: 2, rules: [], at: T0 })])
    fleet.given([v1]).when(new SetPolicy({ ...place, rules: [], expectedVersion: 1 })).then([new PolicySet({ ...place, version: 2, rules: [], at: T0 })])
  })

  it("refuses a caller who expects another version than the current one", () =>
    fleet.given([v1]).when(new SetPolicy({ ...place, rules: [], expectedVersion: 0 })).thenThrows(new PolicyVersionMismatch({ expectedVersion: 0, currentVersion: 1 })))
})

describe("repositories", () => {
  it("registers a repository once", () => {
    fleet.given([]).when(new RegisterRepository({ ...place, repository: repo })).then([registered])
    fleet.given([registered]).when(new RegisterRepository({ ...place, repository: repo })).thenNothingHappened()
  })

  it("removes a registered repository, and one not registered changes nothing", () => {
    fleet.given([registered]).when(new RemoveRepository({ ...place, repository: repo })).then([removed])
    fleet.given([registered, removed]).when(new RemoveRepository({ ...place, repository: repo })).thenNothingHappened()
    fleet.given([registered, removed]).when(new RegisterRepository({ ...place, repository: repo })).then([registered])
  })
})

describe("projection", () => {
  it("keeps the current bundle per workspace and one row per repository", () => {
    const v2 = new PolicySet({ ...place, version: 2, rules: [], at: "2024-05-01T13:00:00.000Z" })
    const rows = projectedRows(FleetActor, keyOf(FleetActor, "wsp_1"), [[v1, T0], [v2, v2.at], [registered, T0]])
    expect(rows.machine_policies).toEqual([{ workspace_id: "wsp_1", org_id: "org_1", version: 2, rules: [], set_by: expect.any(String), set_at: v2.at }])
    expect(rows.workspace_repositories).toEqual([
      { workspace_id: "wsp_1", org_id: "org_1", repository: repo, registered_by: expect.any(String), registered_at: T0 }
    ])
  })

  it("deletes a removed repository's row", () => {
    const rows = projectedRows(FleetActor, keyOf(FleetActor, "wsp_1"), [[registered, T0], [removed, T0]])
    expect(rows.workspace_repositories ?? []).toEqual([])
  })

  it.effect("round-trips events, commands, state and errors through JSON", () =>
    Effect.gen(function* () {
      for (const event of [v1, registered]) expect(yield* jsonRoundTrip(FleetActor.events, event)).toEqual(event)
      const command = new SetPolicy({ ...place, rules, expectedVersion: 3 })
      expect(yield* jsonRoundTrip(FleetActor.commands, command)).toEqual(command)
      const state = [v1, registered].reduce(FleetActor.evolve, FleetActor.initialState)
      expect(yield* jsonRoundTrip(FleetActor.state, state)).toEqual(state)
      const error = new PolicyVersionMismatch({ expectedVersion: 0, currentVersion: 1 })
      expect(yield* jsonRoundTrip(FleetActor.errors, error)).toEqual(error)
    }))
})
