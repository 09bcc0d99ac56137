/**
 * Failures of the application layer (the checkpoint and the capabilities). Actor rejections are
 * their own tagged errors; the gateway maps both, once, to status, code and reason.
 */
import { Schema } from "effect"

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  reason: Schema.Literal("missing_credential", "malformed_credential", "invalid_credential", "expired_credential", "mfa_code_required"),
  message: Schema.String
}) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  reason: Schema.optional(Schema.String),
  message: Schema.String
}) {}

/** The request breaks a field rule; `reason` names which. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  reason: Schema.String,
  message: Schema.String
}) {}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  reason: Schema.String,
  message: Schema.String
}) {}

/** An `Idempotency-Key` sent again with another request than the one it was first sent with. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  message: Schema.String
}) {}

/**
 * A retry (same `Idempotency-Key`) of a request whose answer was a secret. The secret was shown to
 * the first request only and cannot be recovered (only its hash, or its sealed form, is kept), so
 * the retry is refused rather than answered with a new secret that would not work; what the first
 * request made stands.
 */
export class SecretShownOnce extends Schema.TaggedError<SecretShownOnce>()("SecretShownOnce", {
  message: Schema.String
}) {}

/**
 * The `Retry-After` of a refusal that lasts `waitMs` more milliseconds: whole seconds, rounded up,
 * and at least one (a wait about to end is still a wait).
 */
export const retryAfterSeconds = (waitMs: number): number => Math.max(1, Math.ceil(waitMs / 1000))

/**
 * Beyond a rate or a fair share (docs/decisions.md, "Fair shares"): 429 `rate_limited` with
 * `Retry-After`; on the chat routes the body is `{error: "rate_limited"}` (spec 7.1).
 */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  retryAfterSeconds: Schema.Int,
  /** What ran out: the workspace's chat requests a minute, an API key's turns a minute, or a key's or a workspace's share of open streams or running turns. */
  limit: Schema.optionalWith(Schema.Literal("chat_requests", "key_requests", "streams_per_key", "streams_per_workspace", "turns_per_key", "turns_per_workspace"), {
    default: () => "chat_requests" as const
  })
}) {
  override get message() {
    const retry = `retry in ${this.retryAfterSeconds} s`
    switch (this.limit) {
      case "chat_requests":
        return `this workspace sent too many chat requests; ${retry}`
      case "key_requests":
        return `this API key started too many turns this minute; ${retry}`
      case "streams_per_key":
        return `this credential follows as many streams as it may at once; end one or ${retry}`
      case "streams_per_workspace":
        return `this workspace's streams are as many as it may follow at once; ${retry}`
      case "turns_per_key":
        return `this credential runs as many assistant turns as it may at once; ${retry}`
      case "turns_per_workspace":
        return `this workspace runs as many assistant turns as it may at once; ${retry}`
    }
  }
}

/**
 * The node holds as many turns or streams as it may (docs/decisions.md, "Admission control"):
 * refused at once, before anything is recorded or any stream opens, with 503 `engine_unavailable`
 * and `Retry-After`; `bound` names what was full.
 */
export class Overloaded extends Schema.TaggedError<Overloaded>()("Overloaded", {
  bound: Schema.Literal("turns_starting", "turns_running", "open_streams"),
  retryAfterSeconds: Schema.Int
}) {
  override get message() {
    const retry = `retry in ${this.retryAfterSeconds} s`
    switch (this.bound) {
      case "turns_starting":
        return `this node is starting as many assistant turns as it may at once; ${retry}`
      case "turns_running":
        return `this node runs as many assistant turns as it may at once; ${retry}`
      case "open_streams":
        return `this node serves as many streams as it may at once; ${retry}`
    }
  }
}

/**
 * Retryable: the owner of the data could not be reached in time, or (`reason` `queued_commands`)
 * it held as many commands as it queues and refused this one at once (docs/decisions.md,
 * "Admission control").
 */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", {
  message: Schema.String,
  reason: Schema.optional(Schema.Literal("queued_commands"))
}) {}

/** An actor host's refusal as the checkpoint answers it: `Unavailable`, naming the bound when the owner was full. */
export const unavailableOf = (e: { readonly reason: string; readonly message: string }) =>
  new Unavailable(e.reason === "overloaded" ? { message: e.message, reason: "queued_commands" } : { message: e.message })

/**
 * Refusals for load (docs/decisions.md, "Admission control"): the node took nothing, so they write
 * nothing, not even an audit record; their answer waits on no append of the log, which is what a
 * node shedding load must not do. They are counted (`svc_admission_refusals_total`) instead.
 */
export const shedTags: ReadonlySet<string> = new Set(["Overloaded"])

/**
 * Rejections that mean the input was bad: they change nothing and write nothing, not even an
 * audit record (the caller made no invocation the capability accepted).
 */
export const badInputTags: ReadonlySet<string> = new Set([
  "BadRequest",
  "UnknownProperty",
  "InvalidPropertyType",
  "InvalidEnumValue",
  "MissingProperty",
  "InvalidLabelName",
  "InvalidPropertyName",
  "EnumValuesRequired",
  "DuplicateEnumValue",
  "EnumValuesNotAllowed",
  "ReservedScopeKey",
  "UnknownPurpose",
  "AttachmentRefused",
  "UnknownAgentTool",
  "UnknownConditionProperty",
  "OperatorNotAllowed",
  "InvalidConditionEnumValue",
  "InvalidConditionValue",
  "InvalidConditionPath",
  "DuplicateConditionId",
  "NoAlertRoles"
])
