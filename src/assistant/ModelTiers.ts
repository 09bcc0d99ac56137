/**
 * An organization's text model tiers and the provider keys it pays with (spec 2.2): Owner only.
 * Mutations are commands to the models actor (`models:<orgId>`); the listing reads its projections.
 *
 * A key is sealed with the platform key before it reaches a command, so the log and the read
 * models only ever hold the sealed value; no output carries it, only its last four characters.
 */
import { Effect } from "effect"
import { ModelsActor } from "../../actors/models/actor.ts"
import type { KeyFamily } from "../../actors/models/events.ts"
import { ClearModelKey, SetModelKey, SetModelTier } from "../../actors/models/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { ModelFamilyUnknown } from "./models/errors.ts"
import { parseModelId } from "./models/ids.ts"
import { AssistantSettings } from "./Settings.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest } from "../platform/Errors.ts"
import { checkLiteral } from "../platform/Outbound.ts"
import { PlatformSecrets } from "../platform/Secrets.ts"
import * as Api from "./Api.ts"
import { modelKeysOf, modelTiersOf } from "./Queries.ts"

const orgOf = (invocation: Invocation) => invocation.orgId!

export const setModelTier = implement(Api.setModelTier, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const orgId = orgOf(invocation)
    let model: string | null = null
    if (input.model !== null) {
      const ref = parseModelId(input.model)
      if (ref === undefined) return yield* new ModelFamilyUnknown({ model: input.model })
      model = ref.id
    }
    const { state } = yield* host.send(ModelsActor, orgId, new SetModelTier({
      orgId,
      slug: input.slug,
      model,
      sharedKey: input.sharedKey,
      archived: input.archived ?? false,
      makeDefault: input.default ?? null
    }), invocation.meta)
    const tier = state.tiers[input.slug]
    return { slug: input.slug, model: tier.model, sharedKey: tier.sharedKey, archived: tier.archived, default: state.defaultTier === input.slug }
  })
)

export const listModelTiers = implement(Api.listModelTiers, (invocation) =>
  Effect.gen(function* () {
    const settings = yield* AssistantSettings
    const orgId = orgOf(invocation)
    const tiers = yield* modelTiersOf(orgId)
    const keys = yield* modelKeysOf(orgId)
    return {
      tiers: tiers.map((tier) => ({ slug: tier.slug, model: tier.model, sharedKey: tier.sharedKey, archived: tier.archived, default: tier.isDefault })),
      defaultTier: tiers.find((tier) => tier.isDefault)?.slug ?? null,
      operatorTiers: settings.operatorTiers,
      operatorDefaultTier: settings.defaultTier,
      keys: keys.map((key) => ({ family: key.family, keyHint: key.keyHint, baseUrl: key.baseUrl, models: key.models, setAt: key.setAt }))
    }
  })
)

/** Restriction entries are model names of the key's family; `<family>:` in front is accepted. */
const restriction = (family: KeyFamily, models: ReadonlyArray<string>) =>
  Effect.forEach(models, (entry) => {
    const colon = entry.indexOf(":")
    const prefix = colon === -1 ? undefined : entry.slice(0, colon)
    if (prefix === undefined || (prefix !== "openai" && prefix !== "anthropic" && prefix !== "offline")) return Effect.succeed(entry)
    if (prefix !== family) {
      return Effect.fail(new BadRequest({ reason: "invalid_input", message: `models: '${entry}' is not a ${family} model` }))
    }
    return Effect.succeed(entry.slice(colon + 1))
  })

// a hint of four characters is shown only for keys long enough that it gives nothing away
const hintOf = (apiKey: string): string | null => (apiKey.length >= 16 ? apiKey.slice(-4) : null)

export const setModelKey = implement(Api.setModelKey, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const secrets = yield* PlatformSecrets
    const orgId = orgOf(invocation)
    if (input.baseUrl !== undefined) {
      // a loopback or private address written as such is refused now; a host name is checked at each call
      yield* checkLiteral(input.baseUrl).pipe(Effect.mapError((refused) => new BadRequest({ reason: "invalid_input", message: `baseUrl: ${refused.message}` })))
    }
    const models = input.models === undefined ? null : yield* restriction(input.family, input.models)
    const command = new SetModelKey({
      orgId,
      family: input.family,
      apiKeySealed: secrets.seal(input.apiKey),
      keyHint: hintOf(input.apiKey),
      baseUrl: input.baseUrl ?? null,
      models
    })
    yield* host.send(ModelsActor, orgId, command, invocation.meta)
    return { family: command.family, keyHint: command.keyHint, baseUrl: command.baseUrl, models: command.models, setAt: invocation.at }
  })
)

export const clearModelKey = implement(Api.clearModelKey, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const orgId = orgOf(invocation)
    yield* host.send(ModelsActor, orgId, new ClearModelKey({ orgId, family: input.family }), invocation.meta)
    return { family: input.family }
  })
)

export const modelCapabilities: ReadonlyArray<AnyCapability> = [setModelTier, listModelTiers, setModelKey, clearModelKey]
