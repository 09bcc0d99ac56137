/**
 * The identity wing's contracts: API keys, the person's own account and two-factor, CLI device
 * logins, the caller's own identity and access, machine credentials' own calls (host and
 * telemetry keys, and what Owners and workspace Admins see of them) and organization
 * administration (SSO providers, security settings, organization and workspace settings,
 * workspaces, custom roles).
 */
import { Schema } from "effect"
import { defineContract, type Role } from "../checkpoint/Capability.ts"
import { PolicyRule } from "../../actors/fleet/events.ts"
import { HostEvent } from "../../actors/machine/events.ts"
import { GrantableRole, Plan, Slug } from "../../actors/org/events.ts"
import { TelemetryPoint } from "../../actors/telemetry/events.ts"
import { AsOf } from "../platform/AsOf.ts"
import { PageLimit } from "../platform/Paging.ts"

// Keys, account, device logins, identity

const keyManagers = { roles: ["org:owner", "workspace:admin"], scope: "workspace", surfaces: ["api"], claimedBy: "builtin", needsApproval: false } as const

const KeyPublicId = Schema.Struct({ keyPublicId: Schema.String.pipe(Schema.pattern(/^aky_[0-9a-f]{32}$/)) })

export const createApiKey = defineContract({
  ...keyManagers,
  name: "create_api_key",
  description: "Create an API key: a workspace key (workspace Admin or Owner) or an organization key (Owner). The raw key is returned once.",
  sensitivity: "high",
  mutating: true,
  destructive: false,
  input: Schema.Struct({
    name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(100)),
    /** `workspace` (default): acts in the path's workspace; `organization`: an organization key. */
    level: Schema.optional(Schema.Literal("workspace", "organization")),
    scopes: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
    expiresInDays: Schema.optional(Schema.Int.pipe(Schema.between(1, 3650))),
    /** Enterprise plans: an organization custom role of the key's level. */
    customRole: Schema.optional(Schema.NonEmptyString)
  }),
  output: Schema.Struct({
    publicId: Schema.String,
    rawKey: Schema.String,
    name: Schema.String,
    orgId: Schema.String,
    workspaceId: Schema.NullOr(Schema.String),
    expiresAt: Schema.NullOr(Schema.String)
  })
})

export const rotateApiKey = defineContract({
  ...keyManagers,
  name: "api_key.rotate",
  rest: { method: "post", path: "api-keys/rotate" },
  description: "Rotate an API key: a new key is issued, and the old one keeps working for 24 hours or until the rotation is acknowledged.",
  requiresPerson: true,
  sensitivity: "high",
  mutating: true,
  destructive: false,
  input: KeyPublicId,
  output: Schema.Struct({
    publicId: Schema.String,
    rawKey: Schema.String,
    superseded: Schema.Struct({ publicId: Schema.String, expiresAt: Schema.String })
  })
})

export const acknowledgeRotation = defineContract({
  ...keyManagers,
  name: "api_key.acknowledge_rotation",
  rest: { method: "post", path: "api-keys/rotate/acknowledge" },
  description: "Confirm a rotation with the new key's id: the old key stops at once.",
  requiresPerson: true,
  sensitivity: "high",
  mutating: true,
  destructive: true,
  input: KeyPublicId,
  output: Schema.Struct({ acknowledged: Schema.Literal(true), keyPublicId: Schema.String, revokedKeyPublicId: Schema.String })
})

export const revokeApiKey = defineContract({
  ...keyManagers,
  name: "api_key.revoke",
  rest: { method: "del", path: "api-keys/revoke" },
  description: "Revoke an API key: later requests with it fail.",
  requiresPerson: true,
  sensitivity: "high",
  mutating: true,
  destructive: true,
  input: KeyPublicId,
  output: Schema.Struct({ revoked: Schema.Literal(true), keyPublicId: Schema.String })
})

const KeySummary = Schema.Struct({
  publicId: Schema.String,
  name: Schema.String,
  workspaceId: Schema.NullOr(Schema.String),
  status: Schema.Literal("active", "grace", "expired", "revoked"),
  createdBy: Schema.String,
  createdAt: Schema.String,
  expiresAt: Schema.NullOr(Schema.String),
  supersedes: Schema.NullOr(Schema.String),
  supersededBy: Schema.NullOr(Schema.String)
})

export const listApiKeys = defineContract({
  ...keyManagers,
  name: "api_key.list",
  description: "List the API keys the caller manages: the workspace's keys, and for an Owner the organization keys too. Never a secret.",
  sensitivity: "medium",
  mutating: false,
  destructive: false,
  input: Schema.Struct({}),
  output: Schema.Struct({ keys: Schema.Array(KeySummary) })
})

export const getApiKey = defineContract({
  ...keyManagers,
  name: "api_key.get",
  description: "Read one API key the caller manages, as the list shows it; with asOf, as it stood at that moment. Never a secret.",
  sensitivity: "medium",
  mutating: false,
  destructive: false,
  input: Schema.Struct({ ...KeyPublicId.fields, asOf: Schema.optional(AsOf) }),
  output: KeySummary
})

const ownAccount = {
  scope: "principal",
  roles: ["person"],
  requiresPerson: true,
  surfaces: ["api"],
  sensitivity: "high",
  mutating: true,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
} as const

export const enrolMfa = defineContract({
  ...ownAccount,
  name: "auth.mfa.enroll",
  description: "Start two-factor enrolment: returns a new TOTP secret and its otpauth URI, shown once.",
  input: Schema.Struct({}),
  output: Schema.Struct({ secret: Schema.String, otpauthUri: Schema.String })
})

export const confirmMfa = defineContract({
  ...ownAccount,
  name: "auth.mfa.confirm",
  description: "Finish two-factor enrolment with a current code from the new secret.",
  input: Schema.Struct({ code: Schema.String.pipe(Schema.maxLength(16)) }),
  output: Schema.Struct({ mfaEnabled: Schema.Literal(true) })
})

export const EnterableWorkspace = Schema.Struct({
  workspaceId: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  /** Null: an Owner's way in, without a role of the workspace's own. */
  role: Schema.NullOr(Schema.Literal("admin", "member", "viewer"))
})

export const AccountMembership = Schema.Struct({
  orgId: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  role: Schema.Literal("owner", "member"),
  /** The workspaces the person may enter: those they hold a role in, and for an Owner every one. */
  workspaces: Schema.Array(EnterableWorkspace)
})

export const getAccount = defineContract({
  ...ownAccount,
  name: "account.get",
  description:
    "Your account: user id, email, name, whether two-factor is on, and your organizations (your role in each) with the workspaces you may enter (your role in each). A CLI login sees its own organization only.",
  mutating: false,
  sensitivity: "low",
  input: Schema.Struct({}),
  output: Schema.Struct({ userId: Schema.String, email: Schema.String, name: Schema.String, mfaEnabled: Schema.Boolean, memberships: Schema.Array(AccountMembership) })
})

const deviceDecision = {
  scope: "workspace",
  surfaces: ["api"],
  roles: ["person"],
  requiresPerson: true,
  sensitivity: "high",
  mutating: true,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
} as const

const UserCode = Schema.String.pipe(Schema.maxLength(32))

export const approveDevice = defineContract({
  ...deviceDecision,
  name: "auth.device.approve",
  description:
    "Approve a CLI login by the code it shows: the CLI then signs in as you, in this workspace or (level organization) at organization level, with your live roles.",
  input: Schema.Struct({
    userCode: UserCode,
    /** `workspace` (default): the workspace the path names; `organization`: an organization-level login. */
    level: Schema.optional(Schema.Literal("workspace", "organization"))
  }),
  output: Schema.Struct({
    userCode: Schema.String,
    clientName: Schema.String,
    status: Schema.Literal("approved"),
    level: Schema.Literal("workspace", "organization"),
    orgId: Schema.String,
    workspaceId: Schema.NullOr(Schema.String)
  })
})

export const denyDevice = defineContract({
  ...deviceDecision,
  name: "auth.device.deny",
  description: "Deny a CLI login by the code it shows: its next poll is told access_denied.",
  input: Schema.Struct({ userCode: UserCode }),
  output: Schema.Struct({ userCode: Schema.String, clientName: Schema.String, status: Schema.Literal("denied") })
})

export const whoami = defineContract({
  name: "auth.whoami",
  description: "Who the presented credential is: its key id, organization, workspace and person.",
  scope: "principal",
  input: Schema.Struct({}),
  output: Schema.Struct({
    authenticated: Schema.Literal(true),
    apiKeyId: Schema.String,
    orgId: Schema.String,
    workspaceId: Schema.NullOr(Schema.String),
    userId: Schema.NullOr(Schema.String)
  }),
  surfaces: ["api", "mcp"],
  roles: ["org:owner", "org:member", "workspace:admin", "workspace:member", "workspace:viewer", "person"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
})

export const getAccess = defineContract({
  name: "access.get",
  description:
    "What you may do in this workspace: the names of the capabilities you may invoke here over the API (by the checkpoint's own rules: your roles, your credential's kind, the packs the organization enabled), and your workspace and organization roles.",
  scope: "workspace",
  input: Schema.Struct({}),
  output: Schema.Struct({
    capabilities: Schema.Array(Schema.String),
    workspaceRole: Schema.NullOr(Schema.Literal("admin", "member", "viewer")),
    orgRole: Schema.NullOr(Schema.Literal("owner", "member"))
  }),
  surfaces: ["api"],
  roles: ["org:owner", "org:member", "workspace:admin", "workspace:member", "workspace:viewer"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
})

// ---------------------------------------------------------------------------------------------
// Machine credentials

/** Largest JSON size of one batch of host events or telemetry points. */
export const MAX_BATCH_BYTES = 256 * 1024
/** Most host events in one ingestion call. */
export const MAX_HOST_EVENTS = 500
/** Most telemetry points in one call. */
export const MAX_TELEMETRY_POINTS = 1000

const machineHost = {
  scope: "workspace",
  surfaces: ["api"],
  roles: [],
  machines: ["host"],
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
} as const

const machineHostWrites = { ...machineHost, mutating: true, sensitivity: "medium" } as const
const machineHostReads = { ...machineHost, mutating: false, sensitivity: "medium" } as const

const machineViewers: ReadonlyArray<Role> = ["org:owner", "workspace:admin"]
const machineLists = {
  scope: "workspace",
  surfaces: ["api"],
  roles: machineViewers,
  mutating: false,
  destructive: false,
  needsApproval: false,
  sensitivity: "medium",
  claimedBy: "builtin"
} as const

const MachineText = (max: number) => Schema.String.pipe(Schema.maxLength(max))
const MachineLimit = Schema.optional(PageLimit)

// host key calls

export const ingestEvents = defineContract({
  ...machineHostWrites,
  name: "host.events.ingest",
  description: "Store a batch of events the enrolled machine reports (at most 500, 256 KiB of JSON).",
  input: Schema.Struct({ events: Schema.Array(HostEvent).pipe(Schema.minItems(1), Schema.maxItems(MAX_HOST_EVENTS)) }),
  output: Schema.Struct({ batchId: Schema.String, accepted: Schema.Int })
})

export const getPolicy = defineContract({
  ...machineHostReads,
  name: "host.policy.get",
  description: "The workspace's current policy bundle for the machine: its version (0 while an Owner or Admin has set none) and rules.",
  input: Schema.Struct({}),
  output: Schema.Struct({
    workspaceId: Schema.String,
    machineId: Schema.String,
    version: Schema.Int,
    rules: Schema.Array(PolicyRule),
    issuedAt: Schema.String
  })
})

export const QueuedCommand = Schema.Struct({ commandId: Schema.String, name: Schema.String, arguments: Schema.Unknown, enqueuedAt: Schema.String })

export const pollCommands = defineContract({
  ...machineHostReads,
  name: "host.commands.poll",
  description: "The commands an Owner or Admin queued for the machine that it has not acknowledged yet, oldest first.",
  input: Schema.Struct({}),
  output: Schema.Struct({ machineId: Schema.String, commands: Schema.Array(QueuedCommand) })
})

const CommandOutcome = Schema.Literal("succeeded", "failed")

export const acknowledgeCommand = defineContract({
  ...machineHostWrites,
  name: "host.commands.acknowledge",
  description: "Acknowledge a queued command, saying whether it succeeded: it leaves the queue. A command not queued for the machine, or acknowledged already, is 404 command_not_found.",
  input: Schema.Struct({ commandId: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(64)), outcome: CommandOutcome, detail: Schema.optional(MachineText(2000)) }),
  output: Schema.Struct({ commandId: Schema.String, outcome: CommandOutcome, acknowledgedAt: Schema.String })
})

export const getGitCredential = defineContract({
  ...machineHostReads,
  sensitivity: "high",
  name: "host.git_credential.get",
  description:
    "A short-lived Git credential (an EdDSA JWT signed by the workspace's machine CA, valid 60 minutes) for one repository an Owner or Admin registered. Without `repository`, the workspace's only repository. 409 no_repositories when none is registered; 404 repository_not_registered for another repository; 400 repository_required when several are registered and none is named.",
  input: Schema.Struct({ repository: Schema.optional(MachineText(512)) }),
  output: Schema.Struct({ repository: Schema.String, username: Schema.String, password: Schema.String, expiresAt: Schema.String })
})

export const uploadMemory = defineContract({
  ...machineHostWrites,
  name: "host.memory.upload",
  description: "Store a memory (text, up to 16000 characters, with optional tags) for the machine.",
  input: Schema.Struct({
    text: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(16_000)),
    tags: Schema.optional(Schema.Array(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(16)))
  }),
  output: Schema.Struct({ memoryId: Schema.String, uploadedAt: Schema.String })
})

export const MachineMemory = Schema.Struct({ memoryId: Schema.String, text: Schema.String, tags: Schema.Array(Schema.String), uploadedAt: Schema.String })
export type MachineMemory = typeof MachineMemory.Type

export const recallMemory = defineContract({
  ...machineHostReads,
  name: "host.memory.recall",
  description: "The machine's own memories whose text contains the query (case-insensitive), newest first.",
  input: Schema.Struct({ query: MachineText(500), limit: MachineLimit }),
  output: Schema.Struct({ memories: Schema.Array(MachineMemory) })
})

export const claimWorkOrder = defineContract({
  ...machineHostWrites,
  name: "host.work_orders.claim",
  description:
    "Claim a work order an Owner or Admin created in the workspace, for the machine: exactly one machine gets it. Claiming it again returns the same claim; a work order another machine claimed is refused with 409 work_order_claimed, one not in the workspace with 404 work_order_not_found.",
  input: Schema.Struct({ workOrderId: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(128)) }),
  output: Schema.Struct({ claimId: Schema.String, workOrderId: Schema.String, machineId: Schema.String, claimedAt: Schema.String })
})

export const renewCertificate = defineContract({
  ...machineHostWrites,
  name: "host.certificate.renew",
  description:
    "Issue the machine a client certificate (X.509, clientAuth, valid 24 hours) for its public key (SPKI PEM: Ed25519, EC or RSA), signed by the workspace's machine CA, whose certificate comes with it.",
  input: Schema.Struct({ publicKey: Schema.NonEmptyString.pipe(Schema.maxLength(16_384)) }),
  output: Schema.Struct({ serialNumber: Schema.String, certificate: Schema.String, caCertificate: Schema.String, notBefore: Schema.String, notAfter: Schema.String })
})

// telemetry key

export const ingestTelemetry = defineContract({
  name: "telemetry.ingest",
  description: "Store a batch of operational telemetry points (at most 1000, 256 KiB of JSON).",
  scope: "organization",
  surfaces: ["api"],
  roles: [],
  machines: ["telemetry"],
  mutating: true,
  destructive: false,
  needsApproval: false,
  sensitivity: "low",
  claimedBy: "builtin",
  input: Schema.Struct({ points: Schema.Array(TelemetryPoint).pipe(Schema.minItems(1), Schema.maxItems(MAX_TELEMETRY_POINTS)) }),
  output: Schema.Struct({ batchId: Schema.String, accepted: Schema.Int })
})

// what Owners and workspace Admins see

export const EnrolledMachine = Schema.Struct({
  machineId: Schema.String,
  keyId: Schema.String,
  enrolledAt: Schema.String,
  lastSeenAt: Schema.String,
  eventsIngested: Schema.Int,
  memories: Schema.Int,
  workOrdersClaimed: Schema.Int,
  codegraphBuilds: Schema.Int,
  certificateRenewals: Schema.Int
})
export type EnrolledMachine = typeof EnrolledMachine.Type

export const listMachines = defineContract({
  ...machineLists,
  name: "machine.list",
  description: "The machines enrolled in the workspace, with counts of what their host keys recorded.",
  input: Schema.Struct({}),
  output: Schema.Struct({ machines: Schema.Array(EnrolledMachine) })
})

export const MachineRecordKind = Schema.Literal("events", "memory", "work_order_claim", "codegraph_build", "certificate_renewal")

export const MachineRecord = Schema.Struct({
  recordId: Schema.String,
  machineId: Schema.String,
  kind: MachineRecordKind,
  subject: Schema.NullOr(Schema.String),
  body: Schema.NullOr(Schema.String),
  detail: Schema.Unknown,
  at: Schema.String
})
export type MachineRecord = typeof MachineRecord.Type

export const listMachineRecords = defineContract({
  ...machineLists,
  name: "machine.records.list",
  description: "What the workspace's machines recorded (ingested events, memories, work order claims, issued certificates), newest first.",
  input: Schema.Struct({ machineId: Schema.optional(Schema.String), kind: Schema.optional(MachineRecordKind), limit: MachineLimit }),
  output: Schema.Struct({ records: Schema.Array(MachineRecord) })
})

export const TelemetryBatch = Schema.Struct({ batchId: Schema.String, keyId: Schema.String, points: Schema.Array(TelemetryPoint), at: Schema.String })
export type TelemetryBatch = typeof TelemetryBatch.Type

export const listTelemetry = defineContract({
  ...machineLists,
  name: "telemetry.list",
  description: "Telemetry batches sent for the workspace, newest first.",
  input: Schema.Struct({ limit: MachineLimit }),
  output: Schema.Struct({ batches: Schema.Array(TelemetryBatch) })
})

// what Owners and workspace Admins set

const machineSetters = { ...machineLists, mutating: true } as const

export const setMachinePolicy = defineContract({
  ...machineSetters,
  sensitivity: "high",
  name: "machine.policy.set",
  description: "Replace the policy bundle of the workspace's machines with a new version. With `expectedVersion`, only if that is still the current version (else 409 policy_version_mismatch).",
  input: Schema.Struct({ rules: Schema.Array(PolicyRule).pipe(Schema.maxItems(500)), expectedVersion: Schema.optional(Schema.Int.pipe(Schema.nonNegative())) }),
  output: Schema.Struct({ version: Schema.Int, rules: Schema.Array(PolicyRule) })
})

export const enqueueMachineCommand = defineContract({
  ...machineSetters,
  name: "machine.commands.enqueue",
  description: "Queue a command for a machine enrolled in the workspace; the machine polls for it and acknowledges it. 404 machine_not_found for a machine not enrolled here.",
  input: Schema.Struct({
    machineId: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(128)),
    name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200)),
    arguments: Schema.optional(Schema.Unknown)
  }),
  output: Schema.Struct({ commandId: Schema.String, machineId: Schema.String, name: Schema.String, enqueuedAt: Schema.String })
})

export const MachineCommandEntry = Schema.Struct({
  ...QueuedCommand.fields,
  machineId: Schema.String,
  enqueuedBy: Schema.String,
  acknowledgedAt: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(CommandOutcome),
  detail: Schema.NullOr(Schema.String)
})
export type MachineCommandEntry = typeof MachineCommandEntry.Type

export const listMachineCommands = defineContract({
  ...machineLists,
  name: "machine.commands.list",
  description: "The commands queued for the workspace's machines (of one machine, if given), with their acknowledgements, newest first.",
  input: Schema.Struct({ machineId: Schema.optional(Schema.String), limit: MachineLimit }),
  output: Schema.Struct({ commands: Schema.Array(MachineCommandEntry) })
})

const Repository = Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(512))

export const registerRepository = defineContract({
  ...machineSetters,
  name: "machine.repositories.register",
  description: "Register a repository (its clone URL) the workspace's machines may get a Git credential for. Registering it again changes nothing.",
  input: Schema.Struct({ repository: Repository }),
  output: Schema.Struct({ repository: Schema.String })
})

export const removeRepository = defineContract({
  ...machineSetters,
  destructive: true,
  name: "machine.repositories.remove",
  description: "Remove a registered repository: the workspace's machines get no more Git credentials for it (credentials already given run out within 60 minutes). Removing one not registered changes nothing.",
  input: Schema.Struct({ repository: Repository }),
  output: Schema.Struct({ repository: Schema.String, removed: Schema.Literal(true) })
})

export const RegisteredRepository = Schema.Struct({ repository: Schema.String, registeredBy: Schema.String, registeredAt: Schema.String })
export type RegisteredRepository = typeof RegisteredRepository.Type

export const listRepositories = defineContract({
  ...machineLists,
  name: "machine.repositories.list",
  description: "The repositories the workspace's machines may get a Git credential for.",
  input: Schema.Struct({}),
  output: Schema.Struct({ repositories: Schema.Array(RegisteredRepository) })
})

export const createWorkOrder = defineContract({
  ...machineSetters,
  name: "machine.work_orders.create",
  description: "Create a work order for the workspace's machines; one of them claims it with host.work_orders.claim.",
  input: Schema.Struct({ title: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200)), detail: Schema.optional(MachineText(16_000)) }),
  output: Schema.Struct({ workOrderId: Schema.String, title: Schema.String, createdAt: Schema.String })
})

export const WorkOrder = Schema.Struct({
  workOrderId: Schema.String,
  title: Schema.String,
  detail: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  claimedBy: Schema.NullOr(Schema.String),
  claimedAt: Schema.NullOr(Schema.String)
})
export type WorkOrder = typeof WorkOrder.Type

export const listWorkOrders = defineContract({
  ...machineLists,
  name: "machine.work_orders.list",
  description: "The workspace's work orders, newest first, with the machine that claimed each.",
  input: Schema.Struct({ limit: MachineLimit }),
  output: Schema.Struct({ workOrders: Schema.Array(WorkOrder) })
})

export const getMachineCa = defineContract({
  ...machineLists,
  name: "machine.certificate_authority.get",
  description: "The certificate (PEM) of the workspace's machine CA, which signs its machines' client certificates and Git credentials: what a relying party trusts.",
  input: Schema.Struct({}),
  output: Schema.Struct({ certificate: Schema.String })
})

// ---------------------------------------------------------------------------------------------
// Organization administration

const orgAdminOwners: ReadonlyArray<Role> = ["org:owner"]
const orgAdminReaders: ReadonlyArray<Role> = ["org:owner", "org:member"]
/** Every role that may enter a workspace (spec 5 rule 3: not an Org member, so no organization key). */
const orgAdminWorkspaceReaders: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"]

const orgAdminCommon = { scope: "organization", needsApproval: false, claimedBy: "builtin", destructive: false } as const
/** Owner-only administration by a signed-in person (never a key: rule 4, no key acts as Owner). */
const orgAdminOwnerWrites = { ...orgAdminCommon, roles: orgAdminOwners, requiresPerson: true, surfaces: ["api"], mutating: true, sensitivity: "high" } as const

// SSO providers

export const SsoProvider = Schema.Struct({
  providerId: Schema.String,
  name: Schema.String,
  issuer: Schema.String,
  clientId: Schema.String,
  status: Schema.Literal("registered", "verified"),
  createdAt: Schema.String,
  verifiedAt: Schema.NullOr(Schema.String)
})
export type SsoProvider = typeof SsoProvider.Type

const SsoIssuerUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { message: () => "issuer must be an http(s) URL" })
)

export const registerSsoProvider = defineContract({
  ...orgAdminOwnerWrites,
  name: "org.sso.register",
  description:
    "Register an OpenID Connect provider for the organization's single sign-on: its issuer and this platform's client id and secret there. Verify it before it can sign anyone in.",
  input: Schema.Struct({
    name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200)),
    issuer: SsoIssuerUrl,
    clientId: Schema.NonEmptyString.pipe(Schema.maxLength(1024)),
    clientSecret: Schema.NonEmptyString.pipe(Schema.maxLength(4096))
  }),
  output: Schema.Struct({ providerId: Schema.String, status: Schema.Literal("registered"), redirectUri: Schema.String })
})

export const verifySsoProvider = defineContract({
  ...orgAdminOwnerWrites,
  name: "org.sso.verify",
  description:
    "Verify a registered SSO provider: fetch its discovery document and check that it names the registered issuer. Only a verified provider signs people in.",
  input: Schema.Struct({ providerId: Schema.NonEmptyString }),
  output: Schema.Struct({ providerId: Schema.String, status: Schema.Literal("verified") })
})

export const listSsoProviders = defineContract({
  ...orgAdminCommon,
  name: "org.sso.list",
  description: "The organization's SSO providers and whether each is verified (never their secrets).",
  roles: orgAdminReaders,
  surfaces: ["api", "mcp"],
  sensitivity: "low",
  mutating: false,
  input: Schema.Struct({}),
  output: Schema.Struct({ providers: Schema.Array(SsoProvider), redirectUri: Schema.String })
})

// security settings

const OrgSecurity = Schema.Struct({
  requireSso: Schema.Boolean,
  requireMfa: Schema.Boolean,
  /** ISO 8601; null while two-factor is not required. */
  mfaGraceEndsAt: Schema.NullOr(Schema.String)
})

export const setSecurity = defineContract({
  ...orgAdminOwnerWrites,
  name: "org.security.set",
  description:
    "Require SSO (sessions must come from one of the organization's verified SSO providers; Owners exempt) and/or require two-factor authentication after a grace period of mfaGraceDays (default 7). A requirement already on keeps its grace period.",
  input: Schema.Struct({
    requireSso: Schema.optional(Schema.Boolean),
    requireMfa: Schema.optional(Schema.Boolean),
    mfaGraceDays: Schema.optional(Schema.Int.pipe(Schema.between(0, 90)))
  }),
  output: OrgSecurity
})

export const getOrgSettings = defineContract({
  ...orgAdminCommon,
  name: "org.settings.get",
  description: "The organization's settings: plan, Require SSO, Require two-factor and its grace period, and its SSO providers (never their secrets).",
  roles: orgAdminReaders,
  surfaces: ["api", "mcp"],
  sensitivity: "low",
  mutating: false,
  input: Schema.Struct({}),
  output: Schema.Struct({
    orgId: Schema.String,
    slug: Schema.String,
    name: Schema.String,
    plan: Plan,
    ...OrgSecurity.fields,
    providers: Schema.Array(SsoProvider)
  })
})

// workspaces

export const WorkspaceSettings = Schema.Struct({ workspaceId: Schema.String, slug: Schema.String, name: Schema.String, createdAt: Schema.String })
export type WorkspaceSettings = typeof WorkspaceSettings.Type

export const createWorkspace = defineContract({
  ...orgAdminCommon,
  name: "workspace.create",
  description: "Create a workspace in the organization.",
  // spec 5 rule 3: an organization key (Org member) can create workspaces
  roles: orgAdminReaders,
  surfaces: ["api", "mcp"],
  sensitivity: "medium",
  mutating: true,
  input: Schema.Struct({ slug: Slug, name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200)) }),
  output: WorkspaceSettings
})

export const getWorkspaceSettings = defineContract({
  name: "workspace.settings.get",
  description: "The workspace's settings: its id, slug and name.",
  scope: "workspace",
  // spec 5 rule 3: not an Org member (an organization key cannot read workspace settings)
  roles: orgAdminWorkspaceReaders,
  surfaces: ["api", "mcp"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  input: Schema.Struct({}),
  output: WorkspaceSettings
})

export const WorkspaceMember = Schema.Struct({
  userId: Schema.String,
  name: Schema.String,
  email: Schema.String,
  /** null for an organization Owner who is not a member of the workspace */
  workspaceRole: Schema.NullOr(Schema.String),
  orgRole: Schema.String
})
export type WorkspaceMember = typeof WorkspaceMember.Type

export const listWorkspaceMembers = defineContract({
  name: "workspace.members.list",
  description:
    "The people who can enter this workspace (its members, and the organization's Owners), sorted by name: user id, name, email, workspace role (null for an Owner who is not a member) and organization role.",
  scope: "workspace",
  // spec 5 rule 3: not an Org member (an organization key reads no workspace)
  roles: orgAdminWorkspaceReaders,
  surfaces: ["api", "mcp", "agent"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  input: Schema.Struct({}),
  output: Schema.Struct({ members: Schema.Array(WorkspaceMember) })
})

// custom roles

const OrgCustomRole = Schema.Struct({
  name: Slug,
  scope: Schema.Literal("organization", "workspace"),
  grants: Schema.Array(GrantableRole)
})

export const defineCustomRole = defineContract({
  ...orgAdminOwnerWrites,
  name: "org.custom_role.define",
  description:
    "Define (or redefine) a custom role keys may act as, granting built-in roles of its scope. Enterprise plan only.",
  input: OrgCustomRole,
  output: OrgCustomRole
})
