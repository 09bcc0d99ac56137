/**
 * Capability packs end to end (spec 2.9, 4.5, 7.3): the pack registry browsed as catalog entries,
 * a pack installed by its plugin id (idempotently; a bad id refused) over REST and MCP.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type Caller, ok, overMcp, signInPluginPeople } from "../support/plugins.ts"
import { expectError } from "./client.ts"

let node: TestNode
let asOwner: Caller
let ownerMcp: Client

beforeAll(async () => {
  node = await startTestNode()
  ;({ asOwner, ownerMcp } = await signInPluginPeople(node, "packs-e2e"))
}, 60_000)

afterAll(async () => {
  await ownerMcp?.close()
  await node?.stop()
})

describe("plugin.catalog.browse with pluginType capability (spec 4.5)", () => {
  it("serves the packs as catalog entries: auth kind none, no transports, the pack's category", async () => {
    const { servers, nextCursor } = ok(await asOwner("plugin.catalog.browse", { pluginType: "capability" }))
    expect(nextCursor).toBeNull()
    expect(servers.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining(["svc/media-image", "svc/media-svg", "svc/media-video"]))
    expect(servers.find((s: { name: string }) => s.name === "svc/media-svg")).toEqual({
      serverId: "svc/media-svg",
      registryId: "svc",
      name: "svc/media-svg",
      version: "1.0.0",
      isLatest: true,
      title: "SVG graphics",
      description: expect.any(String),
      repository: null,
      websiteUrl: null,
      icons: [],
      transportTypes: [],
      authKind: "none",
      categories: ["media"],
      status: "active",
      publishedAt: null,
      upstreamUpdatedAt: null,
      statusChangedAt: null
    })
  })

  it("filters packs as servers are: by search and category; over MCP the same", async () => {
    const { servers } = ok(await asOwner("plugin.catalog.browse", { pluginType: "capability", search: "svg" }))
    expect(servers.map((s: { name: string }) => s.name)).toEqual(["svc/media-svg"])
    const none = ok(await asOwner("plugin.catalog.browse", { pluginType: "capability", category: "nothing-here" }))
    expect(none.servers).toEqual([])
    const overMcpAnswer = await overMcp(ownerMcp, "plugin.catalog.browse", { pluginType: "capability", category: "media" })
    expect(overMcpAnswer.refused).toBe(false)
    expect(overMcpAnswer.body.servers.map((s: { name: string }) => s.name)).toEqual(["svc/media-image", "svc/media-svg", "svc/media-video"])
  })
})

describe("plugin.org.install with pluginId (spec 4.5)", () => {
  it("creates a disabled listing with source svc, the plugin id as its name, title and description from the manifest; again is idempotent", async () => {
    const listing = ok(await asOwner("plugin.org.install", { pluginId: "svc/media-svg" }))
    expect(listing).toMatchObject({
      pluginType: "capability",
      catalogServerId: null,
      source: "svc",
      name: "svc/media-svg",
      title: "SVG graphics",
      endpointUrl: null,
      transport: null,
      authKind: "none",
      enabled: false,
      deletedAt: null
    })
    ok(await asOwner("plugin.org.set_enabled", { listingId: listing.listingId, enabled: true }))
    const again = ok(await asOwner("plugin.org.install", { pluginId: "svc/media-svg" }))
    expect(again).toEqual({ ...listing, enabled: true, updatedAt: again.updatedAt })
    const overMcpAgain = await overMcp(ownerMcp, "plugin.org.install", { pluginId: "svc/media-svg" })
    expect(overMcpAgain).toMatchObject({ refused: false, body: { listingId: listing.listingId, enabled: true } })
  })

  it("refuses an id the pack registry does not hold, and one that is no pack id", async () => {
    const unknown = await asOwner("plugin.org.install", { pluginId: "svc/no-such-pack" })
    expectError(unknown, 400, "bad_request", "unknown_plugin")
    expect(unknown.body.error.message).toContain("svc/no-such-pack")
    expectError(await asOwner("plugin.org.install", { pluginId: "com.example/files" }), 400, "bad_request", "invalid_input")
    const overMcpUnknown = await overMcp(ownerMcp, "plugin.org.install", { pluginId: "svc/no-such-pack" })
    expect(overMcpUnknown).toMatchObject({ refused: true, body: { error: { reason: "unknown_plugin" } } })
  })

  it("a pack listing is not enabled per workspace: 409 capability_listing", async () => {
    const listing = ok(await asOwner("plugin.org.install", { pluginId: "svc/media-image" }))
    ok(await asOwner("plugin.org.set_enabled", { listingId: listing.listingId, enabled: true }))
    expectError(await asOwner("plugin.workspace.set_enabled", { listingId: listing.listingId, enabled: true }), 409, "conflict", "capability_listing")
  })
})
