/**
 * Org listings end to end (spec 2.9, 3.5, 4.5): the allow-list over REST with people's sessions and
 * over MCP with an Owner's CLI login: installs of catalog servers (from a local registry serving the
 * real seed) and of custom servers, created disabled; a name installed once per organization; the
 * operator's denylist; bulk installs reported per item; set_enabled; uninstall as a soft delete and
 * a reinstall; list and its filters; Members, Viewers and keys refused.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { catalogServerId } from "../../src/marketplace/CatalogEntry.ts"
import { DEFAULT_SEED_REGISTRY_ID } from "../../src/marketplace/RegistrySettings.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type Caller, localSeedMarketplace, ok, overMcp, signInPluginPeople } from "../support/plugins.ts"
import { type RegistryServer, startRegistryServer } from "../support/registryServer.ts"
import { call, expectError } from "./client.ts"

let node: TestNode
let upstream: RegistryServer
let asOwner: Caller
let asAdmin: Caller
let asMember: Caller
let asViewer: Caller
let ownerMcp: Client

const seedServer = (name: string) => catalogServerId(DEFAULT_SEED_REGISTRY_ID, name, "0.0.1-seed")
const custom = (name: string, extra: Record<string, unknown> = {}) => ({ name, endpointUrl: `https://${name.replace(/[^a-z0-9]/g, "-")}.example.com/mcp`, transport: "streamable-http", ...extra })

beforeAll(async () => {
  upstream = await startRegistryServer()
  // a seed server offering Streamable HTTP with a secret header, one with SSE only, one with no remote at all
  upstream.change("io.github.azure/azure-mcp", {
    remotes: [{ type: "streamable-http", url: "https://azure.example.com/mcp", headers: [{ name: "X-Api-Key", isSecret: true, value: "{api_key}" }] }]
  })
  // a package's secret environment value (spec 2.9): one server offered only as a stdio package, one with a remote too
  const stdioPackage = {
    registryType: "npm",
    identifier: "@ramp/mcp",
    version: "1.0.0",
    transport: { type: "stdio" },
    environmentVariables: [{ name: "RAMP_API_KEY", isSecret: true, isRequired: true }, { name: "RAMP_REGION", isSecret: false }]
  }
  upstream.change("io.github.ramp-public/ramp-mcp", { packages: [stdioPackage] })
  upstream.change("io.github.riza-io/riza-mcp", { packages: [stdioPackage], remotes: [{ type: "streamable-http", url: "https://riza.example.com/mcp" }] })
  node = await startTestNode({
    outboundAllow: parseOutboundAllow("127.0.0.1"),
    marketplace: localSeedMarketplace(upstream),
    plugins: { denylist: ["com.denied/*", "io.github.sooperset/mcp-atlassian"], refreshLeadSeconds: 300, refreshCheckSeconds: 0 }
  })
  ;({ asOwner, asAdmin, asMember, asViewer, ownerMcp } = await signInPluginPeople(node, "listings-e2e"))
  ok(await asOwner("plugin.registry.sync", { registryId: DEFAULT_SEED_REGISTRY_ID, wait: true }))
}, 60_000)

afterAll(async () => {
  await ownerMcp?.close()
  await node?.stop()
  await upstream?.close()
})

describe("plugin.org.install (spec 3.5: (none) -> disabled)", () => {
  it("installs a catalog server by id, disabled, with its remote, transport and secret header", async () => {
    const listing = ok(await asOwner("plugin.org.install", { catalogServerId: seedServer("io.github.azure/azure-mcp") }))
    expect(listing).toMatchObject({
      listingId: expect.stringMatching(/^porg_[0-9a-f]{32}$/),
      pluginType: "mcp_server",
      catalogServerId: seedServer("io.github.azure/azure-mcp"),
      source: "registry",
      name: "io.github.azure/azure-mcp",
      endpointUrl: "https://azure.example.com/mcp",
      transport: "streamable-http",
      authKind: "secret",
      authConfig: { header: "X-Api-Key", valuePrefix: "" },
      enabled: false,
      deletedAt: null
    })
  })

  it("a package's secret environment value: refused at install with the reason when the server is only a package; never sent to its remote", async () => {
    const packaged = seedServer("io.github.ramp-public/ramp-mcp")
    expect(ok(await asOwner("plugin.catalog.get", { serverId: packaged })).authKind).toBe("secret")
    const refused = await asOwner("plugin.org.install", { catalogServerId: packaged })
    expectError(refused, 400, "bad_request", "no_remote")
    expect(refused.body.error.message).toContain("only as a package to run locally (stdio, secret environment values RAMP_API_KEY)")
    const overMcpRefused = await overMcp(ownerMcp, "plugin.org.install", { catalogServerId: packaged })
    expect(overMcpRefused).toMatchObject({ refused: true, body: { error: { code: "bad_request", reason: "no_remote" } } })

    // with a remote too, the remote is installed with its own auth kind: the package's key is its local process's, not a bearer for the remote
    const withRemote = seedServer("io.github.riza-io/riza-mcp")
    expect(ok(await asOwner("plugin.catalog.get", { serverId: withRemote })).authKind).toBe("secret")
    expect(ok(await asOwner("plugin.org.install", { catalogServerId: withRemote }))).toMatchObject({
      endpointUrl: "https://riza.example.com/mcp",
      transport: "streamable-http",
      authKind: "none",
      authConfig: {}
    })
  })

  it("installs an SSE-only catalog server over SSE; one with no remote is refused", async () => {
    const sse = ok(await asAdmin("plugin.org.install", { catalogServerId: seedServer("io.github.mcpdotdirect/evm-mcp-server") }))
    expect(sse).toMatchObject({ transport: "sse", authKind: "none", enabled: false })
    expectError(await asOwner("plugin.org.install", { catalogServerId: seedServer("io.github.21st-dev/magic-mcp") }), 400, "bad_request", "no_remote")
    expectError(await asOwner("plugin.org.install", { catalogServerId: `mcat_${"0".repeat(32)}` }), 404, "not_found", "catalog_server_not_found")
  })

  it("installs a custom server by endpoint and transport; a secret one defaults to a bearer header", async () => {
    const listing = ok(await asOwner("plugin.org.install", custom("com.example/notes", { title: "Notes", authKind: "secret" })))
    expect(listing).toMatchObject({ source: "custom", catalogServerId: null, name: "com.example/notes", title: "Notes", authKind: "secret", authConfig: { header: "Authorization", valuePrefix: "Bearer " }, enabled: false })
    expectError(await asOwner("plugin.org.install", custom("com.example/bad", { endpointUrl: "ftp://files.example.com" })), 400, "bad_request", "invalid_input")
    expectError(await asOwner("plugin.org.install", custom("com.example/bad", { transport: "stdio" })), 400, "bad_request", "invalid_input")
  })

  it("a name is on the allow-list once (unique on org, plugin type and name)", async () => {
    const first = ok(await asOwner("plugin.org.install", custom("com.example/once")))
    expectError(await asAdmin("plugin.org.install", custom("com.example/once", { endpointUrl: "https://other.example.com/mcp" })), 409, "conflict", "listing_exists")
    // the same name as another plugin type is another listing
    const asTool = ok(await asOwner("plugin.org.install", custom("com.example/once", { pluginType: "content_tool" })))
    expect(asTool.listingId).not.toBe(first.listingId)
  })

  it("refuses names on the operator's denylist (exact and prefix)", async () => {
    expectError(await asOwner("plugin.org.install", custom("com.denied/anything")), 403, "forbidden", "plugin_denylisted")
    expectError(await asOwner("plugin.org.install", { catalogServerId: seedServer("io.github.sooperset/mcp-atlassian") }), 403, "forbidden", "plugin_denylisted")
  })
})

describe("plugin.org.install_bulk", () => {
  it("installs each item whole or not at all, and reports each", async () => {
    const reply = ok(await asOwner("plugin.org.install_bulk", {
      items: [
        custom("com.bulk/one"),
        custom("com.denied/two"),
        { catalogServerId: seedServer("io.github.tbxark/mcp-proxy") },
        custom("com.bulk/one"),
        { catalogServerId: `mcat_${"1".repeat(32)}` }
      ]
    }))
    expect(reply.installed).toBe(2)
    expect(reply.failed).toBe(3)
    expect(reply.results.map((r: any) => [r.index, r.ok, r.ok ? r.listing.name : r.error.reason])).toEqual([
      [0, true, "com.bulk/one"],
      [1, false, "plugin_denylisted"],
      [2, true, "io.github.tbxark/mcp-proxy"],
      [3, false, "listing_exists"],
      [4, false, "catalog_server_not_found"]
    ])
    expect(reply.results[3].error).toMatchObject({ status: 409, code: "conflict" })
    const names = ok(await asOwner("plugin.org.list", { limit: 100 })).listings.map((l: any) => l.name)
    expect(names).toEqual(expect.arrayContaining(["com.bulk/one", "io.github.tbxark/mcp-proxy"]))
    expect(names).not.toContain("com.denied/two")
  })

  it("refuses an empty or oversized batch", async () => {
    expectError(await asOwner("plugin.org.install_bulk", { items: [] }), 400, "bad_request", "invalid_input")
    expectError(await asOwner("plugin.org.install_bulk", { items: Array.from({ length: 51 }, (_, i) => custom(`com.many/${i}`)) }), 400, "bad_request", "invalid_input")
  })
})

describe("plugin.org.set_enabled, uninstall and list", () => {
  it("Owner and Admin enable and disable (disabled -> enabled -> disabled)", async () => {
    const { listingId } = ok(await asOwner("plugin.org.install", custom("com.example/toggle")))
    expect(ok(await asAdmin("plugin.org.set_enabled", { listingId, enabled: true })).enabled).toBe(true)
    expect(ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: true })).enabled).toBe(true)
    expect(ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: false })).enabled).toBe(false)
    expectError(await asOwner("plugin.org.set_enabled", { listingId: `porg_${"2".repeat(32)}`, enabled: true }), 404, "not_found", "listing_not_found")
  })

  it("uninstall is a soft delete: off the list, kept as a record, refused again, and the name installable anew", async () => {
    const { listingId } = ok(await asOwner("plugin.org.install", custom("com.example/gone")))
    ok(await asOwner("plugin.org.set_enabled", { listingId, enabled: true }))
    const removed = ok(await asAdmin("plugin.org.uninstall", { listingId }))
    expect(removed).toMatchObject({ listingId, enabled: false, deletedAt: expect.any(String) })
    const listed = ok(await asOwner("plugin.org.list", { limit: 100 })).listings.map((l: any) => l.listingId)
    expect(listed).not.toContain(listingId)
    const withDeleted = ok(await asOwner("plugin.org.list", { limit: 100, includeDeleted: true })).listings.find((l: any) => l.listingId === listingId)
    expect(withDeleted).toMatchObject({ deletedAt: removed.deletedAt })
    expectError(await asOwner("plugin.org.uninstall", { listingId }), 404, "not_found", "listing_not_found")
    expectError(await asOwner("plugin.org.set_enabled", { listingId, enabled: true }), 404, "not_found", "listing_not_found")
    const again = ok(await asOwner("plugin.org.install", custom("com.example/gone")))
    expect(again).toMatchObject({ listingId, enabled: false, deletedAt: null })
  })

  it("lists in pages with filters", async () => {
    const all = ok(await asOwner("plugin.org.list", { limit: 100 })).listings
    const enabled = ok(await asOwner("plugin.org.list", { enabled: true, limit: 100 })).listings
    expect(enabled.every((l: any) => l.enabled)).toBe(true)
    const tools = ok(await asOwner("plugin.org.list", { pluginType: "content_tool" })).listings
    expect(tools.map((l: any) => l.name)).toEqual(["com.example/once"])
    const first = ok(await asOwner("plugin.org.list", { limit: 2 }))
    const second = ok(await asOwner("plugin.org.list", { limit: 2, cursor: first.nextCursor }))
    expect([...first.listings, ...second.listings].map((l: any) => l.listingId)).toEqual(all.slice(0, 4).map((l: any) => l.listingId))
    expect(all.every((l: any) => l.workspace === null || typeof l.workspace.enabled === "boolean")).toBe(true)
  })
})

describe("over MCP (an Owner's CLI login)", () => {
  it("install, install_bulk, set_enabled, list and uninstall", async () => {
    const installed = await overMcp(ownerMcp, "plugin.org.install", custom("com.mcp/server"))
    expect(installed).toMatchObject({ refused: false, body: { name: "com.mcp/server", enabled: false } })
    const { listingId } = installed.body
    const bulk = await overMcp(ownerMcp, "plugin.org.install_bulk", { items: [custom("com.mcp/bulk"), custom("com.mcp/server")] })
    expect(bulk.body.results.map((r: any) => r.ok)).toEqual([true, false])
    expect((await overMcp(ownerMcp, "plugin.org.set_enabled", { listingId, enabled: true })).body.enabled).toBe(true)
    const listed = await overMcp(ownerMcp, "plugin.org.list", { limit: 100 })
    expect(listed.body.listings.map((l: any) => l.name)).toEqual(expect.arrayContaining(["com.mcp/server", "com.mcp/bulk"]))
    expect((await overMcp(ownerMcp, "plugin.org.uninstall", { listingId })).body.deletedAt).toEqual(expect.any(String))
    const again = await overMcp(ownerMcp, "plugin.org.uninstall", { listingId })
    expect(again.refused).toBe(true)
    expect(again.body.error).toMatchObject({ code: "not_found", reason: "listing_not_found" })
  })

  it("marks uninstall destructive", async () => {
    const { tools } = await ownerMcp.listTools()
    const byName = new Map(tools.map((t) => [t.name, t]))
    expect(byName.get("plugin.org.uninstall")?.annotations?.destructiveHint).toBe(true)
    expect(byName.get("plugin.org.list")?.annotations?.readOnlyHint).toBe(true)
  })
})

describe("roles (spec 5 rule 12)", () => {
  const capabilities: ReadonlyArray<[string, Record<string, unknown>]> = [
    ["plugin.org.install", custom("com.refused/server")],
    ["plugin.org.install_bulk", { items: [custom("com.refused/bulk")] }],
    ["plugin.org.set_enabled", { listingId: `porg_${"3".repeat(32)}`, enabled: true }],
    ["plugin.org.uninstall", { listingId: `porg_${"3".repeat(32)}` }],
    ["plugin.org.list", {}]
  ]
  it.each(capabilities)("%s: Member, Viewer and a workspace key get 403 forbidden", async (capability, input) => {
    expectError(await asMember(capability, input), 403, "forbidden", undefined)
    expectError(await asViewer(capability, input), 403, "forbidden", undefined)
    expectError(await call(node, capability, input), 403, "forbidden", undefined)
  })
})
