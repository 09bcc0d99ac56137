/**
 * The skill actor (`skill:<workspaceId>.<slug>`: one workspace skill) as decider specifications: a
 * slug is created once (again after a delete, at version 1), an update records only what changed
 * and is one version more; then the rows its projection writes, and its values through JSON.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SkillActor } from "../../actors/skill/actor.ts"
import { SkillAlreadyExists, SkillNotFound } from "../../actors/skill/errors.ts"
import { SkillCreated, SkillDeleted, type SkillEvent, SkillUpdated } from "../../actors/skill/events.ts"
import { CreateSkill, DeleteSkill, type SkillCommand, UpdateSkill } from "../../actors/skill/protocol.ts"
import { SkillState } from "../../actors/skill/state.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T12:00:00.000Z"
const T1 = "2024-05-01T12:05:00.000Z"
const workspaceId = "wsp_1"
const orgId = "org_1"
const slug = "tone"
const definition = { name: "Tone", description: "How we write", instructions: "Answer in plain words." }

const created = new SkillCreated({ workspaceId, orgId, slug, ...definition, createdAt: T0 })
const deleted = new SkillDeleted({ workspaceId, slug, deletedAt: T0 })
const update = (changes: Partial<typeof definition>) => new UpdateSkill({ workspaceId, slug, ...changes })

const skills = spec(SkillActor)
type Outcome = ReadonlyArray<SkillEvent> | SkillAlreadyExists | SkillNotFound

describe("the skill's decisions", () => {
  const table: ReadonlyArray<readonly [string, ReadonlyArray<SkillEvent>, SkillCommand, Outcome]> = [
    ["a new slug", [], new CreateSkill({ workspaceId, orgId, slug, ...definition }), [new SkillCreated({ workspaceId, orgId, slug, ...definition, createdAt: T1 })]],
    ["a slug that is taken", [created], new CreateSkill({ workspaceId, orgId, slug, ...definition }), new SkillAlreadyExists({ slug })],
    ["a slug freed by a delete", [created, deleted], new CreateSkill({ workspaceId, orgId, slug, ...definition, name: "Again" }), [
      new SkillCreated({ workspaceId, orgId, slug, ...definition, name: "Again", createdAt: T1 })
    ]],
    ["an update records only what changed", [created], update({ name: "Tone", instructions: "Answer in short sentences." }), [
      new SkillUpdated({ workspaceId, slug, instructions: "Answer in short sentences.", updatedAt: T1 })
    ]],
    ["an update that changes nothing records nothing", [created], update({ name: "Tone", description: "How we write" }), []],
    ["an update of a skill never created", [], update({ name: "Ghost" }), new SkillNotFound({ slug })],
    ["an update of a deleted skill", [created, deleted], update({ name: "Ghost" }), new SkillNotFound({ slug })],
    ["a delete", [created], new DeleteSkill({ workspaceId, slug }), [new SkillDeleted({ workspaceId, slug, deletedAt: T1 })]],
    ["a delete of a deleted skill", [created, deleted], new DeleteSkill({ workspaceId, slug }), new SkillNotFound({ slug })]
  ]
  for (const [name, given, command, outcome] of table) {
    it(name, () => {
      const when = skills.given(given).when(command, meta({ at: T1 }))
      if (Array.isArray(outcome)) when.then(outcome)
      else when.thenThrows(outcome as Exclude<Outcome, ReadonlyArray<SkillEvent>>)
    })
  }
})

describe("versions", () => {
  it("start at 1, and each update that changed something is one more; a re-created skill starts again", () => {
    const edits = [created, new SkillUpdated({ workspaceId, slug, name: "Voice", updatedAt: T1 }), new SkillUpdated({ workspaceId, slug, instructions: "Be brief.", updatedAt: T1 })]
    expect(edits.reduce(SkillActor.evolve, SkillActor.initialState)).toMatchObject({ version: 3, name: "Voice", instructions: "Be brief.", createdAt: T0, updatedAt: T1 })
    expect([...edits, deleted, created].reduce(SkillActor.evolve, SkillActor.initialState)).toMatchObject({ version: 1, name: "Tone" })
  })
})

describe("the skills read model", () => {
  const key = `skill:${workspaceId}.${slug}`
  it("holds the live skill at its current version, and nothing once it is deleted", () => {
    const updated = new SkillUpdated({ workspaceId, slug, instructions: "Be brief.", updatedAt: T1 })
    expect(projectedRows(SkillActor, key, [[created, T0], [updated, T1]])).toEqual({
      skills: [{ workspace_id: workspaceId, slug, org_id: orgId, ...definition, instructions: "Be brief.", version: 2, created_at: T0, updated_at: T1 }]
    })
    expect(projectedRows(SkillActor, key, [[created, T0], [updated, T1], [deleted, T1]])).toEqual({ skills: [] })
  })

  it.effect("state, events and commands survive JSON as the log and the reply channel carry them", () =>
    Effect.gen(function* () {
      const state = SkillActor.evolve(SkillActor.initialState, created)
      expect(yield* jsonRoundTrip(SkillState, state)).toEqual(state)
      const partial = new SkillUpdated({ workspaceId, slug, name: "Voice", updatedAt: T1 })
      expect(yield* jsonRoundTrip(SkillActor.events, partial)).toEqual(partial)
      expect(yield* jsonRoundTrip(SkillActor.commands, update({ description: "" }))).toEqual(update({ description: "" }))
    }))
})
