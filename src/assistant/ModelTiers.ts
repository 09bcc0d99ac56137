/**
 * An organization's text model tiers and the provider keys it pays with (spec 2.2): Owner only.
 * Mutations are commands to the models actor (`models:<orgId>`); the listing reads its projections.
 *
 * A key is sealed with the platform key before it reaches a command, so the log and the read
 * models only ever hold the sealed value; no output carries it, only its last four characters.
 */
import { Effect, Schema } from "effect"
import { ModelsActor } from "../../actors/models/actor.ts"
import { KeyFamily, ModelTierSlug } from "../../actors/models/events.ts"
import { ClearModelKey, SetModelKey, SetModelTier } from "../../actors/models/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { ModelFamilyUnknown } from "./models/errors.ts"
import { parseModelId } from "./models/ids.ts"
import { AssistantSettings } from "./Settings.ts"
import { type AnyCapability, defineCapability, type Invocation, type Role } from "../checkpoint/Capability.ts"
import { Db, query } from "../../streams/Db.ts"
import { BadRequest } from "../platform/Errors.ts"
import { checkLiteral } from "../platform/Outbound.ts"
import { PlatformSecrets } from "../platform/Secrets.ts"

const OWNER: ReadonlyArray<Role> = ["org:owner"]

const common = {
  scope: "organization",
  roles: OWNER,
  surfaces: ["api", "mcp"],
  needsApproval: false,
  claimedBy: "builtin",
  destructive: false
} as const
/** Settings that decide who pays for turns: a signed-in Owner (no key acts as Owner). */
const ownerWrites = { ...common, requiresPerson: true, mutating: true, sensitivity: "high" } as const

const orgOf = (invocation: Invocation) => invocation.orgId!

const iso = (value: Date | string): string => (value instanceof Date ? value.toISOString() : value)

const Tier = Schema.Struct({
  slug: Schema.String,
  /** `<family>:<model>`, or null when the tier names no model yet. */
  model: Schema.NullOr(Schema.String),
  sharedKey: Schema.Boolean,
  archived: Schema.Boolean,
  default: Schema.Boolean
})

const Key = Schema.Struct({
  family: KeyFamily,
  /** The key's last four characters (null for a short key); never the key. */
  keyHint: Schema.NullOr(Schema.String),
  baseUrl: Schema.NullOr(Schema.String),
  models: Schema.NullOr(Schema.Array(Schema.String)),
  setAt: Schema.String
})

const HttpUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { message: () => "baseUrl must be an http(s) URL" })
)

export const setModelTier = defineCapability({
  ...ownerWrites,
  name: "org.model_tier.set",
  description:
    "Define (or redefine) one of the organization's text model tiers: its slug, its model (`<family>:<model>`, or null for none yet), and whether the operator's key pays (sharedKey) or the organization's own key for the model's family. archived (default false) takes it out of use; default makes it the tier of turns that name none (false: it stops being the default).",
  input: Schema.Struct({
    slug: ModelTierSlug,
    model: Schema.NullOr(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))),
    sharedKey: Schema.Boolean,
    archived: Schema.optional(Schema.Boolean),
    default: Schema.optional(Schema.Boolean)
  }),
  output: Tier,
  handler: (invocation, input) =>
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
})

export const listModelTiers = defineCapability({
  ...common,
  name: "org.model_tier.list",
  description:
    "The organization's text model tiers (archived ones too) and its default tier, the operator's tiers that apply when it has none of those slugs, and the model keys it holds (never the keys themselves).",
  mutating: false,
  sensitivity: "low",
  input: Schema.Struct({}),
  output: Schema.Struct({
    tiers: Schema.Array(Tier),
    /** The organization's default tier; null: the operator's (`operatorDefaultTier`). */
    defaultTier: Schema.NullOr(Schema.String),
    operatorTiers: Schema.Struct({ fast: Schema.String, balanced: Schema.String, precise: Schema.String }),
    operatorDefaultTier: Schema.String,
    keys: Schema.Array(Key)
  }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const db = yield* Db
      const settings = yield* AssistantSettings
      const orgId = orgOf(invocation)
      const tiers = yield* query("model tiers", () => db.sql`
        select slug, model, shared_key, archived, is_default from ${db.table("model_tiers")} where org_id = ${orgId} order by slug`)
      const keys = yield* query("model keys", () => db.sql`
        select family, key_hint, base_url, models, set_at from ${db.table("model_keys")} where org_id = ${orgId} order by family`)
      return {
        tiers: tiers.map((row) => ({ slug: row.slug, model: row.model, sharedKey: row.shared_key, archived: row.archived, default: row.is_default })),
        defaultTier: tiers.find((row) => row.is_default)?.slug ?? null,
        operatorTiers: settings.operatorTiers,
        operatorDefaultTier: settings.defaultTier,
        keys: keys.map((row) => ({ family: row.family, keyHint: row.key_hint, baseUrl: row.base_url, models: row.models, setAt: iso(row.set_at) }))
      }
    })
})

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

export const setModelKey = defineCapability({
  ...ownerWrites,
  name: "org.model_key.set",
  description:
    "Set the organization's own key for a model family (openai: any OpenAI-compatible endpoint at baseUrl, default OpenAI's API; anthropic). Tiers without sharedKey pay with it. models, when given, are the only models it may run. The key is stored sealed and never shown again. A baseUrl on a loopback or private address is refused unless the operator allowed it.",
  input: Schema.Struct({
    family: KeyFamily,
    apiKey: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(4096)),
    baseUrl: Schema.optional(HttpUrl),
    models: Schema.optional(Schema.Array(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))).pipe(Schema.minItems(1), Schema.maxItems(100)))
  }),
  output: Key,
  handler: (invocation, input) =>
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
})

export const clearModelKey = defineCapability({
  ...ownerWrites,
  name: "org.model_key.clear",
  description: "Remove the organization's own key for a model family. Tiers that pay with it are refused until a key is set again.",
  input: Schema.Struct({ family: KeyFamily }),
  // clearing a key that is not set changes nothing: either way none is set afterwards
  output: Schema.Struct({ family: KeyFamily }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const orgId = orgOf(invocation)
      yield* host.send(ModelsActor, orgId, new ClearModelKey({ orgId, family: input.family }), invocation.meta)
      return { family: input.family }
    })
})

export const modelCapabilities: ReadonlyArray<AnyCapability> = [setModelTier, listModelTiers, setModelKey, clearModelKey]
