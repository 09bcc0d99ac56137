/**
 * The one place where failures become HTTP: tagged error -> status, code, reason, message.
 * Every JSON error is `{ error: { code, reason?, message } }`.
 */
import { Cause, Exit, Option } from "effect"
import { type FailureDescription, isRetryable } from "../src/platform/Failures.ts"
import { causeFields } from "../src/platform/Logging.ts"
import { type HttpReply, jsonError } from "./http.ts"

/** Riding through a dependency's restart takes seconds: sooner would add load while it recovers. */
const RETRY_UNAVAILABLE_SECONDS = 1

type Tagged = { readonly _tag: string } & Record<string, any>

interface Row {
  readonly status: number
  readonly code: string
  /** A fixed reason, one derived from the error, or the error's own `reason` field when omitted. */
  readonly reason?: string | ((e: Tagged) => string)
  readonly message: (e: Tagged) => string
  /** Headers the answer carries beside the body. */
  readonly headers?: (e: Tagged) => Record<string, string>
  /** A 5xx that is a refusal the node chose (load shed), not a failure: its request line carries no cause. */
  readonly refusal?: true
}

const badRequest = (reason: string, message: (e: Tagged) => string): Row => ({ status: 400, code: "bad_request", reason, message })
const notFound = (reason: string, message: (e: Tagged) => string): Row => ({ status: 404, code: "not_found", reason, message })
const conflict = (reason: string, message: (e: Tagged) => string): Row => ({ status: 409, code: "conflict", reason, message })
const own = (status: number, code: string): Row => ({ status, code, message: (e) => e.message })
/** A dependency that is down or restarting: the caller is told when to try again (RFC 9110 Retry-After). */
const unavailable = (reason: Row["reason"], message: (e: Tagged) => string): Row => ({
  status: 503,
  code: "unavailable",
  reason,
  message,
  headers: () => ({ "retry-after": String(RETRY_UNAVAILABLE_SECONDS) })
})

/** The retryable class (src/platform/Failures.ts), answered alike; the reason names what was out of reach. */
const retryable: Row = unavailable(
  (e) => {
    switch (e._tag) {
      case "DbError":
        return e.reason ?? "database_unavailable"
      case "LogError":
        return "log_unavailable"
      case "ClusterError":
        return "cluster_unavailable"
      case "HostUnavailable":
        return e.reason === "overloaded" ? "queued_commands" : "owner_unreachable"
      default:
        // `Unavailable`: the owner out of reach, or full (`queued_commands`)
        return e.reason ?? "owner_unreachable"
    }
  },
  (e) => {
    switch (e._tag) {
      case "DbError":
        return e.reason === "read_model_behind" ? e.message : "the database did not answer; retry"
      case "LogError":
        return "the event log did not answer; retry"
      case "ClusterError":
        return "the cluster did not answer; retry"
      default:
        return e.message
    }
  }
)

/** The terminal class: each failure's spec code. */
const table: Readonly<Record<string, Row>> = {
  // checkpoint and gateway
  Unauthorized: own(401, "unauthorized"),
  Forbidden: own(403, "forbidden"),
  BadRequest: own(400, "bad_request"),
  NotFound: own(404, "not_found"),
  // reason `invalid_json` or `json_too_deep`
  MalformedJson: own(400, "bad_request"),
  // as the IETF Idempotency-Key draft answers a key reused with another payload (docs/decisions.md)
  IdempotencyKeyReused: { status: 422, code: "unprocessable_content", reason: "idempotency_key_reused", message: (e) => e.message },
  // a replay cannot show a secret again: spec 2.6, the raw key is shown once (docs/decisions.md)
  SecretShownOnce: conflict("idempotent_replay_secret", (e) => e.message),
  // spec 7.1's code for 429, in the shape of the routes other than chat (docs/decisions.md)
  TooManyAttempts: {
    status: 429,
    code: "rate_limited",
    reason: "too_many_attempts",
    message: (e) => e.message,
    headers: (e) => ({ "retry-after": String(e.retryAfterSeconds) })
  },
  // the node holds as many turns or streams as it may (docs/decisions.md, "Admission control"): spec 7.2's code, before any stream opens
  Overloaded: {
    status: 503,
    code: "engine_unavailable",
    reason: (e) => e.bound,
    message: (e) => e.message,
    headers: (e) => ({ "retry-after": String(e.retryAfterSeconds) }),
    refusal: true
  },
  // beyond a rate or a fair share (docs/decisions.md, "Fair shares"); the chat routes answer spec 7.1's own body
  RateLimited: {
    status: 429,
    code: "rate_limited",
    reason: (e) => e.limit,
    message: (e) => e.message,
    headers: (e) => ({ "retry-after": String(e.retryAfterSeconds) })
  },
  // schema registry
  InvalidLabelName: badRequest("invalid_label_name", (e) => `'${e.label}' is not a valid label name`),
  InvalidPropertyName: badRequest("invalid_property_name", (e) => `'${e.property}' is not a valid property name`),
  EnumValuesRequired: badRequest("enum_values_required", (e) => `enum property ${e.property} needs a non-empty list of values`),
  DuplicateEnumValue: badRequest("duplicate_enum_value", (e) => `enum property ${e.property} lists '${e.value}' twice`),
  EnumValuesNotAllowed: badRequest("enum_values_not_allowed", (e) => `property ${e.property} is not an enum and takes no values`),
  // node properties
  UnknownProperty: badRequest("unknown_property", (e) => `the label declares no property ${e.property}`),
  InvalidPropertyType: badRequest("invalid_property_type", (e) => `property ${e.property} must be of type ${e.expected}`),
  InvalidEnumValue: badRequest("invalid_enum_value", (e) => `'${e.value}' is not a value of ${e.property} (allowed: ${e.allowed.join(", ")})`),
  MissingProperty: badRequest("missing_property", (e) => `property ${e.property} is required`),
  // automation conditions: the reasons of node properties where the meaning is the same
  UnknownConditionProperty: badRequest("unknown_property", (e) => e.message),
  OperatorNotAllowed: badRequest("operator_not_allowed", (e) => e.message),
  InvalidConditionEnumValue: badRequest("invalid_enum_value", (e) => e.message),
  InvalidConditionValue: badRequest("invalid_condition_value", (e) => e.message),
  InvalidConditionPath: badRequest("invalid_condition_path", (e) => e.message),
  DuplicateConditionId: badRequest("duplicate_condition_id", (e) => e.message),
  // automations and their runs
  AutomationNotFound: notFound("automation_not_found", (e) => `no automation ${e.automationId} in this workspace`),
  AutomationExists: conflict("automation_exists", (e) => `automation ${e.automationId} already exists`),
  HumanRequired: { status: 403, code: "forbidden", reason: "human_required", message: () => "only a person acting directly (signed in, on the API) may enable an automation" },
  AutomationIsDisabled: conflict("automation_disabled", (e) => `automation ${e.automationId} is disabled`),
  TriggerMismatch: conflict("trigger_mismatch", (e) => `automation ${e.automationId} has a ${e.expected} trigger, not ${e.got}`),
  ScheduleLimitReached: conflict("schedule_limit_reached", (e) => e.message),
  TickAlreadyDecided: conflict("tick_already_decided", (e) => `the tick ${e.tick} of automation ${e.automationId} was decided already`),
  AutomationRunNotFound: notFound("run_not_found", (e) => `no run ${e.runId} in this workspace`),
  // marketplace registries (actors/registry)
  RegistryNotFound: notFound("registry_not_found", (e) => `no registry ${e.registryId} in this organization`),
  RegistryExists: conflict("registry_exists", (e) => `the organization has a registry at ${e.baseUrl} already (${e.registryId})`),
  DefaultSeedPermanent: conflict("default_seed_registry", () => "the default seed registry is shared by every organization and cannot be removed"),
  SyncInProgress: conflict("sync_in_progress", (e) => `sync ${e.syncId} holds registry ${e.registryId} until ${e.leaseUntil}`),
  SyncNotActive: conflict("sync_not_active", (e) => `sync ${e.syncId} no longer holds registry ${e.registryId}`),
  RegistryDisabled: conflict("registry_disabled", (e) => `registry ${e.registryId} is disabled`),
  StaleStep: conflict("stale_step", (e) => `step ${e.index} attempt ${e.attempt} is not the run's current one`),
  RunNotWaiting: conflict("run_not_waiting", (e) => `run ${e.runId} is not waiting for input or approval`),
  // nodes
  NodeNotFound: notFound("node_not_found", (e) => `no node ${e.nodeId} in this workspace`),
  NodeAlreadyExists: conflict("node_exists", (e) => `node ${e.nodeId} already exists`),
  // identity
  OrganizationAlreadyExists: conflict("organization_exists", () => "the organization already exists"),
  OrganizationNotFound: notFound("organization_not_found", () => "no such organization"),
  WorkspaceAlreadyExists: conflict("workspace_exists", () => "the workspace already exists"),
  WorkspaceSlugTaken: conflict("workspace_slug_taken", (e) => `workspace slug ${e.slug} is taken in this organization`),
  WorkspaceNotFound: notFound("workspace_not_found", () => "no such workspace"),
  AlreadyMember: conflict("already_member", () => "the user is already a member"),
  NotOrgMember: conflict("not_org_member", () => "the user is not a member of the organization"),
  // organization SSO, security settings and custom roles
  NoVerifiedSsoProvider: conflict("no_verified_sso_provider", () => "verify an SSO provider before requiring SSO"),
  SsoProviderNotFound: notFound("sso_provider_not_found", (e) => `no SSO provider ${e.providerId} in this organization`),
  SsoProviderExists: conflict("sso_provider_exists", (e) => `SSO provider ${e.providerId} already exists`),
  SsoProviderNotVerified: conflict("sso_provider_not_verified", (e) => `SSO provider ${e.providerId} is not verified yet`),
  SsoProviderUnavailable: { status: 502, code: "bad_gateway", reason: "sso_provider_unavailable", message: (e) => e.message },
  SsoIdentityConflict: conflict("sso_identity_conflict", () => "this person is already linked to another account at this SSO provider"),
  OidcDiscoveryFailed: badRequest("sso_discovery_failed", (e) => `${e.message} (${e.reason})`),
  OidcLoginFailed: { status: 401, code: "unauthorized", reason: "sso_login_failed", message: (e) => e.message },
  EnterprisePlanRequired: { status: 403, code: "forbidden", reason: "enterprise_plan_required", message: () => "custom roles need the enterprise plan" },
  GrantOutOfScope: badRequest("grant_out_of_scope", (e) => `a ${e.scope} role cannot grant ${e.role}`),
  UserAlreadyRegistered: conflict("user_exists", () => "the user already exists"),
  ApiKeyAlreadyExists: conflict("api_key_exists", () => "the API key already exists"),
  ApiKeyNotFound: notFound("api_key_not_found", (e) => `no API key ${e.keyId}`),
  ReservedScopeKey: badRequest("reserved_scope_key", (e) => `scope key '${e.scopeKey}' is reserved`),
  UnknownPurpose: badRequest("unknown_purpose", (e) => `'${e.purpose}' is not a known credential purpose`),
  ApiKeyNotActive: conflict("key_not_active", (e) => `API key ${e.keyId} is ${e.status}, not active`),
  NotARotation: conflict("not_a_rotation", (e) => `API key ${e.newKeyId} did not replace ${e.keyId}`),
  // machine credentials
  MachineEnrolledElsewhere: { status: 403, code: "forbidden", reason: "machine_enrolled_elsewhere", message: (e) => `machine ${e.machineId} is not enrolled in this workspace` },
  MachineNotEnrolled: notFound("machine_not_found", (e) => `no machine ${e.machineId} is enrolled in this workspace`),
  CommandNotPending: notFound("command_not_found", (e) => `machine ${e.machineId} has no queued command ${e.commandId}`),
  PolicyVersionMismatch: conflict("policy_version_mismatch", (e) => `the policy bundle is at version ${e.currentVersion}, not ${e.expectedVersion}`),
  RepositoryNotRegistered: notFound("repository_not_registered", (e) => `repository ${e.repository} is not registered to this workspace`),
  NoRepositories: conflict("no_repositories", () => "no repository is registered to this workspace, so there is no Git credential to issue"),
  WorkOrderNotFound: notFound("work_order_not_found", (e) => `no work order ${e.workOrderId} in this workspace`),
  WorkOrderExists: conflict("work_order_exists", (e) => `work order ${e.workOrderId} already exists`),
  WorkOrderAlreadyClaimed: conflict("work_order_claimed", (e) => `work order ${e.workOrderId} is claimed by another machine`),
  // CLI device login (approve and deny; the token route answers in RFC 8628's own shape)
  DeviceAlreadyExists: conflict("device_exists", (e) => `device login ${e.deviceId} already exists`),
  DeviceNotFound: notFound("device_code_not_found", () => "no CLI login shows this code"),
  DeviceCodeExpired: conflict("device_code_expired", () => "this CLI login's code has expired; start the CLI login again"),
  DevicePending: conflict("device_pending", () => "this CLI login has not been approved yet"),
  DeviceDenied: conflict("device_denied", () => "this CLI login was denied"),
  DeviceAlreadyApproved: conflict("device_already_approved", () => "this CLI login has already been approved by someone else or for another place"),
  DeviceAlreadyRedeemed: conflict("device_redeemed", () => "this CLI login has already been completed"),
  // assistant chat: conversations
  ConversationNotFound: notFound("conversation_not_found", (e) => `no conversation ${e.conversationId} in this workspace`),
  ApprovalExpired: conflict("approval_expired", () => "this approval has expired, was already answered, or is not yours"),
  QuestionNotFound: notFound("question_not_found", (e) => `no open question ${e.questionId} for you`),
  TurnNotFound: notFound("turn_not_found", (e) => `no running turn ${e.turnId} of yours`),
  CodegraphUnavailable: { status: 503, code: "unavailable", reason: "codegraph_unavailable", message: (e) => e.message },
  TurnIdInUse: conflict("turn_id_in_use", (e) => `a turn with id ${e.turnId} is still running in this conversation`),
  RunNotFound: notFound("run_not_found", (e) => `no run ${e.runId}`),
  // assistant billing
  InsufficientCredits: own(402, "insufficient_credits"),
  BillingSuspended: own(402, "billing_suspended"),
  AssistantSpendCap: own(402, "assistant_spend_cap"),
  WorkspaceBudgetSpent: own(402, "workspace_budget_spent"),
  ModelKeyLimitReached: own(402, "assistant_model_key_limit"),
  // assistant attachments
  AttachmentRefused: own(400, "attachment_refused"),
  FileAlreadyExists: conflict("file_exists", (e) => `file ${e.fileId} already exists`),
  // media packs: no video provider configured (docs/decisions.md, "Media packs")
  VideoProviderUnavailable: conflict("video_provider_unavailable", (e) => e.message),
  VideoProviderFailed: { status: 502, code: "bad_gateway", reason: "video_provider_failed", message: (e) => e.message },
  ImageProviderFailed: { status: 502, code: "bad_gateway", reason: "image_provider_failed", message: (e) => e.message },
  // workspace documents
  DocumentNotFound: notFound("document_not_found", (e) => `no document ${e.documentId} in this workspace`),
  DocumentAlreadyExists: conflict("document_exists", (e) => `document ${e.documentId} already exists`),
  DocumentModelFailed: { status: 502, code: "bad_gateway", reason: "document_model_failed", message: (e) => e.message },
  // assistant runs
  RunSummaryFailed: { status: 502, code: "bad_gateway", reason: "run_summary_failed", message: (e) => e.message },
  // assistant models
  ModelTierNotFound: notFound("model_tier_not_found", (e) => `no model tier '${e.slug}' in this organization`),
  ModelTierKeyMissing: conflict("model_tier_key_missing", (e) => `model tier '${e.slug}' pays with the organization's own ${e.family} key, and none is set`),
  ModelTierKeyCannotServe: conflict("model_tier_key_cannot_serve", (e) => `the organization's model keys cannot run ${e.model}, the model of tier '${e.slug}'`),
  ModelTierArchived: conflict("model_tier_archived", (e) => `model tier '${e.slug}' is archived`),
  ModelTierUnmapped: conflict("model_tier_unmapped", (e) => `model tier '${e.slug}' has no model`),
  ModelFamilyUnknown: conflict("model_family_unknown", (e) => `'${e.model}' names no known model family; use openai:<model>, anthropic:<model> or offline:<model>`),
  // a2a tasks
  TaskNotFound: notFound("task_not_found", (e) => `no task ${e.taskId}`),
  TaskNotCancelable: conflict("task_not_cancelable", (e) => `task ${e.taskId} is ${e.state} and can no longer be canceled`),
  TaskTerminal: conflict("task_terminal", (e) => `task ${e.taskId} is ${e.state} and takes no more messages`),
  TaskNotSubscribable: conflict("task_not_subscribable", (e) => `task ${e.taskId} is ${e.state}; only a task that has not ended can be subscribed to`),
  TaskNotAwaitingInput: conflict("task_not_awaiting_input", (e) => `task ${e.taskId} is ${e.state}, not waiting for input`),
  TaskAlreadyExists: conflict("task_exists", (e) => `task ${e.taskId} already exists`),
  // workspace agents
  AgentAlreadyExists: conflict("agent_exists", (e) => e.message),
  AgentNotFound: notFound("agent_not_found", (e) => e.message),
  SkillAlreadyExists: conflict("skill_exists", (e) => e.message),
  SkillNotFound: notFound("skill_not_found", (e) => e.message),
  AgentBuiltIn: conflict("agent_builtin", (e) => e.message),
  UnknownAgentTool: badRequest("unknown_tool", (e) => e.message),
  // plugin secrets at rest (docs/decisions.md, "Plugin notifications and encryption at rest")
  EncryptionNotConfigured: conflict("encryption_not_configured", (e) => e.message),
  NotificationNotFound: notFound("notification_not_found", (e) => e.message),
  NotificationExists: conflict("notification_exists", (e) => e.message),
  NoAlertRoles: badRequest("alert_roles_required", (e) => e.message),
  // org listings and workspace installs (docs/decisions.md, "Plugin listings, workspace installs and credentials")
  ListingNotFound: notFound("listing_not_found", (e) => `no listing ${e.listingId} on this organization's allow-list`),
  ListingExists: conflict("listing_exists", (e) => `${e.name} is already on this organization's allow-list (${e.listingId})`),
  // spec 7.3: the code alone, the same on every surface; 403 as any refusal to run (docs/decisions.md, "Pack entitlement")
  CapabilityNotInstalled: own(403, "capability_not_installed"),
  CapabilityListing: conflict("capability_listing", (e) => `${e.listingId} is a capability pack: it is enabled for the whole organization, not per workspace`),
  ListingDisabledInOrg: conflict("listing_disabled", (e) => `${e.listingId} is disabled for the organization; an Owner or Admin enables it first`),
  NotEnabledInWorkspace: conflict("not_enabled_in_workspace", (e) => `${e.listingId} is not enabled in this workspace`),
  AuthKindMismatch: conflict("auth_kind_mismatch", (e) => e.message),
  CredentialNotFound: notFound("credential_not_found", (e) => `no credential ${e.credentialId} in this workspace`),
  CredentialNotActive: conflict("credential_not_active", (e) => `credential ${e.credentialId} is ${e.status ?? "not set up"}`),
  OAuthServerFailed: { status: 502, code: "bad_gateway", reason: "oauth_server_failed", message: (e) => `OAuth ${e.step} failed at the authorization server: ${e.message}` },
  ClientCredentialsRequired: badRequest("client_credentials_required", (e) => e.message),
  OAuthDenied: badRequest("oauth_denied", (e) => e.message),
  OAuthStateInvalid: badRequest("oauth_state_invalid", (e) =>
    e.why === "used" ? "this authorization was completed or abandoned already; start again"
      : e.why === "expired" ? "this authorization took too long; start again"
        : e.why === "other_person" ? "this authorization was started by another person"
          : "no authorization is in progress for this state; start again"),
  EnvelopeUnreadable: conflict("credential_unreadable", (e) => `${e.message}; enter the secret again or re-authenticate`)
}

export type { FailureDescription }


/** The failure and its row of the table, when it has one. */
const rowOf = <E>(cause: Cause.Cause<E>): { readonly error: Tagged; readonly row: Row } | undefined => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return undefined
  const error = failure.value as Tagged
  const row = isRetryable(error) ? retryable : table[error?._tag]
  return row === undefined ? undefined : { error, row }
}

/** A 5xx names what failed for the log (its message may say more than the answer does). */
const describeRow = <E>(cause: Cause.Cause<E>, { error, row }: { readonly error: Tagged; readonly row: Row }): FailureDescription => ({
  status: row.status,
  code: row.code,
  reason: typeof row.reason === "function" ? row.reason(error) : row.reason ?? error.reason,
  message: row.message(error),
  ...(row.status >= 500 && row.refusal !== true ? { failure: causeFields(cause) } : {})
})

/** A failure the table does not know: 500 internal, and what it was for the log. */
const unexpected = <E>(cause: Cause.Cause<E>): FailureDescription => ({
  status: 500,
  code: "internal",
  reason: undefined,
  message: "Internal error",
  failure: causeFields(cause)
})

/** What a failure means, from the one table; an unknown failure is 500 internal. A 5xx carries what failed, for whoever logs it. */
export const describeFailure = <E>(cause: Cause.Cause<E>): FailureDescription => {
  const found = rowOf(cause)
  return found === undefined ? unexpected(cause) : describeRow(cause, found)
}

/** The reply for a failed request; an unknown failure is answered 500. A 5xx's request line says what failed. */
export const replyForFailure = <E>(cause: Cause.Cause<E>): HttpReply => {
  const found = rowOf(cause)
  const { status, code, reason, message, failure } = found === undefined ? unexpected(cause) : describeRow(cause, found)
  const reply = jsonError(status, code, message, reason)
  return {
    ...reply,
    ...(found?.row.headers === undefined ? {} : { headers: found.row.headers(found.error) }),
    ...(failure === undefined ? {} : { failure })
  }
}

/** 200 with the output, or the mapped failure. */
export const replyForExit = <A, E>(exit: Exit.Exit<A, E>): HttpReply =>
  Exit.isSuccess(exit) ? { status: 200, json: exit.value } : replyForFailure(exit.cause)
