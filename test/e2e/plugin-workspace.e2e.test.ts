/**
 * Workspace enablement end to end (spec 2.9, 3.5, 4.5): plugin.workspace.set_enabled only for a
 * listing on the organization's allow-list (and enabled there), never a capability listing; the
 * health check connecting to a real MCP SDK server on 127.0.0.1 (Streamable HTTP, and the fallback
 * to SSE), listing its tools and recording health_status and last_health_check_at; over REST and MCP;
 * Members, Viewers and keys refused.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ListingActor } from "../../actors/listing/actor.ts"
import { InstallListing } from "../../actors/listing/protocol.ts"
import { listingIdOf } from "../../src/marketplace/PluginListings.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { type McpTestServer, startMcpTestServer, TEST_SERVER_TOOLS } from "../support/mcpServer.ts"
import { bootstrapPlace } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type Caller, ok, signInPluginPeople } from "../support/plugins.ts"
import { call, expectError } from "./client.ts"

let node: TestNode
let server: McpTestServer
let asOwner: Caller
let asAdmin: Caller
let asMember: Caller
let asViewer: Caller
let ownerMcp: Client

/** A custom listing of the organization, enabled there unless asked otherwise. */
const listed = async (name: string, endpointUrl: string, extra: Record<string, unknown> = {}, enabled = true): Promise<string> => {
  const { listingId } = ok(await asOwner("plugin.org.install", { name, endpointUrl, transport: "streamable-http", ...extra }))
  if (enabled) ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: true }))
  return listingId
}

beforeAll(async () => {
  server = await startMcpTestServer()
  node = await startTestNode({ outboundAllow: parseOutboundAllow("127.0.0.1") })
  ;({ asOwner, asAdmin, asMember, asViewer, ownerMcp } = await signInPluginPeople(node, "workspace-e2e"))
}, 60_000)

afterAll(async () => {
  await ownerMcp?.close()
  await node?.stop()
  await server?.close()
})

describe("plugin.workspace.set_enabled (spec 3.5: listing on the allow-list -> enabled or disabled)", () => {
  it("enabling connects over Streamable HTTP, lists the tools and records the server healthy", async () => {
    const listingId = await listed("com.test/streamable", server.mcpUrl)
    const before = Date.now()
    const install = ok(await asAdmin("plugin.workspace.set_enabled", { listingId, enabled: true }))
    expect(install).toMatchObject({ listingId, enabled: true, healthStatus: "healthy", healthError: null, tools: [...TEST_SERVER_TOOLS] })
    expect(Date.parse(install.lastHealthCheckAt)).toBeGreaterThanOrEqual(before - 1000)
    expect(server.requests.some((r) => r.path === "/mcp" && r.method === "POST")).toBe(true)
    const [row] = await node.db.sql`select enabled, health_status, last_health_check_at from ${node.db.sql(node.db.schema)}.plugin_workspace_installs where listing_id = ${listingId}`
    expect(row).toMatchObject({ enabled: true, health_status: "healthy" })
    expect(row.last_health_check_at.toISOString()).toBe(install.lastHealthCheckAt)
    const inList = ok(await asOwner("plugin.org.list", { limit: 100 })).listings.find((l: any) => l.listingId === listingId)
    expect(inList.workspace).toEqual({ enabled: true, healthStatus: "healthy", lastHealthCheckAt: install.lastHealthCheckAt, healthError: null })
  })

  it("falls back to SSE when the endpoint refuses Streamable HTTP; a listing declared SSE connects over SSE", async () => {
    const fallback = await listed("com.test/legacy", server.legacyUrl)
    expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId: fallback, enabled: true }))).toMatchObject({ healthStatus: "healthy", tools: [...TEST_SERVER_TOOLS] })
    const sse = await listed("com.test/sse", server.legacyUrl, { transport: "sse" })
    expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId: sse, enabled: true }))).toMatchObject({ healthStatus: "healthy", tools: [...TEST_SERVER_TOOLS] })
  })

  it("records an unreachable server, a refused address and a missing secret as unhealthy, with why", async () => {
    const closed = await listed("com.test/closed", "http://127.0.0.1:9/mcp")
    const down = ok(await asOwner("plugin.workspace.set_enabled", { listingId: closed, enabled: true }))
    expect(down).toMatchObject({ enabled: true, healthStatus: "unhealthy", tools: [] })
    expect(down.healthError).toEqual(expect.any(String))
    const privateAddress = await listed("com.test/private", "http://10.1.2.3/mcp")
    const refused = ok(await asOwner("plugin.workspace.set_enabled", { listingId: privateAddress, enabled: true }))
    expect(refused).toMatchObject({ healthStatus: "unhealthy" })
    expect(refused.healthError).toContain("private address")
    const secret = await listed("com.test/needs-secret", server.mcpUrl, { authKind: "secret" })
    const missing = ok(await asOwner("plugin.workspace.set_enabled", { listingId: secret, enabled: true }))
    expect(missing).toMatchObject({ healthStatus: "unhealthy" })
    expect(missing.healthError).toContain("plugin.credential.set_secret")
  })

  it("only for a listing on the allow-list and enabled for the organization; disabling always", async () => {
    const off = await listed("com.test/org-disabled", server.mcpUrl, {}, false)
    expectError(await asOwner("plugin.workspace.set_enabled", { listingId: off, enabled: true }), 409, "conflict", "listing_disabled")
    expectError(await asOwner("plugin.workspace.set_enabled", { listingId: `porg_${"4".repeat(32)}`, enabled: true }), 404, "not_found", "listing_not_found")
    const gone = await listed("com.test/gone", server.mcpUrl)
    ok(await asOwner("plugin.workspace.set_enabled", { listingId: gone, enabled: true }))
    ok(await asOwner("plugin.org.uninstall", { listingId: gone }))
    const [row] = await node.db.sql`select enabled from ${node.db.sql(node.db.schema)}.plugin_workspace_installs where listing_id = ${gone}`
    expect(row.enabled).toBe(false)
    expectError(await asOwner("plugin.workspace.set_enabled", { listingId: gone, enabled: true }), 404, "not_found", "listing_not_found")
    const disabled = ok(await asOwner("plugin.workspace.set_enabled", { listingId: off, enabled: false }))
    expect(disabled).toMatchObject({ enabled: false, healthStatus: "unknown", lastHealthCheckAt: null })
  })

  it("never a capability listing", async () => {
    const { orgId } = await bootstrapPlace(node)
    const listingId = listingIdOf(orgId, "capability", "svc/documents")
    const meta = { commandId: randomUUID(), at: new Date().toISOString(), actor: "system" }
    await Runtime.runPromise(node.runtime)(node.host.send(ListingActor, listingId, new InstallListing({
      listingId, orgId, pluginType: "capability", catalogServerId: null, source: "svc", name: "svc/documents", title: "Documents", description: "",
      iconUrl: null, endpointUrl: null, transport: null, authKind: "none", authConfig: {}, config: {}
    }), meta))
    ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: true }))
    expectError(await asOwner("plugin.workspace.set_enabled", { listingId, enabled: true }), 409, "conflict", "capability_listing")
  })
})

describe("without a master key (AUTH_TOKEN_ENCRYPTION_KEY unset)", () => {
  it("secret entry is refused and nothing is stored", async () => {
    const listingId = await listed("com.test/no-key", server.mcpUrl, { authKind: "secret" })
    expectError(await asOwner("plugin.credential.set_secret", { listingId, secret: "never-stored" }), 409, "conflict", "encryption_not_configured")
    const rows = await node.db.sql`select 1 from ${node.db.sql(node.db.schema)}.plugin_credentials where listing_id = ${listingId}`
    expect(rows.length).toBe(0)
  })
})

describe("plugin.workspace.check_health", () => {
  it("checks again and records what changed: a server gone down is unhealthy", async () => {
    const other = await startMcpTestServer()
    const listingId = await listed("com.test/flaky", other.mcpUrl)
    expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId, enabled: true })).healthStatus).toBe("healthy")
    await other.close()
    const after = ok(await asOwner("plugin.workspace.check_health", { listingId }))
    expect(after).toMatchObject({ enabled: true, healthStatus: "unhealthy", tools: [] })
  })

  it("refuses a server the workspace has not enabled", async () => {
    const listingId = await listed("com.test/not-here", server.mcpUrl)
    expectError(await asOwner("plugin.workspace.check_health", { listingId }), 409, "conflict", "not_enabled_in_workspace")
  })
})

describe("over MCP (an Owner's CLI login)", () => {
  it("set_enabled and check_health", async () => {
    const listingId = await listed("com.test/over-mcp", server.mcpUrl)
    const enabled = (await ownerMcp.callTool({ name: "plugin.workspace.set_enabled", arguments: { listingId, enabled: true } })) as CallToolResult
    expect(enabled.structuredContent).toMatchObject({ enabled: true, healthStatus: "healthy" })
    const checked = (await ownerMcp.callTool({ name: "plugin.workspace.check_health", arguments: { listingId } })) as CallToolResult
    expect(checked.structuredContent).toMatchObject({ healthStatus: "healthy", tools: [...TEST_SERVER_TOOLS] })
    const disabled = (await ownerMcp.callTool({ name: "plugin.workspace.set_enabled", arguments: { listingId, enabled: false } })) as CallToolResult
    expect(disabled.structuredContent).toMatchObject({ enabled: false })
  })
})

describe("roles (spec 5 rule 12)", () => {
  it.each(["plugin.workspace.set_enabled", "plugin.workspace.check_health"])("%s: Member, Viewer and a workspace key get 403 forbidden", async (capability) => {
    const input = capability === "plugin.workspace.set_enabled" ? { listingId: `porg_${"5".repeat(32)}`, enabled: true } : { listingId: `porg_${"5".repeat(32)}` }
    expectError(await asMember(capability, input), 403, "forbidden", undefined)
    expectError(await asViewer(capability, input), 403, "forbidden", undefined)
    expectError(await call(node, capability, input), 403, "forbidden", undefined)
  })
})
