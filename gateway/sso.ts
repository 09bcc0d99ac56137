/**
 * Organization single sign-on over OpenID Connect (authorization code + PKCE), the browser side:
 *
 * - `GET /v1/auth/sso/providers?org=<orgSlug>`: the organization's verified providers, `{providers:
 *   [{id, name}]}`, for the sign-in page to offer; an organization that does not exist has none, so
 *   the answer tells nothing of which organizations do.
 * - `GET /v1/auth/sso/start?org=<orgSlug>&provider=<providerId>`: the provider must belong to the
 *   organization and be verified; answers 302 to the provider's authorization URL and sets
 *   `svc_sso`, a short-lived cookie sealed with the platform key that holds the pending login
 *   (provider, organization, state, nonce, PKCE verifier, expiry). Nothing is stored server side,
 *   so any node of the cluster can finish the login.
 * - `GET /v1/auth/sso/callback?code&state`: opens the cookie, exchanges the code (state, nonce,
 *   PKCE and id_token checked by src/identity/Oidc.ts), finds the person and links the identity
 *   (src/identity/Sso.ts: an identity already linked at this provider, else a member of the
 *   organization with the provider's verified email), starts an SSO session and sets its cookie;
 *   302 to `/`, or 200 JSON when the request accepts `application/json`.
 *
 * There is no just-in-time provisioning: a provider account that matches no member of the
 * organization gets 403 `not_a_member`, and no account is created.
 *
 * Like the password sign-in routes these are not capabilities: nobody is authenticated yet.
 */
import { STATUS_CODES } from "node:http"
import { Clock, Effect, Option, Schema } from "effect"
import type uWS from "uWebSockets.js"
import { discoverSsoProvider, findSsoProvider, SsoProviderNotVerified, ssoRedirectUri, SSO_CALLBACK_PATH } from "../src/identity/Organization.ts"
import { BadRequest } from "../src/platform/Errors.ts"
import { linkSsoIdentity, ssoOrgId, ssoPersonFor, verifiedSsoProviders } from "../src/identity/Sso.ts"
import { finishAuthorization, OidcDiscoveryFailed, OidcLoginFailed, type OidcProvider, startAuthorization } from "../src/identity/Oidc.ts"
import { PlatformSecrets } from "../src/platform/Secrets.ts"
import { sessionCookie, startSession, type StartedSession } from "../src/identity/Sessions.ts"
import { replyForFailure } from "./errors.ts"
import { type HttpReply, type HttpRequest, route, routeHeaders, Streaming, takeOver } from "./http.ts"
import type { GatewayOptions } from "./options.ts"

export const SSO_COOKIE = "svc_sso"
const SSO_COOKIE_PATH = "/v1/auth/sso"
/** How long a started login may take to come back. */
export const SSO_LOGIN_TTL_MS = 10 * 60 * 1000
/** How long a node reuses a provider's discovery document. */
const DISCOVERY_TTL_MS = 5 * 60 * 1000

/** A verified provider could not be used for sign-in (its discovery failed): not the caller's fault. */
export class SsoProviderUnavailable extends Schema.TaggedError<SsoProviderUnavailable>()("SsoProviderUnavailable", {
  providerId: Schema.String,
  message: Schema.String
}) {}

/** What the `svc_sso` cookie holds, sealed. `kind` keeps any other sealed value from passing as one. */
const PendingLogin = Schema.parseJson(Schema.Struct({
  kind: Schema.Literal("sso_login_v1"),
  providerId: Schema.String,
  orgId: Schema.String,
  state: Schema.String,
  nonce: Schema.String,
  codeVerifier: Schema.String,
  /** Epoch milliseconds. */
  expires: Schema.Number
}))

/** The value of cookie `name` in a `Cookie` header. */
export const cookieValue = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

const ssoCookie = (value: string | null, secure: boolean): string =>
  [
    `${SSO_COOKIE}=${value ?? ""}`,
    `Path=${SSO_COOKIE_PATH}`,
    value === null ? "Max-Age=0" : `Max-Age=${SSO_LOGIN_TTL_MS / 1000}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secure ? ["Secure"] : [])
  ].join("; ")

const loginFailed = (reason: OidcLoginFailed["reason"], message: string) => new OidcLoginFailed({ reason, message })

/** Writes a reply with several Set-Cookie headers (an HttpReply holds one value per header). */
const writeWithCookies = (res: uWS.HttpResponse, reply: HttpReply, cookies: ReadonlyArray<string>): typeof Streaming => {
  const body = reply.json !== undefined ? JSON.stringify(reply.json) : reply.text ?? ""
  const common = routeHeaders(res)
  if (!takeOver(res, () => {}, reply.status, Buffer.byteLength(body))) return Streaming
  res.cork(() => {
    res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ""}`)
    if (common !== undefined) for (const name in common) res.writeHeader(name, common[name])
    for (const cookie of cookies) res.writeHeader("set-cookie", cookie)
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.writeHeader(name, value)
    if (reply.headers?.["content-type"] === undefined) {
      res.writeHeader("content-type", reply.json !== undefined ? "application/json" : "text/plain; charset=utf-8")
    }
    res.end(body)
  })
  return Streaming
}

export const ssoRoutes = (app: uWS.TemplatedApp, options: GatewayOptions) => {
  const redirectUri = ssoRedirectUri(options.baseUrl)
  const discovered = new Map<string, { readonly handle: OidcProvider; readonly until: number }>()

  /** The provider's client, discovered (and cached on this node for a few minutes). */
  const clientFor = (provider: { readonly providerId: string; readonly issuer: string; readonly clientId: string; readonly clientSecretSealed: string }) =>
    Effect.gen(function* () {
      const cached = discovered.get(provider.providerId)
      if (cached !== undefined && cached.until > Date.now()) return cached.handle
      const handle = yield* discoverSsoProvider(provider).pipe(
        Effect.mapError((e: OidcDiscoveryFailed) =>
          new SsoProviderUnavailable({ providerId: provider.providerId, message: `the SSO provider cannot be reached: ${e.message}` })
        )
      )
      discovered.set(provider.providerId, { handle, until: Date.now() + DISCOVERY_TTL_MS })
      return handle
    })

  /** A provider that may sign people in to the organization. */
  const usableProvider = (orgId: string, providerId: string) =>
    Effect.gen(function* () {
      const provider = yield* findSsoProvider(orgId, providerId)
      if (provider.status !== "verified") return yield* new SsoProviderNotVerified({ orgId, providerId })
      return provider
    })

  const providers = (req: HttpRequest) =>
    Effect.gen(function* () {
      const orgSlug = new URLSearchParams(req.query).get("org")
      if (orgSlug === null || orgSlug === "") return yield* new BadRequest({ reason: "invalid_input", message: "expected ?org=<organization slug>" })
      return { providers: yield* verifiedSsoProviders(orgSlug) }
    })

  const start = (req: HttpRequest) =>
    Effect.gen(function* () {
      const params = new URLSearchParams(req.query)
      const orgSlug = params.get("org")
      const providerId = params.get("provider")
      if (orgSlug === null || orgSlug === "" || providerId === null || providerId === "") {
        return yield* new BadRequest({ reason: "invalid_input", message: "expected ?org=<organization slug>&provider=<provider id>" })
      }
      const orgId = yield* ssoOrgId(orgSlug, providerId)
      const provider = yield* usableProvider(orgId, providerId)
      const handle = yield* clientFor(provider)
      const pending = yield* Effect.tryPromise({
        try: () => startAuthorization(handle, { redirectUri }),
        catch: () => new SsoProviderUnavailable({ providerId, message: "the authorization request could not be built" })
      })
      const secrets = yield* PlatformSecrets
      const now = yield* Clock.currentTimeMillis
      const sealed = secrets.seal(Schema.encodeSync(PendingLogin)({
        kind: "sso_login_v1",
        providerId,
        orgId: provider.orgId,
        state: pending.state,
        nonce: pending.nonce,
        codeVerifier: pending.codeVerifier,
        expires: now + SSO_LOGIN_TTL_MS
      }))
      return { location: pending.url, cookie: sealed }
    })

  const callback = (req: HttpRequest) =>
    Effect.gen(function* () {
      const raw = cookieValue(req.headers.cookie, SSO_COOKIE)
      if (raw === undefined || raw === "") return yield* loginFailed("state_mismatch", "no SSO sign-in is in progress in this browser; start again")
      const secrets = yield* PlatformSecrets
      const opened = secrets.open(raw)
      const pending = opened === undefined ? undefined : Option.getOrUndefined(Schema.decodeUnknownOption(PendingLogin)(opened))
      if (pending === undefined) return yield* loginFailed("state_mismatch", "the SSO sign-in cookie is not valid; start again")
      if (pending.expires <= (yield* Clock.currentTimeMillis)) return yield* loginFailed("state_mismatch", "the SSO sign-in took too long; start again")
      const provider = yield* usableProvider(pending.orgId, pending.providerId)
      const handle = yield* clientFor(provider)
      const callbackUrl = `${options.baseUrl.replace(/\/+$/, "")}${SSO_CALLBACK_PATH}${req.query === "" ? "" : `?${req.query}`}`
      // the cookie is accepted only for the state it holds: finishAuthorization compares them first
      const identity = yield* Effect.tryPromise({
        try: () => finishAuthorization(handle, { callbackUrl, redirectUri, state: pending.state, nonce: pending.nonce, codeVerifier: pending.codeVerifier }),
        catch: (error) => (error instanceof OidcLoginFailed ? error : loginFailed("response_invalid", "the SSO login could not be completed"))
      })
      const userId = yield* ssoPersonFor(pending.orgId, pending.providerId, identity)
      yield* linkSsoIdentity({ userId, orgId: pending.orgId, providerId: pending.providerId, subject: identity.subject })
      return yield* startSession({ userId, method: "sso", sso: { orgId: pending.orgId, providerId: pending.providerId }, mfa: false })
    })

  const clearSso = ssoCookie(null, options.secureCookies)

  route(app, "get", `${SSO_COOKIE_PATH}/providers`, async (req) => {
    const exit = await options.run(providers(req))
    return exit._tag === "Failure" ? replyForFailure(exit.cause) : { status: 200, json: exit.value, headers: { "cache-control": "no-store" } }
  })

  route(app, "get", `${SSO_COOKIE_PATH}/start`, async (req) => {
    const exit = await options.run(start(req))
    if (exit._tag === "Failure") return replyForFailure(exit.cause)
    return {
      status: 302,
      headers: { location: exit.value.location, "set-cookie": ssoCookie(exit.value.cookie, options.secureCookies), "cache-control": "no-store" },
      text: ""
    }
  })

  route(app, "get", SSO_CALLBACK_PATH, async (req, res) => {
    const exit = await options.run(callback(req))
    if (exit._tag === "Failure") {
      // a failed login is over: the pending one cannot be retried
      const failure = replyForFailure(exit.cause)
      return { ...failure, headers: { ...failure.headers, "set-cookie": clearSso, "cache-control": "no-store" } }
    }
    const session: StartedSession = exit.value
    const wantsJson = (req.headers.accept ?? "").includes("application/json")
    const reply: HttpReply = wantsJson
      ? { status: 200, json: { userId: session.userId, sessionId: session.sessionId, expiresAt: session.expiresAt }, headers: { "cache-control": "no-store" } }
      : { status: 302, headers: { location: "/", "cache-control": "no-store" }, text: "" }
    return writeWithCookies(res, reply, [clearSso, sessionCookie(session, options.secureCookies)])
  })
}
