/**
 * A real OpenID Connect provider (panva's oidc-provider) on 127.0.0.1 for tests, with a scripted
 * browser (`login`) that signs an account in and consents, returning the redirect to the client.
 *
 * Interactions are served by this file, not by oidc-provider's devInteractions: those take the
 * typed login as the account id, and the account id is the `sub`, so a login by email could not
 * yield a subject different from the email. The handler here is the documented pattern
 * (`interactions.url` + `interactionDetails` / `interactionFinished`, grant created on consent).
 */
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { introspectingAdmit, type McpTestServer, startMcpTestServer } from "./mcpServer.ts"

export interface OidcTestAccount {
  readonly sub: string
  readonly email: string
}

export interface OidcTestClient {
  readonly client_id: string
  readonly client_secret: string
  readonly redirect_uris: ReadonlyArray<string>
  /** Default client_secret_basic. */
  readonly token_endpoint_auth_method?: "client_secret_basic" | "client_secret_post"
}

export interface StartOidcServerOptions {
  readonly accounts: ReadonlyArray<OidcTestAccount>
  readonly clients: ReadonlyArray<OidcTestClient>
  /**
   * Default true: the id_token carries the email claims. False keeps oidc-provider's conforming
   * behaviour (claims of the code flow only at the userinfo endpoint).
   */
  readonly emailInIdToken?: boolean
  /**
   * An OAuth 2.1 authorization server for protected resources (MCP servers) too: dynamic client
   * registration (RFC 7591), refresh tokens, token introspection and revocation; access tokens
   * are opaque and bound to the resource asked for (RFC 8707), with these scopes and lifetime.
   */
  readonly oauth?: {
    readonly scopes: ReadonlyArray<string>
    readonly accessTokenTtlSeconds: number
    /**
     * Dynamic client registration: `open` (default) to anyone; `off`, not offered (no
     * registration_endpoint); `token`, offered but refused without an initial access token.
     */
    readonly registration?: "open" | "off" | "token"
  }
}

export interface OidcServer {
  /** `http://127.0.0.1:<port>` */
  readonly issuer: string
  close(): Promise<void>
  /**
   * Follows `authorizationUrl` through the provider's pages like a browser: signs in as the account
   * with this email, consents, and resolves with the redirect to the client's redirect_uri (with
   * `code` and `state`, or `error`) without requesting it. An unknown email ends in
   * `error=access_denied`.
   */
  login(authorizationUrl: string, email: string): Promise<string>
  /** With `oauth`: destroys every access and refresh token issued so far, as an admin revoking them would; how many. */
  revokeAllTokens(): Promise<number>
  /** Every access and refresh token value issued, and every client secret handed out at registration (to look for in clear). */
  issuedSecrets(): ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------
// the small part of oidc-provider's surface used here (the package ships no type declarations)

interface Interaction {
  readonly uid: string
  readonly prompt: { readonly name: string; readonly details: Record<string, unknown> }
  readonly params: Record<string, unknown>
  readonly session?: { readonly accountId?: string }
  readonly grantId?: string
}

interface Grant {
  addOIDCScope(scope: string): void
  addOIDCClaims(claims: ReadonlyArray<string>): void
  addResourceScope(indicator: string, scope: string): void
  save(): Promise<string>
}

interface StoredToken {
  /** An opaque token's value. */
  readonly jti: string
  destroy(): Promise<void>
}

interface Provider {
  on(event: "access_token.saved" | "refresh_token.saved", listener: (token: StoredToken) => void): void
  on(event: "registration_create.success", listener: (ctx: unknown, client: { readonly clientSecret?: string }) => void): void
  callback(): (req: IncomingMessage, res: ServerResponse) => void
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    options?: { mergeWithLastSubmission?: boolean }
  ): Promise<void>
  readonly Grant: {
    new(init: { accountId: string; clientId: string }): Grant
    find(id: string): Promise<Grant | undefined>
  }
}

type ProviderConstructor = new(issuer: string, configuration: Record<string, unknown>) => Provider

interface OidcProviderModules {
  readonly Provider: ProviderConstructor
  readonly createMemoryAdapter: () => unknown
}

/**
 * oidc-provider prints notices when imported on Node below 22 ("Unsupported runtime") and for
 * development defaults; the configuration below avoids the defaults, this hides the rest.
 */
const quietly = async <A>(f: () => Promise<A>): Promise<A> => {
  const { warn, info } = console
  const filter = (original: (...args: Array<unknown>) => void) => (...args: Array<unknown>) => {
    if (typeof args[0] === "string" && args[0].includes("oidc-provider ")) return
    original.apply(console, args)
  }
  console.warn = filter(warn)
  console.info = filter(info)
  try {
    return await f()
  } finally {
    console.warn = warn
    console.info = info
  }
}

let modules: Promise<OidcProviderModules> | undefined

const loadOidcProvider = (): Promise<OidcProviderModules> =>
  modules ??= quietly(async () => {
    // specifiers held in variables: the package has no typings, these imports are typed by hand
    const main: string = "oidc-provider"
    const memory: string = "oidc-provider/lib/adapters/memory_adapter.js"
    const [{ default: Provider }, { createMemoryAdapter }] = await Promise.all([import(main), import(memory)])
    return { Provider, createMemoryAdapter } as OidcProviderModules
  })

// ---------------------------------------------------------------------------------------------

const html = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${html(title)}</title></head><body>${body}</body></html>`

const readForm = async (req: IncomingMessage): Promise<URLSearchParams> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"))
}

/** What makes the provider an OAuth authorization server for protected resources (see `oauth`). */
const oauthConfiguration = (oauth: NonNullable<StartOidcServerOptions["oauth"]>) => ({
  scopes: ["openid", "offline_access", ...oauth.scopes],
  // every client allowed the refresh_token grant gets a refresh token, offline_access asked or not
  issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(grant: string): boolean }) => client.grantTypeAllowed("refresh_token"),
  ttl: { AccessToken: oauth.accessTokenTtlSeconds, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 3600, RefreshToken: 3600 },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: oauth.registration !== "off", initialAccessToken: oauth.registration === "token" },
    // a confidential client (the resource server) may introspect any token
    introspection: { enabled: true, allowedPolicy: async (_ctx: unknown, client: { clientAuthMethod: string }) => client.clientAuthMethod !== "none" },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx: unknown, _client: unknown, oneOf?: ReadonlyArray<string>) => oneOf?.[0],
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx: unknown, resource: string) => ({
        scope: oauth.scopes.join(" "),
        audience: resource,
        accessTokenFormat: "opaque",
        accessTokenTTL: oauth.accessTokenTtlSeconds
      })
    }
  }
})

const send = (res: ServerResponse, status: number, type: string, body: string) => {
  res.statusCode = status
  res.setHeader("content-type", `${type}; charset=utf-8`)
  res.setHeader("cache-control", "no-store")
  res.end(body)
}

export const startOidcServer = async (options: StartOidcServerOptions): Promise<OidcServer> => {
  const { Provider, createMemoryAdapter } = await loadOidcProvider()
  const bySub = new Map(options.accounts.map((a) => [a.sub, a]))
  const byEmail = new Map(options.accounts.map((a) => [a.email.toLowerCase(), a]))

  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined
  const server = createServer((req, res) => {
    if (handler === undefined) send(res, 503, "text/plain", "starting")
    else handler(req, res)
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const signingKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" })
  const provider = await quietly(async () =>
    new Provider(issuer, {
      clients: options.clients.map((c) => ({
        client_id: c.client_id,
        client_secret: c.client_secret,
        redirect_uris: [...c.redirect_uris],
        response_types: ["code"],
        // an authorization server for protected resources lets its clients refresh (an admin-registered plugin connector)
        grant_types: options.oauth === undefined ? ["authorization_code"] : ["authorization_code", "refresh_token"],
        token_endpoint_auth_method: c.token_endpoint_auth_method ?? "client_secret_basic"
      })),
      adapter: createMemoryAdapter(),
      jwks: { keys: [{ ...signingKey, kid: "test-signing-key", use: "sig", alg: "RS256" }] },
      cookies: { keys: [randomBytes(32).toString("base64url")] },
      findAccount: (_ctx: unknown, sub: string) => {
        const account = bySub.get(sub)
        return account === undefined ? undefined : {
          accountId: account.sub,
          claims: () => ({ sub: account.sub, email: account.email, email_verified: true })
        }
      },
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: [] },
      conformIdTokenClaims: options.emailInIdToken === false,
      pkce: { required: () => true },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
      renderError: (ctx: { type: string; body: unknown }, out: Record<string, unknown>) => {
        ctx.type = "json"
        ctx.body = out
      },
      ...(options.oauth === undefined ? {} : oauthConfiguration(options.oauth))
    })
  )
  const issued = new Set<StoredToken>()
  const secrets = new Set<string>()
  const remember = (token: StoredToken) => {
    issued.add(token)
    secrets.add(token.jti)
  }
  provider.on("access_token.saved", remember)
  provider.on("refresh_token.saved", remember)
  provider.on("registration_create.success", (_ctx, client) => {
    if (client.clientSecret !== undefined) secrets.add(client.clientSecret)
  })
  const providerCallback = provider.callback()

  const interaction = async (req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined) => {
    const details = await provider.interactionDetails(req, res)
    if (details.uid !== uid) return send(res, 400, "text/plain", "interaction mismatch")
    const prompt = details.prompt.name
    if (req.method === "GET" && action === undefined) {
      if (prompt === "login") {
        return send(
          res,
          200,
          "text/html",
          page(
            "Sign in",
            `<form method="post" action="/interaction/${html(uid)}/login">` +
              `<input type="email" name="email" required autofocus><button type="submit">Sign in</button></form>`
          )
        )
      }
      if (prompt === "consent") {
        return send(
          res,
          200,
          "text/html",
          page(
            "Authorize",
            `<form method="post" action="/interaction/${html(uid)}/confirm"><button type="submit">Continue</button></form>`
          )
        )
      }
      return send(res, 501, "text/plain", `prompt ${prompt} not implemented`)
    }
    if (req.method === "POST" && action === "login" && prompt === "login") {
      const form = await readForm(req)
      const account = byEmail.get((form.get("email") ?? "").trim().toLowerCase())
      const result = account === undefined
        ? { error: "access_denied", error_description: "unknown account" }
        : { login: { accountId: account.sub } }
      return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false })
    }
    if (req.method === "POST" && action === "confirm" && prompt === "consent") {
      const accountId = details.session?.accountId
      const clientId = details.params["client_id"]
      if (accountId === undefined || typeof clientId !== "string") return send(res, 400, "text/plain", "no session")
      const grant = details.grantId !== undefined
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId, clientId })
      if (grant === undefined) return send(res, 400, "text/plain", "grant not found")
      const missing = details.prompt.details as {
        missingOIDCScope?: Array<string>
        missingOIDCClaims?: Array<string>
        missingResourceScopes?: Record<string, Array<string>>
      }
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "))
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims)
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(indicator, scopes.join(" "))
      }
      const grantId = await grant.save()
      return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true })
    }
    return send(res, 400, "text/plain", `unexpected ${req.method} ${action ?? ""} during ${prompt}`)
  }

  handler = (req, res) => {
    const path = new URL(req.url ?? "/", issuer).pathname
    const match = /^\/interaction\/([^/]+)(?:\/(login|confirm))?$/.exec(path)
    if (match === null) return providerCallback(req, res)
    interaction(req, res, match[1], match[2]).catch((error: unknown) => {
      if (!res.headersSent) send(res, 400, "text/plain", `interaction failed: ${(error as Error).message ?? error}`)
      else res.end()
    })
  }

  const redirectUris = options.clients.flatMap((c) => c.redirect_uris.map((u) => new URL(u).href))
  const isClientRedirect = (location: URL) => {
    const bare = new URL(location.href)
    bare.search = ""
    bare.hash = ""
    // a dynamically registered client's redirect_uri is not known here: leaving the provider is going back to the client
    return redirectUris.includes(bare.href) || (options.oauth !== undefined && location.origin !== new URL(issuer).origin)
  }

  const login = async (authorizationUrl: string, email: string): Promise<string> => {
    // a minimal cookie jar: one host, paths ignored (the provider's cookie names do not collide)
    const jar = new Map<string, string>()
    const remember = (response: Response) => {
      for (const header of response.headers.getSetCookie()) {
        const [pair, ...attributes] = header.split(";")
        const eq = pair.indexOf("=")
        const name = pair.slice(0, eq).trim()
        const value = pair.slice(eq + 1).trim()
        const expired = attributes.some((a) => {
          const [key, val = ""] = a.split("=").map((s) => s.trim())
          return (key.toLowerCase() === "max-age" && Number(val) <= 0) ||
            (key.toLowerCase() === "expires" && Date.parse(val) <= Date.now())
        })
        if (expired || value === "") jar.delete(name)
        else jar.set(name, value)
      }
    }
    const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ")

    let url = new URL(authorizationUrl)
    let init: RequestInit = { method: "GET" }
    for (let step = 0; step < 20; step++) {
      if (url.origin !== new URL(issuer).origin) throw new Error(`login left the provider: ${url.origin}${url.pathname}`)
      const response = await fetch(url, {
        ...init,
        redirect: "manual",
        headers: { ...(init.headers as Record<string, string> | undefined), cookie: cookieHeader() }
      })
      remember(response)
      const location = response.headers.get("location")
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel()
        const next = new URL(location, url)
        if (isClientRedirect(next)) return next.href
        url = next
        init = { method: "GET" }
        continue
      }
      const text = await response.text()
      if (response.status !== 200) {
        throw new Error(`provider answered ${response.status} at ${url.pathname}: ${text.slice(0, 300)}`)
      }
      const form = /<form[^>]*\baction="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(text)
      if (form === null) throw new Error(`no form on the provider's page at ${url.pathname}`)
      const fields = new URLSearchParams()
      for (const input of form[2].matchAll(/<input\b[^>]*>/g)) {
        const name = /\bname="([^"]*)"/.exec(input[0])?.[1]
        if (name === undefined) continue
        const value = /\bvalue="([^"]*)"/.exec(input[0])?.[1] ?? ""
        fields.set(name, name === "email" || name === "login" ? email : value)
      }
      url = new URL(form[1].replaceAll("&amp;", "&"), url)
      init = {
        method: "POST",
        body: fields.toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" }
      }
    }
    throw new Error("login did not reach the client's redirect_uri within 20 steps")
  }

  const close = async () => {
    handler = undefined
    const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
    server.closeAllConnections()
    await closed
  }

  const revokeAllTokens = async () => {
    const tokens = [...issued]
    issued.clear()
    await Promise.all(tokens.map((token) => token.destroy()))
    return tokens.length
  }

  return { issuer, close, login, revokeAllTokens, issuedSecrets: () => [...secrets] }
}

/** The person who signs in at the authorization server's pages in the browser suites. */
export const ALICE_AT_PROVIDER = { sub: "alice", email: "alice@as.test" }

/**
 * An authorization server holding ALICE_AT_PROVIDER, and an MCP server it protects (scope
 * `mcp:tools`, tokens introspected): what a workspace connects by OAuth. Access tokens live 4 s,
 * so a test sees them refreshed.
 */
export const startOAuthProtectedMcp = async (): Promise<{ readonly authServer: OidcServer; readonly mcp: McpTestServer }> => {
  const resourceServer = { id: "mcp-resource-server", secret: randomBytes(16).toString("hex") }
  const authServer = await startOidcServer({
    accounts: [ALICE_AT_PROVIDER],
    clients: [{ client_id: resourceServer.id, client_secret: resourceServer.secret, redirect_uris: ["http://127.0.0.1/unused"] }],
    oauth: { scopes: ["mcp:tools"], accessTokenTtlSeconds: 4 }
  })
  const mcp = await startMcpTestServer({
    authorizationServer: authServer.issuer,
    scopes: ["mcp:tools"],
    admit: introspectingAdmit(authServer.issuer, resourceServer.id, resourceServer.secret)
  })
  return { authServer, mcp }
}
