/**
 * The agent actor (`agent:<workspaceId>.<slug>`: one workspace agent) as decider specifications:
 * a slug is created once (again after a delete), the built-in `assistant` is never made, changed or
 * deleted, tools are capabilities of the agent surface (each once), an update records only what
 * changed; then the rows its projection writes, and its values through JSON as the log carries them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { AgentActor } from "../../actors/agent/actor.ts"
import { AgentAlreadyExists, AgentBuiltIn, AgentNotFound, UnknownAgentTool } from "../../actors/agent/errors.ts"
import { AgentCreated, AgentDeleted, type AgentEvent, AgentSlug, AgentUpdated } from "../../actors/agent/events.ts"
import { type AgentCommand, CreateAgent, DeleteAgent, UpdateAgent } from "../../actors/agent/protocol.ts"
import { AgentState } from "../../actors/agent/state.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T12:00:00.000Z"
const T1 = "2024-05-01T12:05:00.000Z"
const workspaceId = "wsp_1"
const orgId = "org_1"
const slug = "triage"
const agentTools = ["node.create", "node.list", "system.ping"]
const at = (time: string) => meta({ at: time })

const definition = { name: "Triage", description: "Sorts new tickets", instructions: "Label every ticket by urgency.", tier: null, tools: ["node.list"] }

const create = (overrides: Partial<ConstructorParameters<typeof CreateAgent>[0]> = {}) =>
  new CreateAgent({ workspaceId, orgId, slug, ...definition, agentTools, ...overrides })
const update = (overrides: Omit<Partial<ConstructorParameters<typeof UpdateAgent>[0]>, "workspaceId" | "slug" | "agentTools"> = {}) =>
  new UpdateAgent({ workspaceId, slug, agentTools, ...overrides })

const created = new AgentCreated({ workspaceId, orgId, slug, ...definition, createdAt: T0 })
const deleted = new AgentDeleted({ workspaceId, slug, deletedAt: T0 })

const agents = spec(AgentActor)

type Outcome = ReadonlyArray<AgentEvent> | AgentAlreadyExists | AgentNotFound | AgentBuiltIn | UnknownAgentTool

describe("the agent's decisions", () => {
  const table: ReadonlyArray<readonly [string, ReadonlyArray<AgentEvent>, AgentCommand, Outcome]> = [
    ["a new slug", [], create(), [new AgentCreated({ workspaceId, orgId, slug, ...definition, createdAt: T1 })]],
    ["a slug that is taken", [created], create({ name: "Other" }), new AgentAlreadyExists({ slug })],
    ["a slug freed by a delete", [created, deleted], create({ name: "Again" }), [new AgentCreated({ workspaceId, orgId, slug, ...definition, name: "Again", createdAt: T1 })]],
    ["the built-in assistant's slug", [], create({ slug: "assistant" }), new AgentBuiltIn({ slug: "assistant" })],
    ["a tool that is no agent capability", [], create({ tools: ["node.list", "create_api_key"] }), new UnknownAgentTool({ tool: "create_api_key" })],
    [
      "tools named twice are kept once, in the order first given",
      [],
      create({ tools: ["system.ping", "node.list", "system.ping"] }),
      [new AgentCreated({ workspaceId, orgId, slug, ...definition, tools: ["system.ping", "node.list"], createdAt: T1 })]
    ],
    ["no tools at all", [], create({ tools: [] }), [new AgentCreated({ workspaceId, orgId, slug, ...definition, tools: [], createdAt: T1 })]],
    [
      "a tier",
      [],
      create({ tier: "fast" }),
      [new AgentCreated({ workspaceId, orgId, slug, ...definition, tier: "fast", createdAt: T1 })]
    ],
    [
      "an update records only what changed",
      [created],
      update({ name: "Triage", instructions: "Label by urgency and product.", tier: "precise" }),
      [new AgentUpdated({ workspaceId, slug, instructions: "Label by urgency and product.", tier: "precise", updatedAt: T1 })]
    ],
    ["an update that changes nothing records nothing", [created], update({ name: "Triage", tools: ["node.list", "node.list"] }), []],
    ["skills attached, each once, in the order given", [created], update({ skills: ["tone", "sources", "tone"] }), [
      new AgentUpdated({ workspaceId, slug, skills: ["tone", "sources"], updatedAt: T1 })
    ]],
    ["new tools replace the old", [created], update({ tools: ["node.create"] }), [new AgentUpdated({ workspaceId, slug, tools: ["node.create"], updatedAt: T1 })]],
    ["a null tier returns to the organization's default", [created, new AgentUpdated({ workspaceId, slug, tier: "fast", updatedAt: T0 })], update({ tier: null }), [new AgentUpdated({ workspaceId, slug, tier: null, updatedAt: T1 })]],
    ["an update with an unknown tool", [created], update({ tools: ["node.delete"] }), new UnknownAgentTool({ tool: "node.delete" })],
    ["an update of an agent never created", [], update({ name: "Ghost" }), new AgentNotFound({ slug })],
    ["an update of a deleted agent", [created, deleted], update({ name: "Ghost" }), new AgentNotFound({ slug })],
    ["an update of the built-in assistant", [], new UpdateAgent({ workspaceId, slug: "assistant", agentTools, name: "Mine" }), new AgentBuiltIn({ slug: "assistant" })],
    ["a delete", [created], new DeleteAgent({ workspaceId, slug }), [new AgentDeleted({ workspaceId, slug, deletedAt: T1 })]],
    ["a delete of a deleted agent", [created, deleted], new DeleteAgent({ workspaceId, slug }), new AgentNotFound({ slug })],
    ["a delete of the built-in assistant", [], new DeleteAgent({ workspaceId, slug: "assistant" }), new AgentBuiltIn({ slug: "assistant" })]
  ]
  for (const [name, given, command, outcome] of table) {
    it(name, () => {
      const when = agents.given(given).when(command, at(T1))
      if (Array.isArray(outcome)) when.then(outcome)
      else when.thenThrows(outcome as Exclude<Outcome, ReadonlyArray<AgentEvent>>)
    })
  }
})

describe("slugs", () => {
  const valid = (value: string) => Schema.is(AgentSlug)(value)
  it.each(["triage", "a", "sales-2", "x".repeat(63)])("%s is a slug", (value) => expect(valid(value)).toBe(true))
  it.each(["", "Triage", "-triage", "triage-", "tri--age", "tri_age", "tri.age", "x".repeat(64)])("%j is not", (value) => expect(valid(value)).toBe(false))
})

describe("the agents read model", () => {
  const key = `agent:${workspaceId}.${slug}`
  it("holds the live agent with its version, and nothing once it is deleted", () => {
    const updated = new AgentUpdated({ workspaceId, slug, tools: ["node.list", "system.ping"], updatedAt: T1 })
    expect(projectedRows(AgentActor, key, [[created, T0], [updated, T1]])).toEqual({
      agents: [
        {
          workspace_id: workspaceId,
          slug,
          org_id: orgId,
          name: "Triage",
          description: "Sorts new tickets",
          instructions: "Label every ticket by urgency.",
          tier: null,
          tools: ["node.list", "system.ping"],
          skills: [],
          version: 2,
          created_at: T0,
          updated_at: T1
        }
      ]
    })
    expect(projectedRows(AgentActor, key, [[created, T0], [updated, T1], [new AgentDeleted({ workspaceId, slug, deletedAt: T1 }), T1]])).toEqual({ agents: [] })
  })

  it.effect("state, events and commands survive JSON as the log and the reply channel carry them", () =>
    Effect.gen(function* () {
      const state = AgentActor.evolve(AgentActor.initialState, created)
      expect(yield* jsonRoundTrip(AgentState, state)).toEqual(state)
      const partial = new AgentUpdated({ workspaceId, slug, tier: null, updatedAt: T1 })
      expect(yield* jsonRoundTrip(AgentActor.events, partial)).toEqual(partial)
      expect(yield* jsonRoundTrip(AgentActor.commands, update({ tier: null }))).toEqual(update({ tier: null }))
    })
  )
})
