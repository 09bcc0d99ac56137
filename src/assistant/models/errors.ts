/**
 * Why a turn cannot run on the model it asked for (spec 7.1: 404 and 409 before the stream opens),
 * and what a failed model call means once it has (spec 7.2).
 */
import { APICallError, EmptyResponseBodyError, InvalidResponseDataError, JSONParseError, NoContentGeneratedError, TypeValidationError } from "@ai-sdk/provider"
import { RetryError } from "ai"
import { Schema } from "effect"
import { ModelTierArchived } from "../../../actors/models/errors.ts"
import { OutboundRefused } from "../../platform/Outbound.ts"

// one class per tag: the actor refuses an archived default tier with the same error the resolver uses
export { ModelTierArchived }

/** No tier of the organization, nor an operator tier, has the slug (404 `model_tier_not_found`). */
export class ModelTierNotFound extends Schema.TaggedError<ModelTierNotFound>()("ModelTierNotFound", {
  slug: Schema.String
}) {
  override get message() {
    return `no model tier '${this.slug}' in this organization`
  }
}

/** The tier is named but mapped to no model (409 `model_tier_unmapped`). */
export class ModelTierUnmapped extends Schema.TaggedError<ModelTierUnmapped>()("ModelTierUnmapped", {
  slug: Schema.String
}) {
  override get message() {
    return `model tier '${this.slug}' has no model`
  }
}

/** The tier pays with the organization's own key and it holds none (409 `model_tier_key_missing`). */
export class ModelTierKeyMissing extends Schema.TaggedError<ModelTierKeyMissing>()("ModelTierKeyMissing", {
  slug: Schema.String,
  family: Schema.String
}) {
  override get message() {
    return `model tier '${this.slug}' pays with the organization's own ${this.family} key, and none is set`
  }
}

/** The organization's keys cannot run the tier's model: none of its family, or one restricted to
 * other models (409 `model_tier_key_cannot_serve`). */
export class ModelTierKeyCannotServe extends Schema.TaggedError<ModelTierKeyCannotServe>()("ModelTierKeyCannotServe", {
  slug: Schema.String,
  model: Schema.String
}) {
  override get message() {
    return `the organization's model keys cannot run ${this.model}, the model of tier '${this.slug}'`
  }
}

/** The model id names no family this platform can run (409 `model_family_unknown`). */
export class ModelFamilyUnknown extends Schema.TaggedError<ModelFamilyUnknown>()("ModelFamilyUnknown", {
  model: Schema.String
}) {
  override get message() {
    return `'${this.model}' names no known model family; use openai:<model>, anthropic:<model> or offline:<model>`
  }
}

/** Who pays for the turn's model calls: the operator's key or the organization's own. */
export type PaidBy = "operator" | "organization"

export interface ModelCallFailure {
  readonly code: "model_call_failed" | "platform_provider_balance"
  readonly message: string
}

// OpenAI answers an exhausted account with 429 `insufficient_quota`, Anthropic with a 400 whose
// message speaks of the credit balance; others with 402 Payment Required
const BALANCE = /insufficient_quota|insufficient[ _]balance|credit balance/i

const isBalance = (error: APICallError): boolean => error.statusCode === 402 || BALANCE.test(`${error.responseBody ?? ""} ${error.message}`)

/** What the provider answered that cannot be read as its protocol says: its failure too. */
const isUnreadableAnswer = (error: unknown): boolean =>
  InvalidResponseDataError.isInstance(error) || JSONParseError.isInstance(error) || TypeValidationError.isInstance(error) ||
  EmptyResponseBodyError.isInstance(error) || NoContentGeneratedError.isInstance(error)

/**
 * Spec 7.2 for a model call the provider refused or failed: the operator's own provider account out
 * of balance is `platform_provider_balance`; the rest (an organization's exhausted key included,
 * which is the organization's to fix) is `model_call_failed`. The provider's own words are not
 * repeated: they can name the account or part of its key. Undefined for a failure that is not the
 * provider's (a fault of this node is not reported as the provider's).
 */
export const classifyModelError = (error: unknown, paidBy: PaidBy): ModelCallFailure | undefined => {
  // with retries on, the SDK reports the last attempt's failure inside a RetryError
  const cause = RetryError.isInstance(error) ? error.lastError : error
  if (APICallError.isInstance(cause)) {
    if (paidBy === "operator" && isBalance(cause)) {
      return { code: "platform_provider_balance", message: "the operator's model provider account is out of balance" }
    }
    const status = cause.statusCode === undefined ? "" : ` (HTTP ${cause.statusCode})`
    return { code: "model_call_failed", message: `the model provider refused or failed the call${status}` }
  }
  // the outbound guard's refusal, named by its range only: the base URL is the Owner's to see
  if (cause instanceof OutboundRefused) return { code: "model_call_failed", message: `the model provider's address is refused (${cause.reason})` }
  if (isUnreadableAnswer(cause)) return { code: "model_call_failed", message: "the model provider's answer could not be read" }
  return undefined
}
