/**
 * Plugin credentials end to end (spec 2.9, 3.5, 5.11): a `secret` entered by an admin, sealed at
 * rest and attached in the listing's declared header when the platform connects to a real MCP SDK
 * server that checks it; over REST and MCP; Members, Viewers and keys refused; and no plaintext
 * secret in any table, event on the log or log line (debug level).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { type McpTestServer, startMcpTestServer, TEST_SERVER_TOOLS } from "../support/mcpServer.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { addPerson } from "../support/people.ts"
import { asPerson, type Caller, ok, signInPluginPeople } from "../support/plugins.ts"
import { findPlaintext } from "../support/secretScan.ts"
import { call, expectError } from "./client.ts"

const API_KEY = `sk-test-${randomBytes(12).toString("hex")}`
const MCP_API_KEY = `sk-mcp-${randomBytes(12).toString("hex")}`

let node: TestNode
const logLines: Array<string> = []
let keyed: McpTestServer
let asOwner: Caller
let asAdmin: Caller
let asMember: Caller
let asViewer: Caller
let ownerMcp: Client
/** Every secret value the tests used, for the plaintext scan. */
const usedSecrets: Array<string> = [API_KEY, MCP_API_KEY]

/** A custom listing, enabled for the organization. */
const listed = async (name: string, endpointUrl: string, extra: Record<string, unknown> = {}): Promise<string> => {
  const { listingId } = ok(await asOwner("plugin.org.install", { name, endpointUrl, transport: "streamable-http", ...extra }))
  ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: true }))
  return listingId
}

beforeAll(async () => {
  // admits a request carrying one of the keys in X-Api-Key
  keyed = await startMcpTestServer({ admit: (headers) => headers["x-api-key"] === API_KEY || headers["x-api-key"] === MCP_API_KEY })
  node = await startTestNode(
    { outboundAllow: parseOutboundAllow("127.0.0.1"), authTokenEncryptionKey: randomBytes(32), logging: { level: "debug", format: "json" } },
    { logSink: (line) => logLines.push(line) }
  )
  ;({ asOwner, asAdmin, asMember, asViewer, ownerMcp } = await signInPluginPeople(node, "credentials-e2e"))
}, 60_000)

afterAll(async () => {
  await ownerMcp?.close()
  await node?.stop()
  await keyed?.close()
})

describe("plugin.credential.set_secret (spec 3.5: secret entry -> active)", () => {
  it("stores the secret sealed; connecting sends it in the declared header and the server lets the platform in", async () => {
    const listingId = await listed("com.test/keyed", keyed.mcpUrl, { authKind: "secret", authConfig: { header: "X-Api-Key", valuePrefix: "" } })
    expect(ok(await asAdmin("plugin.org.list", { limit: 200 })).listings.find((l: any) => l.listingId === listingId).credential).toBeNull()
    const before = ok(await asAdmin("plugin.workspace.set_enabled", { listingId, enabled: true }))
    expect(before).toMatchObject({ enabled: true, healthStatus: "unhealthy" })
    expect(before.healthError).toContain("plugin.credential.set_secret")

    const credential = ok(await asAdmin("plugin.credential.set_secret", { listingId, secret: API_KEY }))
    expect(credential).toMatchObject({ credentialId: expect.stringMatching(/^mcrd_[0-9a-f]{32}$/), listingId, authKind: "secret", status: "active" })
    expect(JSON.stringify(credential)).not.toContain(API_KEY)
    const [row] = await node.db.sql`select * from ${node.db.sql(node.db.schema)}.plugin_credentials where credential_id = ${credential.credentialId}`
    expect(row).toMatchObject({ auth_kind: "secret", status: "active", token_kms_key_id: "mcp_cred_v1", access_token_enc: null })
    expect(row.secret_enc).toMatch(/^v1\./)
    // the allow-list shows the workspace's credential by its state, never its secret
    const inList = ok(await asAdmin("plugin.org.list", { limit: 200 })).listings.find((l: any) => l.listingId === listingId)
    expect(inList.credential).toEqual({ status: "active", expiresAt: null, lastRefreshedAt: null, updatedAt: credential.updatedAt })
    expect(JSON.stringify(inList)).not.toContain(API_KEY)

    const after = ok(await asAdmin("plugin.workspace.check_health", { listingId }))
    expect(after).toMatchObject({ healthStatus: "healthy", healthError: null, tools: [...TEST_SERVER_TOOLS] })
    expect(keyed.requests.filter((r) => r.headers["x-api-key"] === API_KEY).length).toBeGreaterThan(0)
  })

  it("a bearer secret by default; replacing the secret replaces what is sent", async () => {
    const bearer = await startMcpTestServer({ admit: (headers) => headers.authorization === "Bearer second-secret-value" })
    usedSecrets.push("first-secret-value", "second-secret-value")
    try {
      const listingId = await listed("com.test/bearer", bearer.mcpUrl, { authKind: "secret" })
      ok(await asOwner("plugin.credential.set_secret", { listingId, secret: "first-secret-value" }))
      expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId, enabled: true })).healthStatus).toBe("unhealthy")
      ok(await asOwner("plugin.credential.set_secret", { listingId, secret: "second-secret-value" }))
      expect(ok(await asOwner("plugin.workspace.check_health", { listingId })).healthStatus).toBe("healthy")
    } finally {
      await bearer.close()
    }
  })

  it("only for a listing of auth kind secret on the allow-list", async () => {
    const open = await listed("com.test/open", keyed.mcpUrl)
    expectError(await asOwner("plugin.credential.set_secret", { listingId: open, secret: "x" }), 409, "conflict", "auth_kind_mismatch")
    expectError(await asOwner("plugin.credential.set_secret", { listingId: `porg_${"6".repeat(32)}`, secret: "x" }), 404, "not_found", "listing_not_found")
    expectError(await asOwner("plugin.credential.set_secret", { listingId: open, secret: "" }), 400, "bad_request", "invalid_input")
  })

  it("over MCP", async () => {
    const listingId = await listed("com.test/keyed-mcp", keyed.mcpUrl, { authKind: "secret", authConfig: { header: "X-Api-Key" } })
    const stored = (await ownerMcp.callTool({ name: "plugin.credential.set_secret", arguments: { listingId, secret: MCP_API_KEY } })) as CallToolResult
    expect(stored.structuredContent).toMatchObject({ listingId, authKind: "secret", status: "active" })
    const enabled = (await ownerMcp.callTool({ name: "plugin.workspace.set_enabled", arguments: { listingId, enabled: true } })) as CallToolResult
    expect(enabled.structuredContent).toMatchObject({ healthStatus: "healthy" })
  })

  it("Member, Viewer and a workspace key get 403 forbidden", async () => {
    const input = { listingId: `porg_${"7".repeat(32)}`, secret: "refused-secret" }
    expectError(await asMember("plugin.credential.set_secret", input), 403, "forbidden", undefined)
    expectError(await asViewer("plugin.credential.set_secret", input), 403, "forbidden", undefined)
    expectError(await call(node, "plugin.credential.set_secret", input), 403, "forbidden", undefined)
  })
})

describe("plugin.credential.set_shared_secret (spec 2.9: an organization's shared credential)", () => {
  it("a secret entered once serves every workspace; a workspace's own secret wins over it there, and only there", async () => {
    const SHARED = `sk-shared-${randomBytes(12).toString("hex")}`
    const OWN = `sk-own-${randomBytes(12).toString("hex")}`
    usedSecrets.push(SHARED, OWN)
    const server = await startMcpTestServer({ admit: (headers) => headers["x-api-key"] === SHARED || headers["x-api-key"] === OWN })
    const sentSince = (from: number) => server.requests.slice(from).map((r) => r.headers["x-api-key"])
    try {
      const listingId = await listed("com.test/shared", server.mcpUrl, { authKind: "secret", authConfig: { header: "X-Api-Key", valuePrefix: "" } })
      const shared = ok(await asOwner("plugin.credential.set_shared_secret", { listingId, secret: SHARED }))
      expect(shared).toMatchObject({ listingId, authKind: "secret", status: "active" })
      expect(JSON.stringify(shared)).not.toContain(SHARED)

      // two workspaces, neither with a secret of its own: both connect with the shared one
      const owner = await addPerson(node, "shared-owner", { org: "owner" })
      ok(await (await asPerson(node, owner))("workspace.create", { slug: "shared-second", name: "Second" }))
      const inSecond = await asPerson(node, owner, "shared-second")
      let from = server.requests.length
      expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId, enabled: true })).healthStatus).toBe("healthy")
      expect(ok(await inSecond("plugin.workspace.set_enabled", { listingId, enabled: true })).healthStatus).toBe("healthy")
      expect(new Set(sentSince(from))).toEqual(new Set([SHARED]))

      // the first workspace's own secret wins there; the second still uses the shared one
      ok(await asOwner("plugin.credential.set_secret", { listingId, secret: OWN }))
      from = server.requests.length
      expect(ok(await asOwner("plugin.workspace.check_health", { listingId })).healthStatus).toBe("healthy")
      expect(new Set(sentSince(from))).toEqual(new Set([OWN]))
      from = server.requests.length
      expect(ok(await inSecond("plugin.workspace.check_health", { listingId })).healthStatus).toBe("healthy")
      expect(new Set(sentSince(from))).toEqual(new Set([SHARED]))
    } finally {
      await server.close()
    }
  })

  it("Member, Viewer and a workspace key get 403 forbidden; a listing of another auth kind is 409", async () => {
    const input = { listingId: `porg_${"8".repeat(32)}`, secret: "refused-shared-secret" }
    expectError(await asMember("plugin.credential.set_shared_secret", input), 403, "forbidden", undefined)
    expectError(await asViewer("plugin.credential.set_shared_secret", input), 403, "forbidden", undefined)
    expectError(await call(node, "plugin.credential.set_shared_secret", input), 403, "forbidden", undefined)
    const open = await listed("com.test/open-shared", keyed.mcpUrl)
    expectError(await asOwner("plugin.credential.set_shared_secret", { listingId: open, secret: "x" }), 409, "conflict", "auth_kind_mismatch")
  })

  it("over MCP", async () => {
    const listingId = await listed("com.test/shared-mcp", keyed.mcpUrl, { authKind: "secret", authConfig: { header: "X-Api-Key" } })
    const stored = (await ownerMcp.callTool({ name: "plugin.credential.set_shared_secret", arguments: { listingId, secret: MCP_API_KEY } })) as CallToolResult
    expect(stored.structuredContent).toMatchObject({ listingId, authKind: "secret", status: "active" })
  })
})

describe("no plaintext at rest (spec 2.9)", () => {
  it("no secret or token used here shows in any table, event on the log or log line", async () => {
    expect(logLines.length).toBeGreaterThan(0)
    expect(await findPlaintext(node, usedSecrets, logLines)).toEqual([])
  })
})
