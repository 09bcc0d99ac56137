/**
 * The identity wing's contracts: machine credentials' own calls (host and telemetry keys, and
 * what Owners and workspace Admins see of them) and organization administration (SSO providers,
 * security settings, organization and workspace settings, workspaces, custom roles).
 */
import { Schema } from "effect"
import { HostEvent } from "../../actors/machine/events.ts"
import { GrantableRole, Plan, Slug } from "../../actors/org/events.ts"
import { TelemetryPoint } from "../../actors/telemetry/events.ts"
import { defineContract, type Role } from "../checkpoint/Capability.ts"
import { PageLimit } from "../platform/Paging.ts"

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
  description: "The workspace's policy bundle for the machine. No policy rules can be defined yet, so it is version 0 with no rules.",
  input: Schema.Struct({}),
  output: Schema.Struct({
    workspaceId: Schema.String,
    machineId: Schema.String,
    version: Schema.Int,
    rules: Schema.Tuple(),
    issuedAt: Schema.String
  })
})

export const pollCommands = defineContract({
  ...machineHostReads,
  name: "host.commands.poll",
  description: "Commands queued for the machine. Nothing queues commands for machines yet, so the list is empty.",
  input: Schema.Struct({}),
  output: Schema.Struct({ machineId: Schema.String, commands: Schema.Tuple() })
})

export const getGitCredential = defineContract({
  ...machineHostReads,
  sensitivity: "high",
  name: "host.git_credential.get",
  description: "A Git credential for the workspace's repositories. The platform keeps no repositories yet, so this is refused with 409 no_repositories.",
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
    "Claim a work order of the workspace for the machine. Claiming it again returns the same claim; a work order another machine claimed is refused with 409 work_order_claimed.",
  input: Schema.Struct({ workOrderId: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(128)) }),
  output: Schema.Struct({ claimId: Schema.String, workOrderId: Schema.String, machineId: Schema.String, claimedAt: Schema.String })
})

export const buildCodegraph = defineContract({
  ...machineHostWrites,
  name: "host.codegraph.build",
  description: "Record a request for a local code graph build of a repository. No code graph service acts on it yet; it is stored and listed.",
  input: Schema.Struct({ repository: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(512)), revision: Schema.optional(MachineText(200)) }),
  output: Schema.Struct({ buildId: Schema.String, status: Schema.Literal("requested"), requestedAt: Schema.String })
})

export const renewCertificate = defineContract({
  ...machineHostWrites,
  name: "host.certificate.renew",
  description:
    "Record a certificate renewal request, with an optional certificate signing request (PEM). No certificate authority signs it yet; the request is stored and listed.",
  input: Schema.Struct({ csr: Schema.optional(MachineText(16_384)) }),
  output: Schema.Struct({ renewalId: Schema.String, status: Schema.Literal("requested"), requestedAt: Schema.String })
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
  description: "What the workspace's machines recorded (ingested events, memories, work order claims, build and renewal requests), newest first.",
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
