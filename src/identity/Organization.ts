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
import { CreateWorkspace, DefineCustomRole, RegisterSsoProvider, SetSecurity, VerifySsoProvider } from "../../actors/org/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { discoverProvider, OidcDiscoveryFailed } from "./Oidc.ts"
import { nodeFetch } from "../platform/Outbound.ts"
import { PlatformSecrets } from "../platform/Secrets.ts"
import * as Api from "./Api.ts"
import { orgSettingsRow, orgSsoProviderSealed, orgSsoProviders, workspaceMemberRows, workspaceSettingsRow } from "./Queries.ts"

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

const orgOf = (invocation: Invocation) => invocation.orgId!

const DAY_MS = 24 * 60 * 60 * 1000

// ---------------------------------------------------------------------------------------------
// SSO providers

/** One provider of the organization with its sealed secret, as the read model holds it. */
export const findSsoProvider = (orgId: string, providerId: string) =>
  Effect.gen(function* () {
    const provider = yield* orgSsoProviderSealed(orgId, providerId)
    if (provider === undefined) return yield* new SsoProviderNotFound({ orgId, providerId })
    return provider
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

export const registerSsoProvider = implement(Api.registerSsoProvider, (invocation, input) =>
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
)

export const verifySsoProvider = implement(Api.verifySsoProvider, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const orgId = orgOf(invocation)
    const provider = yield* findSsoProvider(orgId, input.providerId)
    yield* discoverSsoProvider(provider)
    yield* host.send(OrgActor, orgId, new VerifySsoProvider({ orgId, providerId: input.providerId }), invocation.meta)
    return { providerId: input.providerId, status: "verified" as const }
  })
)

export const listSsoProviders = implement(Api.listSsoProviders, (invocation) =>
  Effect.gen(function* () {
    const baseUrl = yield* PublicUrl
    return { providers: yield* orgSsoProviders(orgOf(invocation)), redirectUri: ssoRedirectUri(baseUrl) }
  })
)

// ---------------------------------------------------------------------------------------------
// security settings

export const setSecurity = implement(Api.setSecurity, (invocation, input) =>
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
)

export const getOrgSettings = implement(Api.getOrgSettings, (invocation) =>
  Effect.gen(function* () {
    const orgId = orgOf(invocation)
    const row = yield* orgSettingsRow(orgId)
    return {
      orgId,
      slug: row?.slug ?? "",
      name: row?.name ?? "",
      plan: row?.plan === "enterprise" ? "enterprise" as const : "standard" as const,
      requireSso: row?.requireSso ?? false,
      requireMfa: row?.requireMfa ?? false,
      mfaGraceEndsAt: row?.mfaGraceEndsAt ?? null,
      providers: yield* orgSsoProviders(orgId)
    }
  })
)

// ---------------------------------------------------------------------------------------------
// workspaces

export const createWorkspace = implement(Api.createWorkspace, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const orgId = orgOf(invocation)
    const workspaceId = invocation.newId("wsp")
    yield* host.send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId, slug: input.slug, name: input.name }), invocation.meta)
    return { workspaceId, slug: input.slug, name: input.name, createdAt: invocation.at }
  })
)

export const getWorkspaceSettings = implement(Api.getWorkspaceSettings, (invocation) =>
  Effect.gen(function* () {
    const settings = yield* workspaceSettingsRow(invocation.workspaceId!)
    if (settings === undefined) return yield* Effect.dieMessage(`workspace ${invocation.workspaceId} passed the checkpoint but has no row`)
    return settings
  })
)

export const listWorkspaceMembers = implement(Api.listWorkspaceMembers, (invocation) =>
  Effect.map(workspaceMemberRows(orgOf(invocation), invocation.workspaceId!), (members) => ({ members }))
)

// ---------------------------------------------------------------------------------------------
// custom roles

export const defineCustomRole = implement(Api.defineCustomRole, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const orgId = orgOf(invocation)
    yield* host.send(OrgActor, orgId, new DefineCustomRole({ orgId, name: input.name, scope: input.scope, grants: input.grants }), invocation.meta)
    return input
  })
)

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
