/**
 * OAuth plugin credentials (spec 2.9, 5.11 b) against real authorization servers (oidc-provider)
 * whose dynamic client registration is off, or offered but refused (it asks for an initial access
 * token the platform does not hold): the connection falls back to the client an admin registered
 * there and gives, and completes; without one it is refused with the reason. And the
 * organization's shared OAuth connection: connected once by an Owner, used by two workspaces; a
 * workspace's own connection wins there. The MCP servers check each bearer by introspection and
 * record whose it is.
 */
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ORG_SHARED_WORKSPACE } from "../../actors/credential/state.ts"
import { OAUTH_RETURN_COOKIE } from "../../gateway/pluginOAuth.ts"
import { OAUTH_CALLBACK_PATH } from "../../src/marketplace/OAuth.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { introspectingAdmit, type McpTestServer, startMcpTestServer, TEST_SERVER_TOOLS } from "../support/mcpServer.ts"
import { type OidcServer, startOidcServer } from "../support/oidcServer.ts"
import { addPerson, callWithCookie, cliLogin, signIn } from "../support/people.ts"
import { freePort, startTestNode, type TestNode } from "../support/platform.ts"
import { ok } from "../support/plugins.ts"
import { findPlaintext } from "../support/secretScan.ts"
import { call, expectError, type Reply } from "./client.ts"

const RESOURCE_SERVER = { id: "mcp-resource-server", secret: randomBytes(16).toString("hex") }
/** The client an admin registered by hand at each authorization server, for the platform's callback. */
const ADMIN_CLIENT = { id: "platform-connector", secret: randomBytes(16).toString("hex") }
const ALICE = { sub: "alice", email: "alice@as.test" }
const BOB = { sub: "bob", email: "bob@as.test" }
const SECOND_WORKSPACE = "oauth-second"

type Caller = (capability: string, input: unknown) => Promise<Reply>

interface ProtectedServer {
  readonly authServer: OidcServer
  readonly mcp: McpTestServer
  /** The subject of every bearer the MCP server admitted, in order. */
  readonly subjects: Array<string>
}

let node: TestNode
let off: ProtectedServer
let refusing: ProtectedServer
let ownerCookie: string
let asOwner: Caller
let inSecond: Caller
let asMember: Caller
const logLines: Array<string> = []

/** An authorization server with the admin's client and the resource server's, and an MCP server it protects. */
const protectedServer = async (registration: "off" | "token"): Promise<ProtectedServer> => {
  const authServer = await startOidcServer({
    accounts: [ALICE, BOB],
    clients: [
      { client_id: RESOURCE_SERVER.id, client_secret: RESOURCE_SERVER.secret, redirect_uris: ["http://127.0.0.1/unused"] },
      { client_id: ADMIN_CLIENT.id, client_secret: ADMIN_CLIENT.secret, redirect_uris: [`${node.baseUrl}${OAUTH_CALLBACK_PATH}`] }
    ],
    oauth: { scopes: ["mcp:tools"], accessTokenTtlSeconds: 600, registration }
  })
  const subjects: Array<string> = []
  const mcp = await startMcpTestServer({
    authorizationServer: authServer.issuer,
    scopes: ["mcp:tools"],
    admit: introspectingAdmit(authServer.issuer, RESOURCE_SERVER.id, RESOURCE_SERVER.secret, [], subjects)
  })
  return { authServer, mcp, subjects }
}

const place = (workspaceSlug: string) => `/v1/${node.bootstrap.orgSlug}/${workspaceSlug}`
const caller = (cookie: string, workspaceSlug = node.bootstrap.workspaceSlug): Caller => (capability, input) =>
  callWithCookie(node.baseUrl, cookie, `${place(workspaceSlug)}/${capability.replaceAll(".", "/")}`, input)

/** The person's browser coming back to the platform's callback, asking for JSON. */
const callback = async (redirect: string) => {
  const response = await fetch(`${node.baseUrl}${OAUTH_CALLBACK_PATH}${new URL(redirect).search}`, {
    headers: { accept: "application/json", cookie: ownerCookie }
  })
  return { status: response.status, body: (await response.json()) as any }
}

/** An OAuth listing of the server, enabled for the organization. */
const listed = async (name: string, server: ProtectedServer): Promise<string> => {
  const { listingId } = ok(await asOwner("plugin.org.install", { name, endpointUrl: server.mcp.mcpUrl, transport: "streamable-http", authKind: "oauth" }))
  ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: true }))
  return listingId
}

/** Whose tokens the server admitted while `run` ran. */
const subjectsDuring = async (server: ProtectedServer, run: () => Promise<unknown>) => {
  const from = server.subjects.length
  await run()
  return new Set(server.subjects.slice(from))
}

const adminClient = { clientId: ADMIN_CLIENT.id, clientSecret: ADMIN_CLIENT.secret }

beforeAll(async () => {
  const port = await freePort()
  node = await startTestNode(
    {
      port,
      baseUrl: `http://127.0.0.1:${port}`,
      outboundAllow: parseOutboundAllow("127.0.0.1"),
      authTokenEncryptionKey: randomBytes(32),
      logging: { level: "debug", format: "json" }
    },
    { logSink: (line) => logLines.push(line) }
  )
  off = await protectedServer("off")
  refusing = await protectedServer("token")
  const owner = await addPerson(node, "owner", { org: "owner" })
  ownerCookie = (await signIn(node.baseUrl, owner)).cookie
  asOwner = caller(ownerCookie)
  ok(await asOwner("workspace.create", { slug: SECOND_WORKSPACE, name: "Second" }))
  inSecond = caller(ownerCookie, SECOND_WORKSPACE)
  asMember = caller((await signIn(node.baseUrl, await addPerson(node, "member", { org: "member", workspace: "member" }))).cookie)
}, 60_000)

afterAll(async () => {
  await node?.stop()
  for (const server of [off, refusing]) {
    await server?.mcp.close()
    await server?.authServer.close()
  }
})

describe("the admin's client credentials when dynamic registration is not to be had (spec 5.11 b)", () => {
  it.each([
    ["offers no registration", () => off, "offers no dynamic client registration"],
    ["refuses registration without an initial access token", () => refusing, "refused dynamic client registration"]
  ])("a server that %s: without client credentials the start is refused saying so; with the admin's, the connection completes", async (_, server, why) => {
    const { authServer, mcp } = server()
    const listingId = await listed(`com.test/admin-client-${authServer.issuer.split(":").at(-1)}`, server())
    const refused = await asOwner("plugin.oauth.start", { listingId })
    expectError(refused, 400, "bad_request", "client_credentials_required")
    expect(refused.body.error.message).toContain(why)

    const started = ok(await asOwner("plugin.oauth.start", { listingId, ...adminClient }))
    const authorizationUrl = new URL(started.authorizationUrl)
    expect(authorizationUrl.origin).toBe(authServer.issuer)
    expect(authorizationUrl.searchParams.get("client_id")).toBe(ADMIN_CLIENT.id)
    const connected = await callback(await authServer.login(started.authorizationUrl, ALICE.email))
    expect(connected.status, JSON.stringify(connected.body)).toBe(200)
    expect(connected.body).toMatchObject({ listingId, authKind: "oauth", status: "active", scopes: ["mcp:tools"], oauthClientId: ADMIN_CLIENT.id })

    // the plugin holds a token the server accepts: the workspace connects and lists its tools
    expect(await subjectsDuring(server(), async () => {
      expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId, enabled: true }))).toMatchObject({ healthStatus: "healthy", tools: [...TEST_SERVER_TOOLS] })
    })).toEqual(new Set([ALICE.sub]))
    expect(mcp.requests.length).toBeGreaterThan(0)

    // re-authentication uses the stored client, with no credentials given again
    const again = ok(await asOwner("plugin.credential.reauth", { listingId }))
    expect(new URL(again.authorizationUrl).searchParams.get("client_id")).toBe(ADMIN_CLIENT.id)
  })
})

describe("plugin.oauth.start_shared (spec 2.9: an organization's shared OAuth connection)", () => {
  it("connected once, it serves two workspaces; a workspace's own connection wins there, and only there", async () => {
    const listingId = await listed("com.test/shared-oauth", off)
    const started = ok(await asOwner("plugin.oauth.start_shared", { listingId, ...adminClient }))
    const connected = await callback(await off.authServer.login(started.authorizationUrl, ALICE.email))
    expect(connected.status, JSON.stringify(connected.body)).toBe(200)
    expect(connected.body).toMatchObject({ listingId, workspaceId: ORG_SHARED_WORKSPACE, authKind: "oauth", status: "active", appRoute: `/${node.bootstrap.orgSlug}` })

    // the list shows the shared connection in every workspace, and no workspace's own
    for (const as of [asOwner, inSecond]) {
      const inList = ok(await as("plugin.org.list", { limit: 200 })).listings.find((l: any) => l.listingId === listingId)
      expect(inList).toMatchObject({ credential: null, sharedCredential: { status: "active", updatedAt: connected.body.updatedAt } })
    }

    // neither workspace connected OAuth itself: both connect with the shared token
    expect(await subjectsDuring(off, async () => {
      expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId, enabled: true })).healthStatus).toBe("healthy")
      expect(ok(await inSecond("plugin.workspace.set_enabled", { listingId, enabled: true })).healthStatus).toBe("healthy")
    })).toEqual(new Set([ALICE.sub]))

    // the bootstrap workspace connects its own (as Bob); the second keeps the shared one
    const own = ok(await asOwner("plugin.oauth.start", { listingId, ...adminClient }))
    const ownConnected = await callback(await off.authServer.login(own.authorizationUrl, BOB.email))
    expect(ownConnected.body).toMatchObject({ status: "active", appRoute: `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/settings/integrations` })
    expect(ownConnected.body.workspaceId).not.toBe(ORG_SHARED_WORKSPACE)
    expect(ok(await asOwner("plugin.org.list", { limit: 200 })).listings.find((l: any) => l.listingId === listingId)).toMatchObject({
      credential: { status: "active", updatedAt: ownConnected.body.updatedAt },
      sharedCredential: { status: "active" }
    })
    expect(await subjectsDuring(off, async () => ok(await asOwner("plugin.workspace.check_health", { listingId })))).toEqual(new Set([BOB.sub]))
    expect(await subjectsDuring(off, async () => ok(await inSecond("plugin.workspace.check_health", { listingId })))).toEqual(new Set([ALICE.sub]))
  })

  it("a browser returns to the integrations page of any workspace of the organization it left", async () => {
    const listingId = await listed("com.test/shared-oauth-browser", off)
    const started = ok(await asOwner("plugin.oauth.start_shared", { listingId, ...adminClient }))
    const redirect = await off.authServer.login(started.authorizationUrl, ALICE.email)
    const left = `/${node.bootstrap.orgSlug}/${SECOND_WORKSPACE}/settings/integrations`
    const response = await fetch(`${node.baseUrl}${OAUTH_CALLBACK_PATH}${new URL(redirect).search}`, {
      headers: { cookie: `${ownerCookie}; ${OAUTH_RETURN_COOKIE}=${encodeURIComponent(left)}` },
      redirect: "manual"
    })
    expect(response.status).toBe(302)
    expect(response.headers.get("location")).toBe(`${left}?connected=${listingId}`)
  })

  it("on the API only, for an Owner or Admin in person: a Member gets 403, a key is refused, MCP does not list it", async () => {
    const input = { listingId: `porg_${"8".repeat(32)}` }
    expectError(await asMember("plugin.oauth.start_shared", input), 403, "forbidden", undefined)
    expectError(await call(node, "plugin.oauth.start_shared", input), 403, "forbidden", "session_required")
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
    const client = new Client({ name: "oauth-clients-e2e", version: "1.0.0" })
    const owner = await addPerson(node, "mcp-owner", { org: "owner" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${node.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${await cliLogin(node, owner)}` } } }))
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toContain("plugin.credential.set_shared_secret")
      expect(names).not.toContain("plugin.oauth.start_shared")
    } finally {
      await client.close()
    }
  })
})

describe("no plaintext at rest (spec 2.9)", () => {
  it("no token or client secret shows in any table, event on the log or log line", async () => {
    const secrets = [...off.authServer.issuedSecrets(), ...refusing.authServer.issuedSecrets(), ADMIN_CLIENT.secret]
    expect(secrets.length).toBeGreaterThan(3)
    expect(await findPlaintext(node, secrets, logLines)).toEqual([])
  })
})
