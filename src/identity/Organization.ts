/**
 * Organization administration: SSO providers (OpenID Connect), the security settings of spec 5
 * rule 7 (Require SSO, Require two-factor), organization settings, workspaces and custom roles.
 * Mutations are commands to the organization actor; queries read its projections.
 *
 * A provider's client secret is sealed with the platform key before it reaches a command, so the
 * log and the read models only ever hold the sealed value; no output carries it.
 */
import { Context, Effect, Schema } from "effect"
import { OrgActor } from "../../actors/org/actor.ts"
import { SsoProviderNotFound } from "../../actors/org/errors.ts"
import { GrantableRole, Plan, Slug } from "../../actors/org/events.ts"
import { CreateWorkspace, DefineCustomRole, RegisterSsoProvider, SetSecurity, VerifySsoProvider } from "../../actors/org/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, defineCapability, type Invocation, type Role } from "../checkpoint/Capability.ts"
import { Db, query } from "../../streams/Db.ts"
import { discoverProvider, OidcDiscoveryFailed } from "./Oidc.ts"
import { nodeFetch } from "../platform/Outbound.ts"
import { PlatformSecrets } from "../platform/Secrets.ts"

/** The platform's public base URL (`AppConfig.baseUrl`), e.g. `https://svc.example.com`. */
export class PublicUrl extends Context.Tag("svc/PublicUrl")<PublicUrl, string>() {}

/** Where every organization's OpenID provider sends the browser back to. */
export const SSO_CALLBACK_PATH = "/v1/auth/sso/callback"

/** The redirect URI to register at the provider: `<baseUrl>/v1/auth/sso/callback`. */
export const ssoRedirectUri = (baseUrl: string) => `${baseUrl.replace(/\/+$/, "")}${SSO_CALLBACK_PATH}`

/** A provider that is registered but whose discovery has not (yet) succeeded cannot sign anyone in. */
export class SsoProviderNotVerified extends Schema.TaggedError<SsoProviderNotVerified>()("SsoProviderNotVerified", {
  orgId: Schema.String,
  providerId: Schema.String
}) {
  override get message() {
    return `SSO provider ${this.providerId} is not verified yet; verify it first`
  }
}

const OWNER: ReadonlyArray<Role> = ["org:owner"]
const ORG_READERS: ReadonlyArray<Role> = ["org:owner", "org:member"]

const common = { scope: "organization", needsApproval: false, claimedBy: "builtin", destructive: false } as const
/** Owner-only administration by a signed-in person (never a key: rule 4, no key acts as Owner). */
const ownerWrites = { ...common, roles: OWNER, requiresPerson: true, surfaces: ["api"], mutating: true, sensitivity: "high" } as const

const orgOf = (invocation: Invocation) => invocation.orgId!

const iso = (value: Date | string | null): string | null => (value instanceof Date ? value.toISOString() : value)

const DAY_MS = 24 * 60 * 60 * 1000

// ---------------------------------------------------------------------------------------------
// SSO providers

const Provider = Schema.Struct({
  providerId: Schema.String,
  name: Schema.String,
  issuer: Schema.String,
  clientId: Schema.String,
  status: Schema.Literal("registered", "verified"),
  createdAt: Schema.String,
  verifiedAt: Schema.NullOr(Schema.String)
})
type Provider = typeof Provider.Type

const toProvider = (row: Record<string, any>): Provider => ({
  providerId: row.provider_id,
  name: row.name,
  issuer: row.issuer,
  clientId: row.client_id,
  status: row.status === "verified" ? "verified" : "registered",
  createdAt: iso(row.created_at)!,
  verifiedAt: iso(row.verified_at)
})

/** The organization's providers, without their secrets. */
const providersOf = (orgId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("sso providers", () => db.sql`
      select provider_id, name, issuer, client_id, status, created_at, verified_at
      from ${db.table("sso_providers")} where org_id = ${orgId} order by created_at, provider_id`)
    return rows.map(toProvider)
  })

/** One provider of the organization with its sealed secret, as the read model holds it. */
export const findSsoProvider = (orgId: string, providerId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("sso provider", () => db.sql`
      select provider_id, org_id, name, issuer, client_id, client_secret_sealed, status, created_at, verified_at
      from ${db.table("sso_providers")} where org_id = ${orgId} and provider_id = ${providerId}`)
    if (row === undefined) return yield* new SsoProviderNotFound({ orgId, providerId })
    return { ...toProvider(row), orgId: row.org_id as string, clientSecretSealed: row.client_secret_sealed as string }
  })

/**
 * Discovers the provider with its own client credentials: the sealed secret is opened only here.
 * Any failure is an `OidcDiscoveryFailed`.
 */
export const discoverSsoProvider = (provider: { readonly issuer: string; readonly clientId: string; readonly clientSecretSealed: string }) =>
  Effect.gen(function* () {
    const secrets = yield* PlatformSecrets
    const clientSecret = secrets.open(provider.clientSecretSealed)
    if (clientSecret === undefined) {
      return yield* new OidcDiscoveryFailed({
        reason: "invalid_client",
        message: `the client secret of ${provider.issuer} cannot be opened with this platform key; register the provider again`
      })
    }
    const fetch = yield* nodeFetch
    return yield* Effect.tryPromise({
      try: () => discoverProvider({ issuer: provider.issuer, clientId: provider.clientId, clientSecret, fetch }),
      catch: (error) =>
        error instanceof OidcDiscoveryFailed
          ? error
          : new OidcDiscoveryFailed({ reason: "unreachable", message: `OIDC discovery failed for ${provider.issuer}` })
    })
  })

const IssuerUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { message: () => "issuer must be an http(s) URL" })
)

export const registerSsoProvider = defineCapability({
  ...ownerWrites,
  name: "org.sso.register",
  description:
    "Register an OpenID Connect provider for the organization's single sign-on: its issuer and this platform's client id and secret there. Verify it before it can sign anyone in.",
  input: Schema.Struct({
    name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200)),
    issuer: IssuerUrl,
    clientId: Schema.NonEmptyString.pipe(Schema.maxLength(1024)),
    clientSecret: Schema.NonEmptyString.pipe(Schema.maxLength(4096))
  }),
  output: Schema.Struct({ providerId: Schema.String, status: Schema.Literal("registered"), redirectUri: Schema.String }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const secrets = yield* PlatformSecrets
      const baseUrl = yield* PublicUrl
      const orgId = orgOf(invocation)
      const providerId = invocation.newId("sso")
      yield* host.send(OrgActor, orgId, new RegisterSsoProvider({
        orgId,
        providerId,
        name: input.name,
        issuer: input.issuer,
        clientId: input.clientId,
        clientSecretSealed: secrets.seal(input.clientSecret)
      }), invocation.meta)
      return { providerId, status: "registered" as const, redirectUri: ssoRedirectUri(baseUrl) }
    })
})

export const verifySsoProvider = defineCapability({
  ...ownerWrites,
  name: "org.sso.verify",
  description:
    "Verify a registered SSO provider: fetch its discovery document and check that it names the registered issuer. Only a verified provider signs people in.",
  input: Schema.Struct({ providerId: Schema.NonEmptyString }),
  output: Schema.Struct({ providerId: Schema.String, status: Schema.Literal("verified") }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const orgId = orgOf(invocation)
      const provider = yield* findSsoProvider(orgId, input.providerId)
      yield* discoverSsoProvider(provider)
      yield* host.send(OrgActor, orgId, new VerifySsoProvider({ orgId, providerId: input.providerId }), invocation.meta)
      return { providerId: input.providerId, status: "verified" as const }
    })
})

export const listSsoProviders = defineCapability({
  ...common,
  name: "org.sso.list",
  description: "The organization's SSO providers and whether each is verified (never their secrets).",
  roles: ORG_READERS,
  surfaces: ["api", "mcp"],
  sensitivity: "low",
  mutating: false,
  input: Schema.Struct({}),
  output: Schema.Struct({ providers: Schema.Array(Provider), redirectUri: Schema.String }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const baseUrl = yield* PublicUrl
      return { providers: yield* providersOf(orgOf(invocation)), redirectUri: ssoRedirectUri(baseUrl) }
    })
})

// ---------------------------------------------------------------------------------------------
// security settings

const Security = Schema.Struct({
  requireSso: Schema.Boolean,
  requireMfa: Schema.Boolean,
  /** ISO 8601; null while two-factor is not required. */
  mfaGraceEndsAt: Schema.NullOr(Schema.String)
})

export const setSecurity = defineCapability({
  ...ownerWrites,
  name: "org.security.set",
  description:
    "Require SSO (sessions must come from one of the organization's verified SSO providers; Owners exempt) and/or require two-factor authentication after a grace period of mfaGraceDays (default 7). A requirement already on keeps its grace period.",
  input: Schema.Struct({
    requireSso: Schema.optional(Schema.Boolean),
    requireMfa: Schema.optional(Schema.Boolean),
    mfaGraceDays: Schema.optional(Schema.Int.pipe(Schema.between(0, 90)))
  }),
  output: Security,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const orgId = orgOf(invocation)
      const graceDays = input.mfaGraceDays ?? 7
      const mfaGraceEndsAt = new Date(Date.parse(invocation.at) + graceDays * DAY_MS).toISOString()
      const { state } = yield* host.send(OrgActor, orgId, new SetSecurity({
        orgId,
        ...(input.requireSso === undefined ? {} : { requireSso: input.requireSso }),
        ...(input.requireMfa === undefined ? {} : { requireMfa: input.requireMfa }),
        mfaGraceEndsAt
      }), invocation.meta)
      if (state._tag !== "Active") return yield* Effect.dieMessage("SetSecurity succeeded on an absent organization")
      return { requireSso: state.requireSso, requireMfa: state.requireMfa, mfaGraceEndsAt: state.mfaGraceEndsAt }
    })
})

export const getOrgSettings = defineCapability({
  ...common,
  name: "org.settings.get",
  description: "The organization's settings: plan, Require SSO, Require two-factor and its grace period, and its SSO providers (never their secrets).",
  roles: ORG_READERS,
  surfaces: ["api", "mcp"],
  sensitivity: "low",
  mutating: false,
  input: Schema.Struct({}),
  output: Schema.Struct({
    orgId: Schema.String,
    slug: Schema.String,
    name: Schema.String,
    plan: Plan,
    ...Security.fields,
    providers: Schema.Array(Provider)
  }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const db = yield* Db
      const orgId = orgOf(invocation)
      const [row] = yield* query("org settings", () => db.sql`
        select o.org_id, o.slug, o.name, s.plan, s.require_sso, s.require_mfa, s.mfa_grace_ends_at
        from ${db.table("organizations")} o left join ${db.table("org_settings")} s using (org_id)
        where o.org_id = ${orgId}`)
      return {
        orgId,
        slug: row?.slug ?? "",
        name: row?.name ?? "",
        plan: row?.plan === "enterprise" ? "enterprise" as const : "standard" as const,
        requireSso: row?.require_sso ?? false,
        requireMfa: row?.require_mfa ?? false,
        mfaGraceEndsAt: iso(row?.mfa_grace_ends_at ?? null),
        providers: yield* providersOf(orgId)
      }
    })
})

// ---------------------------------------------------------------------------------------------
// workspaces

const Workspace = Schema.Struct({ workspaceId: Schema.String, slug: Schema.String, name: Schema.String, createdAt: Schema.String })

export const createWorkspace = defineCapability({
  ...common,
  name: "workspace.create",
  description: "Create a workspace in the organization.",
  // spec 5 rule 3: an organization key (Org member) can create workspaces
  roles: ORG_READERS,
  surfaces: ["api", "mcp"],
  sensitivity: "medium",
  mutating: true,
  input: Schema.Struct({ slug: Slug, name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200)) }),
  output: Workspace,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const orgId = orgOf(invocation)
      const workspaceId = invocation.newId("wsp")
      yield* host.send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId, slug: input.slug, name: input.name }), invocation.meta)
      return { workspaceId, slug: input.slug, name: input.name, createdAt: invocation.at }
    })
})

export const getWorkspaceSettings = defineCapability({
  name: "workspace.settings.get",
  description: "The workspace's settings: its id, slug and name.",
  scope: "workspace",
  // spec 5 rule 3: not an Org member (an organization key cannot read workspace settings)
  roles: ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"],
  surfaces: ["api", "mcp"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  input: Schema.Struct({}),
  output: Workspace,
  handler: (invocation) =>
    Effect.gen(function* () {
      const db = yield* Db
      const [row] = yield* query("workspace settings", () => db.sql`
        select workspace_id, slug, name, created_at from ${db.table("workspaces")} where workspace_id = ${invocation.workspaceId}`)
      if (row === undefined) return yield* Effect.dieMessage(`workspace ${invocation.workspaceId} passed the checkpoint but has no row`)
      return { workspaceId: row.workspace_id, slug: row.slug, name: row.name, createdAt: iso(row.created_at)! }
    })
})

const WorkspaceMember = Schema.Struct({
  userId: Schema.String,
  name: Schema.String,
  email: Schema.String,
  /** null for an organization Owner who is not a member of the workspace */
  workspaceRole: Schema.NullOr(Schema.String),
  orgRole: Schema.String
})

export const listWorkspaceMembers = defineCapability({
  name: "workspace.members.list",
  description:
    "The people who can enter this workspace (its members, and the organization's Owners), sorted by name: user id, name, email, workspace role (null for an Owner who is not a member) and organization role.",
  scope: "workspace",
  // spec 5 rule 3: not an Org member (an organization key reads no workspace)
  roles: ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"],
  surfaces: ["api", "mcp", "agent"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  input: Schema.Struct({}),
  output: Schema.Struct({ members: Schema.Array(WorkspaceMember) }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const db = yield* Db
      const rows = yield* query("workspace members", () => db.sql`
        select u.user_id, u.name, u.email, wm.role as workspace_role, om.role as org_role
        from ${db.table("org_members")} om
        join ${db.table("users")} u on u.user_id = om.user_id
        left join ${db.table("workspace_members")} wm on wm.workspace_id = ${invocation.workspaceId!} and wm.user_id = om.user_id
        where om.org_id = ${orgOf(invocation)} and (om.role = 'owner' or wm.role is not null)
        order by lower(u.name), u.name, u.email, u.user_id`)
      return {
        members: rows.map((row) => ({ userId: row.user_id, name: row.name, email: row.email, workspaceRole: row.workspace_role, orgRole: row.org_role }))
      }
    })
})

// ---------------------------------------------------------------------------------------------
// custom roles

const CustomRole = Schema.Struct({
  name: Slug,
  scope: Schema.Literal("organization", "workspace"),
  grants: Schema.Array(GrantableRole)
})

export const defineCustomRole = defineCapability({
  ...ownerWrites,
  name: "org.custom_role.define",
  description:
    "Define (or redefine) a custom role keys may act as, granting built-in roles of its scope. Enterprise plan only.",
  input: CustomRole,
  output: CustomRole,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const orgId = orgOf(invocation)
      yield* host.send(OrgActor, orgId, new DefineCustomRole({ orgId, name: input.name, scope: input.scope, grants: input.grants }), invocation.meta)
      return input
    })
})

export const organizationCapabilities: ReadonlyArray<AnyCapability> = [
  registerSsoProvider,
  verifySsoProvider,
  listSsoProviders,
  setSecurity,
  getOrgSettings,
  createWorkspace,
  getWorkspaceSettings,
  listWorkspaceMembers,
  defineCustomRole
]
