/**
 * OAuth 2.1 plugin credentials end to end (spec 3.5, 5.11, 6.3.3, 6.3.5) against real parts: an MCP
 * server built with the MCP SDK advertising RFC 9728 metadata and checking each bearer by
 * introspection, protected by a real authorization server (oidc-provider) with dynamic
 * registration, PKCE, refresh tokens and revocation, and a real SMTP server. The loop: connect
 * (discovery, registration, authorization code with PKCE S256, callback, exchange) -> the refresh
 * watcher refreshes before expires_at -> the tokens are revoked at the server -> needs_reauth ->
 * a notification for Owners and Admins -> its email -> re-authentication with the stored client id
 * -> active. The state is single use and the person's own; no token or client secret in clear.
 */
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OAUTH_RETURN_COOKIE } from "../../gateway/pluginOAuth.ts"
import { OAUTH_CALLBACK_PATH } from "../../src/marketplace/OAuth.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { introspectingAdmit, type McpTestServer, startMcpTestServer, TEST_SERVER_TOOLS } from "../support/mcpServer.ts"
import { type OidcServer, startOidcServer } from "../support/oidcServer.ts"
import { addPerson, callWithCookie, cliLogin, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { findPlaintext } from "../support/secretScan.ts"
import { type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { call, eventually, expectError, type Reply } from "./client.ts"

const RESOURCE_SERVER = { id: "mcp-resource-server", secret: randomBytes(16).toString("hex") }
const ALICE = { sub: "alice", email: "alice@as.test" }

let node: TestNode
let authServer: OidcServer
let mcp: McpTestServer
let sink: SmtpSink
const admitted: Array<string> = []
const logLines: Array<string> = []
type Caller = (capability: string, input: unknown) => Promise<Reply>
let owner: Person
let admin: Person
let ownerCookie: string
let adminCookie: string
let asOwner: Caller
let asAdmin: Caller
let asMember: Caller
let asViewer: Caller
let listingId: string

const place = () => `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
const caller = (cookie: string): Caller => (capability, input) => callWithCookie(node.baseUrl, cookie, `${place()}/${capability.replaceAll(".", "/")}`, input)

const ok = (reply: Reply) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

/** The person's browser coming back from the authorization server to the platform's callback. */
const callback = async (redirect: string, cookie: string | undefined) => {
  const response = await fetch(`${node.baseUrl}${OAUTH_CALLBACK_PATH}${new URL(redirect).search}`, {
    headers: { accept: "application/json", ...(cookie === undefined ? {} : { cookie }) }
  })
  return { status: response.status, body: (await response.json()) as any }
}

const credentialRow = async () => {
  const [row] = await node.db.sql`select * from ${node.db.sql(node.db.schema)}.plugin_credentials where listing_id = ${listingId}`
  return row
}

beforeAll(async () => {
  authServer = await startOidcServer({
    accounts: [ALICE],
    clients: [{ client_id: RESOURCE_SERVER.id, client_secret: RESOURCE_SERVER.secret, redirect_uris: ["http://127.0.0.1/unused"] }],
    oauth: { scopes: ["mcp:tools"], accessTokenTtlSeconds: 4 }
  })
  mcp = await startMcpTestServer({
    authorizationServer: authServer.issuer,
    scopes: ["mcp:tools"],
    admit: introspectingAdmit(authServer.issuer, RESOURCE_SERVER.id, RESOURCE_SERVER.secret, admitted)
  })
  sink = await startSmtpSink()
  node = await startTestNode(
    {
      outboundAllow: parseOutboundAllow("127.0.0.1"),
      authTokenEncryptionKey: randomBytes(32),
      mail: { smtpUrl: sink.url, from: "Alerts <alerts@svc.test>" },
      plugins: { denylist: [], refreshLeadSeconds: 2, refreshCheckSeconds: 1 },
      logging: { level: "debug", format: "json" }
    },
    { logSink: (line) => logLines.push(line) }
  )
  owner = await addPerson(node, "owner", { org: "owner" })
  admin = await addPerson(node, "admin", { org: "member", workspace: "admin" })
  ownerCookie = (await signIn(node.baseUrl, owner)).cookie
  adminCookie = (await signIn(node.baseUrl, admin)).cookie
  asOwner = caller(ownerCookie)
  asAdmin = caller(adminCookie)
  asMember = caller((await signIn(node.baseUrl, await addPerson(node, "member", { org: "member", workspace: "member" }))).cookie)
  asViewer = caller((await signIn(node.baseUrl, await addPerson(node, "viewer", { org: "member", workspace: "viewer" }))).cookie)
  const listing = ok(await asOwner("plugin.org.install", { name: "com.test/oauth-notes", title: "OAuth Notes", endpointUrl: mcp.mcpUrl, transport: "streamable-http", authKind: "oauth" }))
  listingId = listing.listingId
  ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: true }))
}, 60_000)

afterAll(async () => {
  await node?.stop()
  await mcp?.close()
  await authServer?.close()
  await sink?.close()
})

describe("OAuth connect, refresh, revoke, needs_reauth, notification, email, reauth", () => {
  let clientId: string

  it("before a connection the server is unhealthy: the workspace has no OAuth credential", async () => {
    const install = ok(await asOwner("plugin.workspace.set_enabled", { listingId, enabled: true }))
    expect(install).toMatchObject({ enabled: true, healthStatus: "unhealthy" })
    expect(install.healthError).toContain("plugin.oauth.start")
  })

  it("connects: discovery, dynamic registration, PKCE S256, a single-use state bound to the person, the exchange", async () => {
    const started = ok(await asOwner("plugin.oauth.start", { listingId }))
    expect(started.credentialId).toMatch(/^mcrd_[0-9a-f]{32}$/)
    const authorizationUrl = new URL(started.authorizationUrl)
    expect(authorizationUrl.origin).toBe(authServer.issuer)
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256")
    expect(authorizationUrl.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(authorizationUrl.searchParams.get("resource")).toBe(mcp.mcpUrl)
    expect(authorizationUrl.searchParams.get("scope")).toBe("mcp:tools")
    clientId = authorizationUrl.searchParams.get("client_id")!
    expect(clientId).not.toBe("")
    const redirect = await authServer.login(started.authorizationUrl, ALICE.email)
    expect(new URL(redirect).searchParams.get("code")).not.toBeNull()

    // another person (an Admin) cannot complete it, nor can a browser with no session
    expectError(await callback(redirect, adminCookie), 400, "bad_request", "oauth_state_invalid")
    expect((await callback(redirect, undefined)).status).toBe(401)
    const connected = await callback(redirect, ownerCookie)
    expect(connected.status, JSON.stringify(connected.body)).toBe(200)
    expect(connected.body).toMatchObject({
      credentialId: started.credentialId,
      listingId,
      authKind: "oauth",
      status: "active",
      scopes: ["mcp:tools"],
      oauthClientId: clientId,
      appRoute: `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/settings/integrations`
    })
    expect(Date.parse(connected.body.expiresAt)).toBeGreaterThan(Date.now())
    // single use: the same redirect again is refused
    expectError(await callback(redirect, ownerCookie), 400, "bad_request", "oauth_state_invalid")

    const row = await credentialRow()
    expect(row).toMatchObject({ auth_kind: "oauth", status: "active", oauth_client_id: clientId, token_kms_key_id: "mcp_cred_v1", secret_enc: null })
    expect(row.access_token_enc).toMatch(/^v1\./)
    expect(row.refresh_token_enc).toMatch(/^v1\./)
    expect(row.oauth_client_secret_enc).toMatch(/^v1\./)
    expect(row.oauth).toEqual({ authorizationServerUrl: authServer.issuer, resource: mcp.mcpUrl })

    const healthy = ok(await asOwner("plugin.workspace.check_health", { listingId }))
    expect(healthy).toMatchObject({ healthStatus: "healthy", tools: [...TEST_SERVER_TOOLS] })
    expect(admitted.length).toBeGreaterThan(0)
  })

  it("a browser without JSON is sent on to the app", async () => {
    // a second authorization, completed in the browser form of the callback (the client registered once is kept)
    const started = ok(await asOwner("plugin.oauth.start", { listingId }))
    const redirect = await authServer.login(started.authorizationUrl, ALICE.email)
    const response = await fetch(`${node.baseUrl}${OAUTH_CALLBACK_PATH}${new URL(redirect).search}`, { headers: { cookie: ownerCookie }, redirect: "manual" })
    expect(response.status).toBe(302)
    expect(response.headers.get("location")).toBe(`/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/settings/integrations?connected=${listingId}`)
    expect(new URL(started.authorizationUrl).searchParams.get("client_id")).toBe(clientId)
    expect(response.headers.get("set-cookie")).toContain(`${OAUTH_RETURN_COOKIE}=;`)
  })

  it("a browser returns to the app page it left (named in the return cookie), if it is one of the credential's workspace", async () => {
    const integrations = `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/settings/integrations`
    const landing = async (returnTo: string) => {
      const started = ok(await asOwner("plugin.oauth.start", { listingId }))
      const redirect = await authServer.login(started.authorizationUrl, ALICE.email)
      const response = await fetch(`${node.baseUrl}${OAUTH_CALLBACK_PATH}${new URL(redirect).search}`, {
        headers: { cookie: `${ownerCookie}; ${OAUTH_RETURN_COOKIE}=${encodeURIComponent(returnTo)}` },
        redirect: "manual"
      })
      expect(response.status).toBe(302)
      return response.headers.get("location")
    }
    expect(await landing(`${integrations}/reauth/${listingId}`)).toBe(`${integrations}/reauth/${listingId}?connected=${listingId}`)
    // another workspace's page, or anything but an integrations page, is not followed
    expect(await landing(`/${node.bootstrap.orgSlug}/elsewhere/settings/integrations`)).toBe(`${integrations}?connected=${listingId}`)
    expect(await landing("https://evil.example/settings/integrations")).toBe(`${integrations}?connected=${listingId}`)
  })

  it("the refresh watcher refreshes before expires_at, and the new token is accepted", async () => {
    const before = await credentialRow()
    const refreshed = await eventually(credentialRow, (row) => row.last_refreshed_at !== null && row.access_token_enc !== before.access_token_enc, 15_000)
    expect(refreshed.last_refreshed_at).not.toBeNull()
    expect(refreshed.status).toBe("active")
    const seen = admitted.length
    expect(ok(await asOwner("plugin.workspace.check_health", { listingId })).healthStatus).toBe("healthy")
    expect(admitted.length).toBeGreaterThan(seen)
  })

  it("tokens revoked at the server: the next refresh fails, needs_reauth, Owners and Admins notified in the app and by email", async () => {
    const mailsBefore = sink.messages.length
    expect(await authServer.revokeAllTokens()).toBeGreaterThan(0)
    const row = await eventually(credentialRow, (r) => r.status === "needs_reauth", 15_000)
    expect(row.status).toBe("needs_reauth")
    const listed = ok(await asAdmin("plugin.org.list", { limit: 200 })).listings.find((l: any) => l.listingId === listingId)
    expect(listed.credential).toMatchObject({ status: "needs_reauth", lastRefreshedAt: row.last_refreshed_at.toISOString() })
    const deepLink = `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/settings/integrations/reauth/${listingId}`
    for (const [who, as] of [["owner", asOwner], ["admin", asAdmin]] as const) {
      const notices = await eventually(
        async () => ok(await as("notifications.list", {})).notifications.filter((n: any) => n.deepLink === deepLink),
        (found: Array<any>) => found.length > 0 && found[0].emailedAt !== null,
        10_000
      )
      expect(notices, who).toHaveLength(1)
      expect(notices[0]).toMatchObject({ kind: "system", unread: true, deepLink })
      expect(notices[0].title).toContain("OAuth Notes")
    }
    // every Owner of the organization (the bootstrap one too) and the workspace's Admin
    const owners = await node.db.sql`select u.email from ${node.db.sql(node.db.schema)}.org_members m join ${node.db.sql(node.db.schema)}.users u using (user_id) where m.role = 'owner'`
    const recipients = [...owners.map((o) => o.email as string), admin.email].sort()
    expect(recipients).toContain(owner.email)
    const mails = (await sink.received(mailsBefore + recipients.length)).slice(mailsBefore)
    expect(mails.flatMap((m) => m.to).sort()).toEqual(recipients)
    for (const mail of mails) expect(mail.decoded).toContain(deepLink)
    const unhealthy = ok(await asOwner("plugin.workspace.check_health", { listingId }))
    expect(unhealthy).toMatchObject({ healthStatus: "unhealthy" })
    expect(unhealthy.healthError).toContain("plugin.credential.reauth")
  })

  it("re-authentication restarts at authorization with the stored client id and makes the credential active again", async () => {
    const started = ok(await asAdmin("plugin.credential.reauth", { listingId }))
    expect(new URL(started.authorizationUrl).searchParams.get("client_id")).toBe(clientId)
    const redirect = await authServer.login(started.authorizationUrl, ALICE.email)
    const connected = await callback(redirect, adminCookie)
    expect(connected.status, JSON.stringify(connected.body)).toBe(200)
    expect(connected.body).toMatchObject({ status: "active", oauthClientId: clientId })
    expect(ok(await asAdmin("plugin.workspace.check_health", { listingId })).healthStatus).toBe("healthy")
  })
})

describe("refusals", () => {
  it("oauth.start and reauth only for OAuth listings; reauth only where a credential exists", async () => {
    const open = ok(await asOwner("plugin.org.install", { name: "com.test/open", endpointUrl: mcp.mcpUrl, transport: "streamable-http" }))
    expectError(await asOwner("plugin.oauth.start", { listingId: open.listingId }), 409, "conflict", "auth_kind_mismatch")
    const fresh = ok(await asOwner("plugin.org.install", { name: "com.test/oauth-fresh", endpointUrl: mcp.mcpUrl, transport: "streamable-http", authKind: "oauth" }))
    expectError(await asOwner("plugin.credential.reauth", { listingId: fresh.listingId }), 404, "not_found", "credential_not_found")
  })

  it("a retry of oauth.start under the same Idempotency-Key is refused: its URL was answered once", async () => {
    const start = () =>
      fetch(`${node.baseUrl}${place()}/plugin/oauth/start`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: ownerCookie, "idempotency-key": "start-once" },
        body: JSON.stringify({ listingId })
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
    expect((await start()).status).toBe(200)
    expectError(await start(), 409, "conflict", "idempotent_replay_secret")
  })

  it("a denied authorization reports oauth_denied and uses the state up", async () => {
    const fresh = ok(await asOwner("plugin.org.install", { name: "com.test/oauth-denied", endpointUrl: mcp.mcpUrl, transport: "streamable-http", authKind: "oauth" }))
    const started = ok(await asOwner("plugin.oauth.start", { listingId: fresh.listingId }))
    const redirect = await authServer.login(started.authorizationUrl, "nobody@as.test")
    expect(new URL(redirect).searchParams.get("error")).toBe("access_denied")
    expectError(await callback(redirect, ownerCookie), 400, "bad_request", "oauth_denied")
    expectError(await callback(redirect, ownerCookie), 400, "bad_request", "oauth_state_invalid")
  })

  it("a browser whose authorization failed lands on the page it left, told why", async () => {
    const fresh = ok(await asOwner("plugin.org.install", { name: "com.test/oauth-declined", endpointUrl: mcp.mcpUrl, transport: "streamable-http", authKind: "oauth" }))
    const started = ok(await asOwner("plugin.oauth.start", { listingId: fresh.listingId }))
    const redirect = await authServer.login(started.authorizationUrl, "nobody@as.test")
    const integrations = `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/settings/integrations`
    const browser = (cookie: string) => fetch(`${node.baseUrl}${OAUTH_CALLBACK_PATH}${new URL(redirect).search}`, { headers: { cookie }, redirect: "manual" })
    const declined = await browser(`${ownerCookie}; ${OAUTH_RETURN_COOKIE}=${encodeURIComponent(integrations)}`)
    expect(declined.status).toBe(302)
    expect(declined.headers.get("location")).toBe(`${integrations}?oauth_error=oauth_denied`)
    expect(declined.headers.get("set-cookie")).toContain(`${OAUTH_RETURN_COOKIE}=;`)
    const again = await browser(`${ownerCookie}; ${OAUTH_RETURN_COOKIE}=${encodeURIComponent(integrations)}`)
    expect(again.headers.get("location")).toBe(`${integrations}?oauth_error=oauth_state_invalid`)
    // with no page to return to, the failure is answered as it is
    expect((await browser(ownerCookie)).status).toBe(400)
  })

  it("oauth.start is on the API only and needs a person; reauth is on MCP too", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
    const client = new Client({ name: "oauth-e2e", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${node.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${await cliLogin(node, owner)}` } } }))
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toContain("plugin.credential.reauth")
      expect(names).not.toContain("plugin.oauth.start")
      expect(names).not.toContain("plugin.oauth.callback")
      const reauth = await client.callTool({ name: "plugin.credential.reauth", arguments: { listingId } })
      expect((reauth.structuredContent as any).authorizationUrl).toContain(authServer.issuer)
    } finally {
      await client.close()
    }
  })

  it.each(["plugin.oauth.start", "plugin.credential.reauth"])("%s: Member, Viewer and a workspace key get 403 forbidden", async (capability) => {
    const input = { listingId: `porg_${"8".repeat(32)}` }
    expectError(await asMember(capability, input), 403, "forbidden", undefined)
    expectError(await asViewer(capability, input), 403, "forbidden", undefined)
    // a key is never a person: both are refused before the role is looked at
    expectError(await call(node, capability, input), 403, "forbidden", "session_required")
  })
})

describe("OAuth found at connect time (spec 6.3.4)", () => {
  it("a server installed with auth kind none that answers with an OAuth challenge: health says oauth_required, the listing becomes oauth and connects", async () => {
    const installed = ok(await asOwner("plugin.org.install", { name: "com.test/undeclared-oauth", title: "Undeclared OAuth", endpointUrl: mcp.mcpUrl, transport: "streamable-http" }))
    expect(installed.authKind).toBe("none")
    const id = installed.listingId
    // before any workspace connects, nothing says OAuth
    expectError(await asOwner("plugin.oauth.start", { listingId: id }), 409, "conflict", "auth_kind_mismatch")
    ok(await asOwner("plugin.org.set_enabled", { listingId: id, enabled: true }))

    const install = ok(await asOwner("plugin.workspace.set_enabled", { listingId: id, enabled: true }))
    expect(install).toMatchObject({ enabled: true, healthStatus: "unhealthy", healthError: "oauth_required", tools: [] })
    const listed = ok(await asAdmin("plugin.org.list", { limit: 200 })).listings.find((l: any) => l.listingId === id)
    expect(listed).toMatchObject({ authKind: "oauth", credential: null, workspace: { enabled: true, healthStatus: "unhealthy", healthError: "oauth_required" } })
    expect(Date.parse(listed.authConfig.detectedAt)).not.toBeNaN()

    const started = ok(await asOwner("plugin.oauth.start", { listingId: id }))
    expect(new URL(started.authorizationUrl).origin).toBe(authServer.issuer)
    const connected = await callback(await authServer.login(started.authorizationUrl, ALICE.email), ownerCookie)
    expect(connected.status, JSON.stringify(connected.body)).toBe(200)
    expect(connected.body).toMatchObject({ listingId: id, authKind: "oauth", status: "active" })
    expect(ok(await asOwner("plugin.workspace.check_health", { listingId: id }))).toMatchObject({ healthStatus: "healthy", healthError: null, tools: [...TEST_SERVER_TOOLS] })
  })

  it("a server that refuses without naming an authorization server stays as installed, with the refusal as its health", async () => {
    const bare = await startMcpTestServer({ admit: () => false })
    try {
      const installed = ok(await asOwner("plugin.org.install", { name: "com.test/refusing", endpointUrl: bare.mcpUrl, transport: "streamable-http" }))
      ok(await asOwner("plugin.org.set_enabled", { listingId: installed.listingId, enabled: true }))
      const install = ok(await asOwner("plugin.workspace.set_enabled", { listingId: installed.listingId, enabled: true }))
      expect(install.healthStatus).toBe("unhealthy")
      expect(install.healthError).not.toBe("oauth_required")
      const listed = ok(await asAdmin("plugin.org.list", { limit: 200 })).listings.find((l: any) => l.listingId === installed.listingId)
      expect(listed.authKind).toBe("none")
    } finally {
      await bare.close()
    }
  })
})

describe("no plaintext at rest (spec 2.9)", () => {
  it("no access token, refresh token or client secret shows in any table, event on the log or log line", async () => {
    const secrets = authServer.issuedSecrets()
    expect(secrets.length).toBeGreaterThan(3)
    expect(await findPlaintext(node, [...secrets, ...admitted], logLines)).toEqual([])
  })
})
