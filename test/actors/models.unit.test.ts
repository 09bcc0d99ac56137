/**
 * The models actor (`models:<orgId>`: an organization's model tiers, default tier and keys) as
 * decider specifications: only what differs is recorded, archiving and restoring, the default tier
 * (never an archived one), keys set and cleared; then the rows its projection writes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ModelsActor } from "../../actors/models/actor.ts"
import { ModelTierArchived } from "../../actors/models/errors.ts"
import { DefaultTierSet, ModelKeyCleared, ModelKeySet, type ModelsEvent, TierArchived, TierRestored, TierSet } from "../../actors/models/events.ts"
import { ClearModelKey, SetModelKey, SetModelTier } from "../../actors/models/protocol.ts"
import { ModelsState } from "../../actors/models/state.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T12:00:00.000Z"
const T1 = "2024-05-01T12:05:00.000Z"
const orgId = "org_1"
const at = (time: string) => meta({ at: time })

const tier = (overrides: Partial<ConstructorParameters<typeof SetModelTier>[0]> = {}) =>
  new SetModelTier({ orgId, slug: "smart", model: "openai:gpt-5-mini", sharedKey: false, archived: false, makeDefault: null, ...overrides })

const smartSet = new TierSet({ orgId, slug: "smart", model: "openai:gpt-5-mini", sharedKey: false, setAt: T0 })
const smartArchived = new TierArchived({ orgId, slug: "smart", archivedAt: T0 })
const smartDefault = new DefaultTierSet({ orgId, slug: "smart", setAt: T0 })
const cheapSet = new TierSet({ orgId, slug: "cheap", model: "offline:fast", sharedKey: true, setAt: T0 })
const cheapDefault = new DefaultTierSet({ orgId, slug: "cheap", setAt: T0 })

const models = spec(ModelsActor)

describe("tiers", () => {
  const table: ReadonlyArray<readonly [string, ReadonlyArray<ModelsEvent>, SetModelTier, ReadonlyArray<ModelsEvent> | ModelTierArchived]> = [
    ["a new tier", [], tier(), [new TierSet({ orgId, slug: "smart", model: "openai:gpt-5-mini", sharedKey: false, setAt: T1 })]],
    ["a new tier with no model yet", [], tier({ model: null }), [new TierSet({ orgId, slug: "smart", model: null, sharedKey: false, setAt: T1 })]],
    ["the same definition again: nothing", [smartSet], tier(), []],
    ["another model", [smartSet], tier({ model: "anthropic:claude-opus-4-5" }), [new TierSet({ orgId, slug: "smart", model: "anthropic:claude-opus-4-5", sharedKey: false, setAt: T1 })]],
    ["the operator's key pays instead", [smartSet], tier({ sharedKey: true }), [new TierSet({ orgId, slug: "smart", model: "openai:gpt-5-mini", sharedKey: true, setAt: T1 })]],
    ["archived", [smartSet], tier({ archived: true }), [new TierArchived({ orgId, slug: "smart", archivedAt: T1 })]],
    [
      "a new tier, archived at once",
      [],
      tier({ archived: true }),
      [new TierSet({ orgId, slug: "smart", model: "openai:gpt-5-mini", sharedKey: false, setAt: T1 }), new TierArchived({ orgId, slug: "smart", archivedAt: T1 })]
    ],
    ["archived again: nothing", [smartSet, smartArchived], tier({ archived: true }), []],
    ["set again without archived: restored", [smartSet, smartArchived], tier(), [new TierRestored({ orgId, slug: "smart", restoredAt: T1 })]],
    [
      "redefined while archived: stays archived",
      [smartSet, smartArchived],
      tier({ model: "openai:o3", archived: true }),
      [new TierSet({ orgId, slug: "smart", model: "openai:o3", sharedKey: false, setAt: T1 })]
    ]
  ]
  for (const [name, given, command, outcome] of table) {
    it(name, () => {
      const when = models.given(given).when(command, at(T1))
      if (Array.isArray(outcome)) when.then(outcome)
      else when.thenThrows(outcome as ModelTierArchived)
    })
  }
})

describe("default tier", () => {
  const table: ReadonlyArray<readonly [string, ReadonlyArray<ModelsEvent>, SetModelTier, ReadonlyArray<ModelsEvent> | ModelTierArchived]> = [
    [
      "a new tier made the default",
      [],
      tier({ makeDefault: true }),
      [new TierSet({ orgId, slug: "smart", model: "openai:gpt-5-mini", sharedKey: false, setAt: T1 }), new DefaultTierSet({ orgId, slug: "smart", setAt: T1 })]
    ],
    ["already the default: nothing", [smartSet, smartDefault], tier({ makeDefault: true }), []],
    ["another tier takes over", [smartSet, smartDefault, cheapSet], tier({ slug: "cheap", model: "offline:fast", sharedKey: true, makeDefault: true }), [new DefaultTierSet({ orgId, slug: "cheap", setAt: T1 })]],
    ["default false on the default: the operator's default again", [smartSet, smartDefault], tier({ makeDefault: false }), [new DefaultTierSet({ orgId, slug: null, setAt: T1 })]],
    ["default false on another tier: nothing", [smartSet, cheapSet, cheapDefault], tier({ makeDefault: false }), []],
    ["default left out: unchanged", [smartSet, smartDefault], tier({ model: "openai:o3" }), [new TierSet({ orgId, slug: "smart", model: "openai:o3", sharedKey: false, setAt: T1 })]],
    [
      "archiving the default hands the default back to the operator",
      [smartSet, smartDefault],
      tier({ archived: true }),
      [new TierArchived({ orgId, slug: "smart", archivedAt: T1 }), new DefaultTierSet({ orgId, slug: null, setAt: T1 })]
    ],
    ["an archived tier cannot be made the default", [smartSet], tier({ archived: true, makeDefault: true }), new ModelTierArchived({ slug: "smart" })],
    [
      "restored and made the default at once",
      [smartSet, smartArchived],
      tier({ makeDefault: true }),
      [new TierRestored({ orgId, slug: "smart", restoredAt: T1 }), new DefaultTierSet({ orgId, slug: "smart", setAt: T1 })]
    ]
  ]
  for (const [name, given, command, outcome] of table) {
    it(name, () => {
      const when = models.given(given).when(command, at(T1))
      if (Array.isArray(outcome)) when.then(outcome)
      else when.thenThrows(outcome as ModelTierArchived)
    })
  }
})

describe("keys", () => {
  const key = { orgId, family: "openai" as const, apiKeySealed: "v1.sealed", keyHint: "abcd", baseUrl: null, models: null }
  const keySet = new ModelKeySet({ ...key, setAt: T0 })

  it("records every set key, even the same one again (each seal differs)", () => {
    models.given([]).when(new SetModelKey(key), at(T1)).then([new ModelKeySet({ ...key, setAt: T1 })])
    const restricted = { ...key, apiKeySealed: "v1.other", baseUrl: "http://127.0.0.1:1/v1", models: ["gpt-5-mini"] }
    models.given([keySet]).when(new SetModelKey(restricted), at(T1)).then([new ModelKeySet({ ...restricted, setAt: T1 })])
  })

  it("clears a key that is set, and clearing one that is not changes nothing", () => {
    models.given([keySet]).when(new ClearModelKey({ orgId, family: "openai" }), at(T1)).then([new ModelKeyCleared({ orgId, family: "openai", clearedAt: T1 })])
    models.given([keySet]).when(new ClearModelKey({ orgId, family: "anthropic" }), at(T1)).thenNothingHappened()
    models.given([]).when(new ClearModelKey({ orgId, family: "openai" }), at(T1)).thenNothingHappened()
  })
})

describe("projection", () => {
  const key = new ModelKeySet({ orgId, family: "anthropic", apiKeySealed: "v1.sealed", keyHint: null, baseUrl: null, models: ["claude-opus-4-5"], setAt: T0 })

  it("writes a row per tier with whether it is the default, and a row per key, sealed", () => {
    const rows = projectedRows(ModelsActor, `models:${orgId}`, [
      [smartSet, T0],
      [cheapSet, T0],
      [smartDefault, T0],
      [cheapDefault, T1],
      [smartArchived, T1],
      [key, T0]
    ])
    expect(rows).toEqual({
      model_tiers: [
        { org_id: orgId, slug: "cheap", model: "offline:fast", shared_key: true, archived: false, is_default: true, updated_at: T0 },
        { org_id: orgId, slug: "smart", model: "openai:gpt-5-mini", shared_key: false, archived: true, is_default: false, updated_at: T0 }
      ],
      model_keys: [
        { org_id: orgId, family: "anthropic", api_key_sealed: "v1.sealed", key_hint: null, base_url: null, models: ["claude-opus-4-5"], set_at: T0 }
      ]
    })
  })

  it("deletes the row of a cleared key", () => {
    const rows = projectedRows(ModelsActor, `models:${orgId}`, [[key, T0], [new ModelKeyCleared({ orgId, family: "anthropic", clearedAt: T1 }), T1]])
    expect(rows).toEqual({ model_keys: [] })
  })

  it.effect("its state survives JSON", () =>
    Effect.gen(function* () {
      const state = [smartSet, smartDefault, key].reduce(ModelsActor.evolve, ModelsActor.initialState)
      expect(yield* jsonRoundTrip(ModelsState, state)).toEqual(state)
    })
  )
})
