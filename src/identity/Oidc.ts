/**
 * OpenID Connect relying party for organization SSO: discovery, the authorization request
 * (authorization code + PKCE S256, state and nonce) and the callback (code exchange, id_token
 * validation, claims). A thin layer over openid-client v6; plain async functions. Every request
 * to the provider (discovery, keys, token, userinfo) goes through the fetch it is given: the
 * outbound guard's (`checkedFetch`), so an issuer on an address the node may not reach is refused.
 *
 * Nothing here logs. Error messages name what failed, never a secret, code, token or verifier.
 */
import { timingSafeEqual } from "node:crypto"
import { Schema } from "effect"
import * as client from "openid-client"
import { type OutboundFetch, OutboundRefused } from "../platform/Outbound.ts"

/** A discovered provider plus this client's registration at it (client id and secret). */
export type OidcProvider = client.Configuration

export interface DiscoverProviderInput {
  /** The issuer identifier, exactly as the provider names itself (`https://idp.example.com/tenant`). */
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  /** Timeout for every request made to the provider. Default 10. */
  readonly timeoutSeconds?: number
  /** Every request to the provider goes through it, then and after (the returned provider keeps it). */
  readonly fetch: OutboundFetch
}

export interface StartAuthorizationInput {
  readonly redirectUri: string
  /** Default `openid email profile`; `openid` is added when missing. */
  readonly scope?: string
}

/** What the caller keeps (server side, bound to the browser) until the callback. */
export interface PendingAuthorization {
  /** Where to send the browser. */
  readonly url: string
  readonly state: string
  readonly nonce: string
  readonly codeVerifier: string
}

export interface FinishAuthorizationInput {
  /** The full URL the provider redirected the browser to, query included. */
  readonly callbackUrl: string
  /** The same redirect URI that `startAuthorization` was given. */
  readonly redirectUri: string
  readonly state: string
  readonly nonce: string
  readonly codeVerifier: string
}

export interface VerifiedIdentity {
  /** The provider's stable subject identifier (`sub`). */
  readonly subject: string
  /** Lowercased, or null when the provider released none. */
  readonly email: string | null
  readonly emailVerified: boolean
}

export const DEFAULT_SCOPE = "openid email profile"

/** The provider could not be used: bad issuer URL, unreachable, or its metadata disagrees. */
export class OidcDiscoveryFailed extends Schema.TaggedError<OidcDiscoveryFailed>()("OidcDiscoveryFailed", {
  reason: Schema.Literal("invalid_issuer", "insecure_issuer", "invalid_client", "unreachable", "address_refused", "issuer_mismatch", "invalid_metadata"),
  message: Schema.String
}) {}

/** The login did not produce a verified identity; `reason` says which step refused it. */
export class OidcLoginFailed extends Schema.TaggedError<OidcLoginFailed>()("OidcLoginFailed", {
  reason: Schema.Literal(
    "invalid_callback", // the callback URL cannot be parsed
    "provider_error", // the provider redirected back with `error` (access_denied, ...)
    "state_mismatch", // `state` absent or not the one this login started with
    "missing_code", // no `code` in the callback
    "token_exchange_failed", // the token endpoint refused the code or could not be reached
    "id_token_invalid", // id_token missing, badly signed, wrong issuer/audience/nonce, expired
    "response_invalid", // any other protocol violation in the provider's responses
    "userinfo_failed" // claims had to come from userinfo and that failed
  ),
  message: Schema.String
}) {}

export type OidcLoginFailureReason = OidcLoginFailed["reason"]

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"])

const loginFailed = (reason: OidcLoginFailureReason, detail: string) =>
  new OidcLoginFailed({ reason, message: `OIDC login failed (${reason}): ${detail}` })

const discoveryFailed = (reason: OidcDiscoveryFailed["reason"], issuer: string, detail: string) =>
  new OidcDiscoveryFailed({ reason, message: `OIDC discovery failed for ${issuer}: ${detail}` })

const errorCode = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" ? code : undefined
}

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Bounded, single-line text from a provider-supplied string (error_description and the like). */
const clip = (text: string, max = 200): string => {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

/**
 * Discovers the provider at `issuer` (`<issuer>/.well-known/openid-configuration`) and checks that
 * the document names exactly that issuer. https only, except http on a loopback host (tests, local
 * development). Client authentication at the token endpoint is client_secret_basic, or
 * client_secret_post when the provider only supports that.
 */
export const discoverProvider = async (input: DiscoverProviderInput): Promise<OidcProvider> => {
  const { issuer, clientId, clientSecret } = input
  let url: URL
  try {
    url = new URL(issuer)
  } catch {
    throw discoveryFailed("invalid_issuer", issuer, "the issuer is not a URL")
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    // named without the parts that may hold secrets
    throw discoveryFailed("invalid_issuer", `${url.origin}${url.pathname}`, "an issuer has no query, fragment or credentials")
  }
  // openid-client treats a URL containing /.well-known/ as the document itself and then skips
  // the issuer check; an issuer identifier never contains it.
  if (url.pathname.includes("/.well-known/")) {
    throw discoveryFailed("invalid_issuer", issuer, "give the issuer identifier, not the discovery document URL")
  }
  const insecure = url.protocol === "http:"
  if (insecure && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw discoveryFailed("insecure_issuer", issuer, "http issuers are only allowed on a loopback host; use https")
  }
  if (!insecure && url.protocol !== "https:") {
    throw discoveryFailed("insecure_issuer", issuer, `unsupported scheme ${url.protocol}`)
  }
  if (clientId === "" || clientSecret === "") {
    throw discoveryFailed("invalid_client", issuer, "client id and client secret are required")
  }

  let handle: client.Configuration
  try {
    handle = await client.discovery(url, clientId, { client_secret: clientSecret }, undefined, {
      timeout: input.timeoutSeconds ?? 10,
      [client.customFetch]: input.fetch,
      ...(insecure ? { execute: [client.allowInsecureRequests] } : {})
    })
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause
    if (cause instanceof OutboundRefused) throw discoveryFailed("address_refused", issuer, cause.message)
    const code = errorCode(error)
    if (code === "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED") {
      throw discoveryFailed("issuer_mismatch", issuer, "the discovery document names a different issuer")
    }
    if (code === "OAUTH_INVALID_RESPONSE" || code === "OAUTH_PARSE_ERROR" || code === "OAUTH_RESPONSE_IS_NOT_JSON") {
      throw discoveryFailed("invalid_metadata", issuer, `the discovery document is not valid (${errorMessage(error)})`)
    }
    if (code === "OAUTH_RESPONSE_IS_NOT_CONFORM") {
      const status = (error as { cause?: { status?: unknown } }).cause?.status
      throw discoveryFailed("unreachable", issuer, `no discovery document (HTTP ${typeof status === "number" ? status : "error"})`)
    }
    const underlying = cause instanceof Error ? `: ${cause.message}` : ""
    throw discoveryFailed("unreachable", issuer, `${errorMessage(error)}${underlying}`)
  }

  const metadata = handle.serverMetadata()
  if (typeof metadata.authorization_endpoint !== "string" || typeof metadata.token_endpoint !== "string") {
    throw discoveryFailed("invalid_metadata", issuer, "the discovery document lacks an authorization or token endpoint")
  }
  if (typeof metadata.jwks_uri !== "string") {
    throw discoveryFailed("invalid_metadata", issuer, "the discovery document lacks jwks_uri")
  }
  const methods = metadata.token_endpoint_auth_methods_supported
  // absent means client_secret_basic (OpenID Connect Discovery 1.0, section 3)
  const auth = methods === undefined || methods.includes("client_secret_basic")
    ? client.ClientSecretBasic(clientSecret)
    : methods.includes("client_secret_post")
    ? client.ClientSecretPost(clientSecret)
    : undefined
  if (auth === undefined) {
    throw discoveryFailed("invalid_metadata", issuer, "the provider supports neither client_secret_basic nor client_secret_post")
  }
  const configured = new client.Configuration(metadata, clientId, { client_secret: clientSecret }, auth)
  configured.timeout = input.timeoutSeconds ?? 10
  configured[client.customFetch] = input.fetch
  if (insecure) client.allowInsecureRequests(configured)
  return configured
}

const withOpenId = (scope: string): string => {
  const scopes = scope.split(" ").filter((s) => s !== "")
  return (scopes.includes("openid") ? scopes : ["openid", ...scopes]).join(" ")
}

const checkRedirectUri = (redirectUri: string): URL => {
  const url = new URL(redirectUri)
  // openid-client sends the callback URL without its query as redirect_uri at the token endpoint
  if (url.search !== "" || url.hash !== "") throw new Error("redirectUri must not carry a query or fragment")
  return url
}

/** Builds the authorization request: code flow, PKCE S256, fresh state and nonce. */
export const startAuthorization = async (
  handle: OidcProvider,
  input: StartAuthorizationInput
): Promise<PendingAuthorization> => {
  const redirectUri = checkRedirectUri(input.redirectUri).href
  const state = client.randomState()
  const nonce = client.randomNonce()
  const codeVerifier = client.randomPKCECodeVerifier()
  const codeChallenge = await client.calculatePKCECodeChallenge(codeVerifier)
  const url = client.buildAuthorizationUrl(handle, {
    response_type: "code",
    redirect_uri: redirectUri,
    scope: withOpenId(input.scope ?? DEFAULT_SCOPE),
    state,
    nonce,
    code_challenge: codeChallenge,
    code_challenge_method: "S256"
  })
  return { url: url.href, state, nonce, codeVerifier }
}

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a, "utf8")
  const y = Buffer.from(b, "utf8")
  return x.length === y.length && timingSafeEqual(x, y)
}

const TOKEN_EXCHANGE_CODES = new Set([
  "OAUTH_RESPONSE_BODY_ERROR",
  "OAUTH_WWW_AUTHENTICATE_CHALLENGE",
  "OAUTH_RESPONSE_IS_NOT_CONFORM",
  "OAUTH_RESPONSE_IS_NOT_JSON",
  "OAUTH_HTTP_REQUEST_FORBIDDEN",
  "OAUTH_REQUEST_PROTOCOL_FORBIDDEN"
])

const ID_TOKEN_CODES = new Set([
  "OAUTH_JWT_CLAIM_COMPARISON_FAILED",
  "OAUTH_JWT_TIMESTAMP_CHECK_FAILED",
  "OAUTH_KEY_SELECTION_FAILED"
])

/** Maps whatever openid-client threw during the code exchange to a login failure. */
const exchangeFailure = (error: unknown): OidcLoginFailed => {
  if (error instanceof client.ResponseBodyError) {
    const description = error.error_description ? ` (${clip(error.error_description)})` : ""
    return loginFailed("token_exchange_failed", `the token endpoint answered ${clip(error.error, 64)}${description}`)
  }
  if (error instanceof client.WWWAuthenticateChallengeError) {
    // a 401 with a WWW-Authenticate challenge: the client authentication was refused
    const challenge = error.cause.find((c) => typeof c.parameters.error === "string")?.parameters
    const detail = challenge?.error
      ? `${clip(challenge.error, 64)}${challenge.error_description ? ` (${clip(challenge.error_description)})` : ""}`
      : `HTTP ${error.status}`
    return loginFailed("token_exchange_failed", `the token endpoint answered ${detail}`)
  }
  if (error instanceof client.AuthorizationResponseError) {
    return loginFailed("provider_error", `the provider answered ${clip(error.error, 64)}`)
  }
  const code = errorCode(error)
  const message = clip(errorMessage(error))
  if (code !== undefined && TOKEN_EXCHANGE_CODES.has(code)) return loginFailed("token_exchange_failed", message)
  if (code !== undefined && ID_TOKEN_CODES.has(code)) return loginFailed("id_token_invalid", message)
  if (/id_token|ID Token|JWT|JWS/.test(message)) return loginFailed("id_token_invalid", message)
  if (code === undefined || !code.startsWith("OAUTH_")) {
    // fetch failures (TypeError "fetch failed"), timeouts and the like
    const cause = (error as { cause?: unknown }).cause
    const underlying = cause instanceof Error ? `: ${clip(cause.message)}` : ""
    return loginFailed("token_exchange_failed", `${message}${underlying}`)
  }
  return loginFailed("response_invalid", message)
}

const emailOf = (value: unknown): string | null =>
  typeof value === "string" && value.trim() !== "" ? value.trim().toLowerCase() : null

// some providers send the boolean as a string
const verifiedOf = (value: unknown): boolean => value === true || value === "true"

/**
 * Completes the login from the provider's redirect: checks `error` and `state`, exchanges the code
 * (with the PKCE verifier) and validates the id_token (signature, issuer, audience, expiry, nonce).
 * When the id_token carries no email, the claims come from the userinfo endpoint (subject checked).
 * Any failure is an `OidcLoginFailed`.
 */
export const finishAuthorization = async (
  handle: OidcProvider,
  input: FinishAuthorizationInput
): Promise<VerifiedIdentity> => {
  let callback: URL
  let current: URL
  try {
    callback = new URL(input.callbackUrl)
    current = checkRedirectUri(input.redirectUri)
  } catch {
    throw loginFailed("invalid_callback", "the callback or redirect URI is not a valid URL")
  }
  const params = callback.searchParams
  const providerError = params.get("error")
  if (providerError !== null) {
    const description = params.get("error_description")
    throw loginFailed(
      "provider_error",
      `the provider answered ${clip(providerError, 64)}${description ? ` (${clip(description)})` : ""}`
    )
  }
  const returnedState = params.get("state")
  if (returnedState === null || !sameSecret(returnedState, input.state)) {
    throw loginFailed("state_mismatch", "the callback does not belong to this login")
  }
  if (!params.get("code")) throw loginFailed("missing_code", "the callback carries no authorization code")

  // the registered redirect URI with the callback's parameters: openid-client derives the
  // redirect_uri it sends to the token endpoint from this URL, whatever host served the callback
  current.search = callback.search

  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>
  try {
    tokens = await client.authorizationCodeGrant(handle, current, {
      expectedState: input.state,
      expectedNonce: input.nonce,
      pkceCodeVerifier: input.codeVerifier,
      idTokenExpected: true
    })
  } catch (error) {
    throw exchangeFailure(error)
  }

  const claims = tokens.claims()
  if (claims === undefined || typeof claims.sub !== "string" || claims.sub === "") {
    throw loginFailed("id_token_invalid", "the token response carries no usable id_token")
  }
  const subject = claims.sub

  if (claims.email === undefined && handle.serverMetadata().userinfo_endpoint !== undefined) {
    try {
      const info = await client.fetchUserInfo(handle, tokens.access_token, subject)
      return { subject, email: emailOf(info.email), emailVerified: verifiedOf(info.email_verified) }
    } catch (error) {
      throw loginFailed("userinfo_failed", clip(errorMessage(error)))
    }
  }
  return { subject, email: emailOf(claims.email), emailVerified: verifiedOf(claims.email_verified) }
}
