/**
 * The identity wing's contracts: API keys, the person's own account and two-factor, CLI device
 * logins, and the caller's own identity and access.
 */
import { Schema } from "effect"
import { defineContract } from "../checkpoint/Capability.ts"

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
