/** The audit record of one capability invocation (key `audit:<invocationId>`, always seq 1). The
 * capability checkpoint appends it directly; no command produces it. */
import { Schema } from "effect"

export const Surface = Schema.Literal("api", "mcp", "agent", "a2a", "playbook")

export const Principal = Schema.Struct({
  /** The credential kind that authenticated the call. A plain string so that new kinds need no
   * change to published events. */
  kind: Schema.NonEmptyString,
  apiKeyId: Schema.NullOr(Schema.String),
  /** The person the call is attributed to (for a key, its creator). */
  userId: Schema.NullOr(Schema.String)
})

export class CapabilityInvoked extends Schema.TaggedClass<CapabilityInvoked>()("capability.invoked", {
  invocationId: Schema.NonEmptyString,
  capability: Schema.NonEmptyString,
  surface: Surface,
  /** Null for a signed-in person acting on themselves, outside any organization. */
  orgId: Schema.NullOr(Schema.NonEmptyString),
  workspaceId: Schema.NullOr(Schema.String),
  principal: Principal,
  outcome: Schema.Literal("succeeded", "failed"),
  /** The failure's tag; present only when the outcome is `failed`. */
  errorTag: Schema.optional(Schema.String),
  durationMs: Schema.NonNegativeInt,
  /** Metered units, as the checkpoint counts them (0 when nothing is billable); every invocation
   * gets a metering row. */
  units: Schema.NonNegativeInt
}) {}

type Fields = Omit<ConstructorParameters<typeof CapabilityInvoked>[0], "outcome" | "errorTag">

/** What the checkpoint knows after running a capability. The outcome and its error tag go
 * together, so a failure cannot be recorded without its tag nor a success with one. */
export type Invocation = Fields &
  ({ readonly outcome: "succeeded" } | { readonly outcome: "failed"; readonly errorTag: string })

/** The audit event of one invocation; the checkpoint appends it under `keyOf(AuditActor, invocationId)` at seq 1. */
export const auditEvent = (invocation: Invocation): CapabilityInvoked => new CapabilityInvoked(invocation)

/** A sign-in that failed (key `audit:<attemptId>`, seq 1, appended directly by the sign-in route).
 * The attempted email is recorded; the password never is. */
export class SignInFailed extends Schema.TaggedClass<SignInFailed>()("auth.sign_in_failed", {
  attemptId: Schema.NonEmptyString,
  email: Schema.String,
  /** The account the email names, if any, and its organizations (each records the attempt). */
  userId: Schema.NullOr(Schema.String),
  orgIds: Schema.Array(Schema.NonEmptyString),
  /** `invalid_credential` or `mfa_code_invalid`. */
  reason: Schema.String
}) {}

/**
 * A person erased (key `audit:<erasureId>`, seq 1, appended directly by `person.erase`): their data
 * keys were destroyed, so what was sealed under them (actors/personal.ts) opens to nothing from now
 * on. The log keeps the ciphertext; this record says why it no longer opens (docs/audit.md).
 */
export class PersonErased extends Schema.TaggedClass<PersonErased>()("person.erased", {
  erasureId: Schema.NonEmptyString,
  /** The erased person. */
  userId: Schema.NonEmptyString,
  /** Their organizations as they were erased: each audit log records it. */
  orgIds: Schema.Array(Schema.NonEmptyString),
  /** Data keys destroyed (0: nothing of theirs was ever sealed). */
  keysDestroyed: Schema.NonNegativeInt
}) {}

export const AuditEvent = Schema.Union(CapabilityInvoked, SignInFailed, PersonErased)
export type AuditEvent = typeof AuditEvent.Type
