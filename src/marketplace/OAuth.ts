/**
 * OAuth 2.1 for plugin credentials (spec 5 rule 11), with the MCP SDK's client auth functions:
 * (a) RFC 9728 protected-resource and RFC 8414 authorization-server discovery, (b) RFC 7591
 * dynamic registration when the server offers it, else the admin's client credentials, (c) the
 * authorization code with PKCE S256 (the state bound to the person, listing and workspace, single
 * use, short-lived), (d) the token exchange, (e) refresh, (f) re-authentication from (c) with the
 * stored client id. Every request goes through the outbound guard (`checkedFetch`, src/platform/Outbound.ts); every secret (the
 * verifier, the client secret, the tokens) is sealed before it reaches a command.
 */
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization
} from "@modelcontextprotocol/sdk/client/auth.js"
import type { AuthorizationServerMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Clock, Effect, Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { CredentialActor } from "../../actors/credential/actor.ts"
import { CompleteAuthorization, ConsumeAuthorization, type OAuthOrigin, RecordRefresh, type SealedValue, StartAuthorization, type Tokens } from "../../actors/credential/protocol.ts"
import type { PendingAuthorization } from "../../actors/credential/state.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import type { AuthConfig } from "../../actors/listing/definition.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { PublicUrl } from "../identity/Organization.ts"
import { SecretShownOnce } from "../platform/Errors.ts"
import { OAuthStateInvalid } from "../../actors/credential/errors.ts"
import { credentialIdOf, sealContext } from "./Credentials.ts"
import { Envelope } from "./Envelope.ts"
import { readCredential } from "./Queries.ts"
import { nodeFetch } from "../platform/Outbound.ts"

/** Spec 4.5's callback path. */
export const OAUTH_CALLBACK_PATH = "/api/v1/plugins/oauth/callback"

/** How long a started authorization may wait for its callback. */
export const STATE_TTL_MS = 10 * 60 * 1000

/** Discovery, registration, the exchange or a refresh failed at the authorization server (or on the way). */
export class OAuthServerFailed extends Schema.TaggedError<OAuthServerFailed>()("OAuthServerFailed", {
  step: Schema.Literal("discovery", "registration", "authorization", "exchange", "refresh"),
  message: Schema.String,
  /** The OAuth error code the server answered with (`invalid_grant`, ...), when it answered one. */
  oauthError: Schema.NullOr(Schema.String)
}) {}

/** Dynamic registration not offered, or refused, and no client credentials given: 400 `client_credentials_required`. */
export class ClientCredentialsRequired extends Schema.TaggedError<ClientCredentialsRequired>()("ClientCredentialsRequired", {
  authorizationServerUrl: Schema.String,
  /** The OAuth error the server refused registration with; null when it offers none. */
  registrationRefused: Schema.NullOr(Schema.String)
}) {
  override get message() {
    const why = this.registrationRefused === null ? "offers no dynamic client registration" : `refused dynamic client registration (${this.registrationRefused})`
    return `${this.authorizationServerUrl} ${why}: give the clientId (and clientSecret) registered there`
  }
}

/** The person declined, or the authorization server answered the redirect with an error: 400 `oauth_denied`. */
export class OAuthDenied extends Schema.TaggedError<OAuthDenied>()("OAuthDenied", { error: Schema.String }) {
  override get message() {
    return `the authorization server answered '${this.error}'; nothing was connected`
  }
}

const oauthErrorOf = (error: unknown): string | null => {
  const code = (error as { readonly errorCode?: unknown })?.errorCode
  return typeof code === "string" ? code : null
}

const attempt = <A>(step: OAuthServerFailed["step"], run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (error) => new OAuthServerFailed({ step, message: error instanceof Error ? error.message : String(error), oauthError: oauthErrorOf(error) })
  })

interface Discovered {
  readonly origin: OAuthOrigin
  readonly metadata: AuthorizationServerMetadata
  /** What the protected resource says it accepts. */
  readonly scopesSupported: ReadonlyArray<string>
}

/** (a): the resource's metadata names its authorization server (none: the server's own origin), whose metadata follows. */
const discover = (endpointUrl: string, fetch: FetchLike) =>
  Effect.gen(function* () {
    const resource = yield* attempt("discovery", () => discoverOAuthProtectedResourceMetadata(endpointUrl, {}, fetch)).pipe(
      Effect.catchAll(() => Effect.succeed(undefined))
    )
    const authorizationServerUrl = resource?.authorization_servers?.[0] ?? new URL("/", endpointUrl).href
    const metadata = yield* authorizationServerMetadata(authorizationServerUrl, fetch)
    return {
      origin: { authorizationServerUrl, resource: resource?.resource ?? null },
      metadata,
      scopesSupported: resource?.scopes_supported ?? []
    } satisfies Discovered
  })

const authorizationServerMetadata = (authorizationServerUrl: string, fetch: FetchLike) =>
  Effect.flatMap(attempt("discovery", () => discoverAuthorizationServerMetadata(authorizationServerUrl, { fetchFn: fetch })), (metadata) =>
    metadata === undefined
      ? Effect.fail(new OAuthServerFailed({ step: "discovery", message: `${authorizationServerUrl} publishes no authorization server metadata`, oauthError: null }))
      : Effect.succeed(metadata)
  )

/** The `scope` to ask for: the listing's, else what the resource lists. */
const scopeOf = (authConfig: AuthConfig, discovered: Discovered): ReadonlyArray<string> => authConfig.scopes ?? discovered.scopesSupported

export interface ClientCredentials {
  readonly clientId: string
  readonly clientSecret: string | null
}

export interface AuthorizationRequest {
  readonly orgId: string
  readonly workspaceId: string
  readonly userId: string
  readonly listing: { readonly listingId: string; readonly endpointUrl: string; readonly authConfig: AuthConfig }
  /** The admin's client credentials, used when the workspace has no stored client id and the server offers no registration. */
  readonly client: ClientCredentials | undefined
  readonly meta: CommandMeta
}

const seal = (plain: string, context: string) =>
  Effect.map(Effect.flatMap(Envelope, (envelope) => envelope.seal(plain, context)), ({ ciphertext, keyId }): SealedValue => ({ ciphertext, keyId }))

/** The client id and secret of the workspace's credential, if it holds one (reused from (c) on, rule 11 f). */
const storedClient = (workspaceId: string, listingId: string) =>
  Effect.gen(function* () {
    const row = yield* readCredential(workspaceId, listingId)
    if (row === undefined || row.oauth_client_id === null) return undefined
    const secret = yield* (yield* Envelope).open(row.oauth_client_secret_enc, row.token_kms_key_id, sealContext(row.credential_id, "client_secret"))
    return { clientId: row.oauth_client_id as string, clientSecret: secret } satisfies ClientCredentials
  })

/**
 * (b): a client registered at the authorization server (RFC 7591) when it offers registration, else
 * the admin's; a refused registration falls back to the admin's too.
 */
const newClient = (discovered: Discovered, admins: ClientCredentials | undefined, redirectUri: string, scope: string | undefined, fetch: FetchLike) =>
  Effect.gen(function* () {
    const { authorizationServerUrl } = discovered.origin
    const required = (registrationRefused: string | null) => new ClientCredentialsRequired({ authorizationServerUrl, registrationRefused })
    if (discovered.metadata.registration_endpoint === undefined) return admins ?? (yield* required(null))
    return yield* attempt("registration", () =>
      registerClient(authorizationServerUrl, {
        metadata: discovered.metadata,
        clientMetadata: {
          client_name: "svc plugin connector",
          redirect_uris: [redirectUri],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "client_secret_basic"
        },
        scope,
        fetchFn: fetch
      })
    ).pipe(
      Effect.map((answer): ClientCredentials => ({ clientId: answer.client_id, clientSecret: answer.client_secret ?? null })),
      Effect.catchTag("OAuthServerFailed", (failed): Effect.Effect<ClientCredentials, OAuthServerFailed | ClientCredentialsRequired> =>
        admins !== undefined ? Effect.succeed(admins) : failed.oauthError === null ? Effect.fail(failed) : Effect.fail(required(failed.oauthError))
      )
    )
  })

/**
 * (a) to (c): discovers, finds the client (stored, else registered, else the admin's), and records
 * the authorization under way; the URL to send the person to.
 */
export const beginAuthorization = (request: AuthorizationRequest) =>
  Effect.gen(function* () {
    const fetch = yield* nodeFetch
    const { listing, workspaceId } = request
    const credentialId = credentialIdOf(workspaceId, listing.listingId)
    const redirectUri = new URL(OAUTH_CALLBACK_PATH, yield* PublicUrl).href
    const discovered = yield* discover(listing.endpointUrl, fetch)
    const { authorizationServerUrl } = discovered.origin
    const scopes = scopeOf(listing.authConfig, discovered)
    const scope = scopes.length === 0 ? undefined : scopes.join(" ")
    const client = (yield* storedClient(workspaceId, listing.listingId)) ?? (yield* newClient(discovered, request.client, redirectUri, scope, fetch))
    const state = `${credentialId}.${randomBytes(32).toString("base64url")}`
    const started = yield* attempt("authorization", () =>
      startAuthorization(authorizationServerUrl, {
        metadata: discovered.metadata,
        clientInformation: { client_id: client.clientId, ...(client.clientSecret === null ? {} : { client_secret: client.clientSecret }) },
        redirectUrl: redirectUri,
        scope,
        state,
        resource: discovered.origin.resource === null ? undefined : new URL(discovered.origin.resource)
      })
    )
    const now = yield* Clock.currentTimeMillis
    const expiresAt = new Date(now + STATE_TTL_MS).toISOString()
    const host = yield* ActorHost
    const sent = yield* host.send(
      CredentialActor,
      credentialId,
      new StartAuthorization({
        credentialId,
        orgId: request.orgId,
        workspaceId,
        listingId: listing.listingId,
        stateHash: stateHashOf(state),
        userId: request.userId,
        expiresAt,
        codeVerifier: yield* seal(started.codeVerifier, sealContext(credentialId, "code_verifier")),
        redirectUri,
        clientId: client.clientId,
        clientSecret: client.clientSecret === null ? null : yield* seal(client.clientSecret, sealContext(credentialId, "client_secret")),
        origin: discovered.origin,
        scopes
      }),
      request.meta
    )
    // a retry under the same idempotency key: the state recorded first was only ever in the first answer
    if (sent.duplicate) {
      return yield* new SecretShownOnce({ message: "this authorization was started by the first request with this Idempotency-Key; its URL was answered then only: start again without the key" })
    }
    return { credentialId, authorizationUrl: started.authorizationUrl.href, expiresAt }
  })

const stateHashOf = (state: string) => createHash("sha256").update(state).digest("hex")

const CREDENTIAL_ID = /^mcrd_[0-9a-f]{32}$/

/** Tokens as stored: sealed, with when they stop and the scopes granted (else those asked for). */
const sealTokens = (credentialId: string, tokens: OAuthTokens, asked: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    return {
      accessToken: yield* seal(tokens.access_token, sealContext(credentialId, "access_token")),
      refreshToken: tokens.refresh_token === undefined ? null : yield* seal(tokens.refresh_token, sealContext(credentialId, "refresh_token")),
      expiresAt: tokens.expires_in === undefined ? null : new Date(now + tokens.expires_in * 1000).toISOString(),
      scopes: tokens.scope === undefined ? asked : tokens.scope.split(" ").filter((s) => s !== "")
    } satisfies Tokens
  })

/** The client of a pending authorization or a credential, its secret opened. */
const clientInformation = (credentialId: string, clientId: string, clientSecret: SealedValue | null) =>
  Effect.gen(function* () {
    const secret = clientSecret === null ? null : yield* (yield* Envelope).open(clientSecret.ciphertext, clientSecret.keyId, sealContext(credentialId, "client_secret"))
    return { client_id: clientId, ...(secret === null ? {} : { client_secret: secret }) }
  })

export interface CallbackRequest {
  readonly userId: string
  readonly state: string
  readonly code: string | undefined
  /** The error the authorization server redirected with, if it did. */
  readonly error: string | undefined
  readonly meta: CommandMeta
}

/** (c) to (d): the callback consumes its state (once, by its person, in time), exchanges the code and stores the tokens. */
export const completeAuthorization = (request: CallbackRequest) =>
  Effect.gen(function* () {
    const credentialId = request.state.split(".")[0]
    if (!CREDENTIAL_ID.test(credentialId)) return yield* new OAuthStateInvalid({ credentialId: "", why: "unknown" })
    const host = yield* ActorHost
    const stateHash = stateHashOf(request.state)
    const consumed = yield* host.send(CredentialActor, credentialId, new ConsumeAuthorization({ credentialId, stateHash, userId: request.userId }), {
      ...request.meta,
      commandId: `${request.meta.commandId}:consume`
    })
    if (request.error !== undefined || request.code === undefined) return yield* new OAuthDenied({ error: request.error ?? "no_code" })
    const pending: PendingAuthorization = consumed.state._tag === "Live" && consumed.state.pending !== null ? consumed.state.pending : yield* new OAuthStateInvalid({ credentialId, why: "unknown" })
    const fetch = yield* nodeFetch
    const { authorizationServerUrl, resource } = pending.origin
    const metadata = yield* authorizationServerMetadata(authorizationServerUrl, fetch)
    const codeVerifier = yield* (yield* Envelope).open(pending.codeVerifier.ciphertext, pending.codeVerifier.keyId, sealContext(credentialId, "code_verifier"))
    const client = yield* clientInformation(credentialId, pending.clientId, pending.clientSecret)
    const code = request.code
    const tokens = yield* attempt("exchange", () =>
      exchangeAuthorization(authorizationServerUrl, {
        metadata,
        clientInformation: client,
        authorizationCode: code,
        codeVerifier: codeVerifier ?? "",
        redirectUri: pending.redirectUri,
        resource: resource === null ? undefined : new URL(resource),
        fetchFn: fetch
      })
    )
    const { state } = yield* host.send(
      CredentialActor,
      credentialId,
      new CompleteAuthorization({ credentialId, stateHash, tokens: yield* sealTokens(credentialId, tokens, pending.scopes) }),
      request.meta
    )
    return state
  })

/**
 * (e): refreshes the tokens of an active OAuth credential and records them. Fails with
 * `OAuthServerFailed` when the server refused or could not be reached; the caller decides what
 * that means (the refresh watcher: `needs_reauth` once the server refused, or the token expired).
 */
export const refreshCredential = (credential: { readonly workspaceId: string; readonly listingId: string }, meta: CommandMeta) =>
  Effect.gen(function* () {
    const row = yield* readCredential(credential.workspaceId, credential.listingId)
    const noRefresh = new OAuthServerFailed({ step: "refresh", message: "the credential holds no refresh token", oauthError: "no_refresh_token" })
    if (row === undefined || row.oauth === null || row.oauth_client_id === null || row.refresh_token_enc === null) return yield* noRefresh
    const credentialId = row.credential_id as string
    const keyId = row.token_kms_key_id as string | null
    const origin = row.oauth as OAuthOrigin
    const fetch = yield* nodeFetch
    const metadata = yield* authorizationServerMetadata(origin.authorizationServerUrl, fetch)
    const clientSecret = row.oauth_client_secret_enc === null || keyId === null ? null : { ciphertext: row.oauth_client_secret_enc as string, keyId }
    const client = yield* clientInformation(credentialId, row.oauth_client_id, clientSecret)
    const refreshToken = yield* (yield* Envelope).open(row.refresh_token_enc, keyId, sealContext(credentialId, "refresh_token"))
    if (refreshToken === null) return yield* noRefresh
    const tokens = yield* attempt("refresh", () =>
      refreshAuthorization(origin.authorizationServerUrl, {
        metadata,
        clientInformation: client,
        refreshToken,
        resource: origin.resource === null ? undefined : new URL(origin.resource),
        fetchFn: fetch
      })
    )
    const sealed = yield* sealTokens(credentialId, tokens, row.scopes as ReadonlyArray<string>)
    // the SDK hands the old refresh token back when the server issued none: the one held stays
    const refreshed = tokens.refresh_token === refreshToken ? { ...sealed, refreshToken: null } : sealed
    const host = yield* ActorHost
    return yield* host.send(CredentialActor, credentialId, new RecordRefresh({ credentialId, tokens: refreshed }), meta)
  })
