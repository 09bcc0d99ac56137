/**
 * The operator's denylist at every door (spec 2.9: a workspace install's listing "must not be
 * denylisted"): a workspace enabled a catalog server and an OAuth server; the node restarts with
 * both in PLUGIN_DENYLIST. Enabling again and connecting (health check, OAuth start and reauth) are
 * 403 `forbidden`, reason `plugin_denylisted`, as install answers; disabling stays allowed; the
 * marketplace (browse and get) shows the server denylisted with its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { catalogServerId } from "../../src/marketplace/CatalogEntry.ts"
import { parseDenylist } from "../../src/marketplace/PluginSettings.ts"
import { DEFAULT_SEED_REGISTRY_ID } from "../../src/marketplace/RegistrySettings.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { type McpTestServer, startMcpTestServer, TEST_SERVER_TOOLS } from "../support/mcpServer.ts"
import { addPerson, type Person } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { asPerson, type Caller, localSeedMarketplace, ok } from "../support/plugins.ts"
import { type RegistryServer, startRegistryServer } from "../support/registryServer.ts"
import { expectError } from "./client.ts"

const DENIED = "io.github.azure/azure-mcp"
const REASON = "sends workspace data outside the EU"
const OAUTH_DENIED = "com.denied-later/calendar"
const seedServer = (name: string) => catalogServerId(DEFAULT_SEED_REGISTRY_ID, name, "0.0.1-seed")

let upstream: RegistryServer
let server: McpTestServer
let first: TestNode | undefined
let restarted: TestNode | undefined
let owner: Person
let asOwner: Caller
let deniedListing: string
let oauthListing: string
let keptListing: string

const settings = (denylist: string) => ({
  outboundAllow: parseOutboundAllow("127.0.0.1"),
  marketplace: localSeedMarketplace(upstream),
  plugins: { denylist: parseDenylist(denylist), refreshLeadSeconds: 300, refreshCheckSeconds: 0 }
})

beforeAll(async () => {
  upstream = await startRegistryServer()
  server = await startMcpTestServer()
  upstream.change(DENIED, { remotes: [{ type: "streamable-http", url: server.mcpUrl }] })
  upstream.change("io.github.mcpdotdirect/evm-mcp-server", { remotes: [{ type: "streamable-http", url: server.mcpUrl }] })
  first = await startTestNode(settings(""))
  owner = await addPerson(first, "owner", { org: "owner" })
  asOwner = await asPerson(first, owner)
  ok(await asOwner("plugin.registry.sync", { registryId: DEFAULT_SEED_REGISTRY_ID, wait: true }))
  const enabledInWorkspace = async (install: Record<string, unknown>, healthy: boolean) => {
    const { listingId } = ok(await asOwner("plugin.org.install", install))
    ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: true }))
    const enabled = ok(await asOwner("plugin.workspace.set_enabled", { listingId, enabled: true }))
    expect(enabled.healthStatus).toBe(healthy ? "healthy" : "unhealthy")
    return listingId as string
  }
  deniedListing = await enabledInWorkspace({ catalogServerId: seedServer(DENIED) }, true)
  keptListing = await enabledInWorkspace({ catalogServerId: seedServer("io.github.mcpdotdirect/evm-mcp-server") }, true)
  oauthListing = await enabledInWorkspace({ name: OAUTH_DENIED, endpointUrl: "http://127.0.0.1:9/mcp", transport: "streamable-http", authKind: "oauth" }, false)
  const { dataDir, dbSchema } = first.config
  await first.stop()
  first = undefined
  // the operator denies both after they were installed and enabled: the same log and read models, a new denylist
  restarted = await startTestNode({ ...settings(`${DENIED}=${REASON},com.denied-later/*`), dataDir, dbSchema })
  asOwner = await asPerson(restarted, owner)
}, 90_000)

afterAll(async () => {
  await first?.stop()
  await restarted?.stop()
  await server?.close()
  await upstream?.close()
})

describe("a server denylisted after a workspace enabled it", () => {
  it("is refused at plugin.workspace.set_enabled, with install's code and reason; disabling stays allowed", async () => {
    expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId: deniedListing, enabled: false }))).toMatchObject({ enabled: false })
    expectError(await asOwner("plugin.workspace.set_enabled", { listingId: deniedListing, enabled: true }), 403, "forbidden", "plugin_denylisted")
    expectError(await asOwner("plugin.workspace.set_enabled", { listingId: oauthListing, enabled: true }), 403, "forbidden", "plugin_denylisted")
    // the refusal recorded nothing: the workspace's install stays disabled
    const [row] = await restarted!.db.sql`select enabled from ${restarted!.db.sql(restarted!.db.schema)}.plugin_workspace_installs where listing_id = ${deniedListing}`
    expect(row.enabled).toBe(false)
    expectError(await asOwner("plugin.org.install", { catalogServerId: seedServer(DENIED) }), 403, "forbidden", "plugin_denylisted")
    // a server not on the list is enabled (and connected) as before
    expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId: keptListing, enabled: true }))).toMatchObject({ healthStatus: "healthy", tools: [...TEST_SERVER_TOOLS] })
  })

  it("is refused at connect time: the MCP health check, OAuth start and reauth", async () => {
    const before = server.requests.length
    expectError(await asOwner("plugin.workspace.check_health", { listingId: deniedListing }), 403, "forbidden", "plugin_denylisted")
    expect(server.requests.length).toBe(before)
    expectError(await asOwner("plugin.oauth.start", { listingId: oauthListing }), 403, "forbidden", "plugin_denylisted")
    expectError(await asOwner("plugin.credential.reauth", { listingId: oauthListing }), 403, "forbidden", "plugin_denylisted")
  })

  it("is shown denylisted in the marketplace, browse and get, with its reason", async () => {
    const browsed = async (search: string, name: string) =>
      ok(await asOwner("plugin.catalog.browse", { search, limit: 100 })).servers.find((s: any) => s.name === name)
    expect(await browsed("azure", DENIED)).toMatchObject({ denylisted: { reason: REASON } })
    expect(await browsed("evm", "io.github.mcpdotdirect/evm-mcp-server")).toMatchObject({ denylisted: null })
    expect(ok(await asOwner("plugin.catalog.get", { serverId: seedServer(DENIED) }))).toMatchObject({ name: DENIED, denylisted: { reason: REASON } })
    expect(ok(await asOwner("plugin.catalog.get", { serverId: seedServer("io.github.mcpdotdirect/evm-mcp-server") })).denylisted).toBeNull()
  })
})
