/**
 * Which model a turn runs on, who pays for it, and the effort it is sent (spec 2.2, 7.1, 8).
 *
 * - An explicit `model` wins over `tier`, and the operator's key pays for it.
 * - A `tier` is the organization's tier with that slug when it has one (its `sharedKey` decides
 *   who pays); else the slugs `fast`, `balanced`, `precise` are the operator's tiers; else 404.
 * - Neither: the organization's default tier if it set one, else the operator's default tier.
 * - An organization that pays uses its own key for the model's family, at the key's `baseUrl` or
 *   the family's public API (never the operator's endpoint: that may be a server of the
 *   operator's own that the organization's key means nothing to). The offline model needs no key.
 * - Every provider calls through the outbound guard (`nodeFetch`): a base URL on a loopback or
 *   private address is refused unless the operator allowed it (`OUTBOUND_ALLOW`), the operator's
 *   own endpoints included.
 *
 * Effort is sent only to models that take one, and what is sent is what `effort` reports:
 * - offline: every level, as `providerOptions.offline.effort`;
 * - OpenAI reasoning models (`o1`, `o3*`, `o4-mini*`, `gpt-5*` but not its chat variants), as
 *   `reasoningEffort` (the adapter sends it as `reasoning_effort`, any string): `gpt-5*` take
 *   `xhigh` as their highest level, so `xhigh` and `max` go as `xhigh`; the o-series take no more
 *   than `high`, so both go as `high`;
 * - Anthropic models with the effort control (Opus and Sonnet 4.5 and later, every line from
 *   generation 5), as `effort`, capped at `high`: the provider of spec 8's ceiling;
 * - any other model: none, and `effort` is null.
 */
import { createAnthropic } from "@ai-sdk/anthropic"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import type { LanguageModelV3, SharedV3ProviderOptions } from "@ai-sdk/provider"
import { Effect } from "effect"
import { nodeFetch, type OutboundFetch } from "../../platform/Outbound.ts"
import { PlatformSecrets } from "../../platform/Secrets.ts"
import { defaultModelTier, type ModelTierRow, modelTier, sealedModelKeys } from "../Queries.ts"
import { AssistantSettings } from "../Settings.ts"
import {
  ModelFamilyUnknown,
  ModelTierArchived,
  ModelTierKeyCannotServe,
  ModelTierKeyMissing,
  ModelTierNotFound,
  ModelTierUnmapped,
  type PaidBy
} from "./errors.ts"
import { type Effort, type ModelFamily, type ModelRef, parseModelId } from "./ids.ts"
import { offlineModel } from "./offline.ts"

export interface ResolvedModel {
  /** `<family>:<model>`, as the run records it. */
  readonly modelId: string
  readonly family: ModelFamily
  /** An `ai` SDK language model (every provider here implements V3). */
  readonly model: LanguageModelV3
  /** Pass to `streamText`/`generateText` as they are: they carry the effort. */
  readonly providerOptions: SharedV3ProviderOptions
  /** The effort actually sent, after the model's own ceiling; null when the model takes none or none was asked. */
  readonly effort: Effort | null
  /** The tier's slug; null when the request named a model. */
  readonly tier: string | null
  readonly paidBy: PaidBy
}

export interface TurnModelRequest {
  readonly orgId: string
  readonly tier?: string | undefined
  readonly model?: string | undefined
  readonly effort?: Effort | undefined
}

const OPERATOR_TIERS: ReadonlySet<string> = new Set(["fast", "balanced", "precise"])

const OPENAI_PUBLIC_URL = "https://api.openai.com/v1"

interface Credentials {
  readonly apiKey: string | undefined
  /** Undefined: the provider's own default. */
  readonly baseUrl: string | undefined
}

const NO_CREDENTIALS: Credentials = { apiKey: undefined, baseUrl: undefined }

const languageModel = (ref: ModelRef, credentials: Credentials, fetch: OutboundFetch): LanguageModelV3 => {
  switch (ref.family) {
    case "offline":
      return offlineModel(ref.name)
    case "openai":
      return createOpenAICompatible({
        name: "openai",
        baseURL: credentials.baseUrl ?? OPENAI_PUBLIC_URL,
        apiKey: credentials.apiKey,
        includeUsage: true,
        fetch
      })(ref.name)
    case "anthropic":
      return createAnthropic({ baseURL: credentials.baseUrl, apiKey: credentials.apiKey, fetch })(ref.name)
  }
}

const OPENAI_REASONING = /^(?:o1(?!-mini|-preview)|o3|o4-mini)(?:$|-)/
const GPT_5 = /^gpt-5(?!.*-chat)/
const ANTHROPIC_EFFORT = /^claude-(?:(?:opus|sonnet)-4-[5-9]|[a-z]+-(?:[5-9]|\d{2,}))(?:$|[-.@])/

const capped = (effort: Effort, ceiling: "high" | "xhigh"): Effort =>
  effort === "max" || effort === "xhigh" ? ceiling : effort

/** The effort a model is sent, and the provider options that send it. */
const effortFor = (ref: ModelRef, effort: Effort | undefined): { readonly sent: Effort | null; readonly providerOptions: SharedV3ProviderOptions } => {
  const none = { sent: null, providerOptions: {} }
  if (effort === undefined) return none
  const name = ref.name.toLowerCase()
  switch (ref.family) {
    case "offline":
      return { sent: effort, providerOptions: { offline: { effort } } }
    case "openai": {
      const ceiling = GPT_5.test(name) ? "xhigh" : OPENAI_REASONING.test(name) ? "high" : undefined
      if (ceiling === undefined) return none
      const sent = capped(effort, ceiling)
      return { sent, providerOptions: { openai: { reasoningEffort: sent } } }
    }
    case "anthropic": {
      if (!ANTHROPIC_EFFORT.test(name)) return none
      const sent = capped(effort, "high")
      return { sent, providerOptions: { anthropic: { effort: sent } } }
    }
  }
}

const parse = (model: string) => {
  const ref = parseModelId(model)
  return ref === undefined ? Effect.fail(new ModelFamilyUnknown({ model })) : Effect.succeed(ref)
}

const resolved = (ref: ModelRef, credentials: Credentials, tier: string | null, paidBy: PaidBy, effort: Effort | undefined) =>
  Effect.map(nodeFetch, (fetch): ResolvedModel => {
    const { sent, providerOptions } = effortFor(ref, effort)
    return { modelId: ref.id, family: ref.family, model: languageModel(ref, credentials, fetch), providerOptions, effort: sent, tier, paidBy }
  })

const operatorCredentials = (family: ModelFamily) =>
  Effect.map(AssistantSettings, (settings): Credentials => {
    switch (family) {
      case "offline":
        return NO_CREDENTIALS
      case "openai":
        return { apiKey: settings.openaiApiKey, baseUrl: settings.openaiBaseUrl }
      case "anthropic":
        return { apiKey: settings.anthropicApiKey, baseUrl: settings.anthropicBaseUrl }
    }
  })

/** The organization's own key that can run `ref`, opened. */
const organizationCredentials = (orgId: string, slug: string, ref: ModelRef) =>
  Effect.gen(function* () {
    const keys = yield* sealedModelKeys(orgId)
    if (keys.length === 0) return yield* new ModelTierKeyMissing({ slug, family: ref.family })
    const key = keys.find((k) => k.family === ref.family)
    if (key === undefined || (key.models !== null && !key.models.includes(ref.name))) {
      return yield* new ModelTierKeyCannotServe({ slug, model: ref.id })
    }
    const apiKey = (yield* PlatformSecrets).open(key.apiKeySealed)
    // sealed under another platform key (SECRET_KEY changed): as good as no key; the Owner sets it again
    if (apiKey === undefined) return yield* new ModelTierKeyMissing({ slug, family: ref.family })
    return { apiKey, baseUrl: key.baseUrl ?? undefined } satisfies Credentials
  })

const fromOrganizationTier = (orgId: string, row: ModelTierRow, effort: Effort | undefined) =>
  Effect.gen(function* () {
    if (row.archived) return yield* new ModelTierArchived({ slug: row.slug })
    if (row.model === null) return yield* new ModelTierUnmapped({ slug: row.slug })
    const ref = yield* parse(row.model)
    if (row.sharedKey) return yield* resolved(ref, yield* operatorCredentials(ref.family), row.slug, "operator", effort)
    const credentials = ref.family === "offline" ? NO_CREDENTIALS : yield* organizationCredentials(orgId, row.slug, ref)
    return yield* resolved(ref, credentials, row.slug, "organization", effort)
  })

const fromOperatorTier = (slug: "fast" | "balanced" | "precise", effort: Effort | undefined) =>
  Effect.gen(function* () {
    const settings = yield* AssistantSettings
    const ref = yield* parse(settings.operatorTiers[slug])
    return yield* resolved(ref, yield* operatorCredentials(ref.family), slug, "operator", effort)
  })

const isOperatorTier = (slug: string): slug is "fast" | "balanced" | "precise" => OPERATOR_TIERS.has(slug)

/** The model a turn runs on, or the 404/409 of spec 7.1 that refuses it before the stream opens. */
export const resolveTurnModel = (request: TurnModelRequest) =>
  Effect.gen(function* () {
    const { orgId, effort } = request
    if (request.model !== undefined) {
      const ref = yield* parse(request.model)
      return yield* resolved(ref, yield* operatorCredentials(ref.family), null, "operator", effort)
    }
    if (request.tier !== undefined) {
      const row = yield* modelTier(orgId, request.tier)
      if (row !== undefined) return yield* fromOrganizationTier(orgId, row, effort)
      if (isOperatorTier(request.tier)) return yield* fromOperatorTier(request.tier, effort)
      return yield* new ModelTierNotFound({ slug: request.tier })
    }
    const row = yield* defaultModelTier(orgId)
    if (row !== undefined) return yield* fromOrganizationTier(orgId, row, effort)
    return yield* fromOperatorTier((yield* AssistantSettings).defaultTier, effort)
  })
