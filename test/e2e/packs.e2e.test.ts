/**
 * Capability packs end to end (spec 2.9, 4.5, 7.3): the pack registry browsed as catalog entries,
 * a pack installed by its plugin id (idempotently; a bad id refused) over REST and MCP, and the
 * checkpoint's entitlement: a pack's capability refused with capability_not_installed on REST, MCP
 * and the agent until its organization installs and enables the pack, and again once uninstalled;
 * another organization unaffected.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrgActor } from "../../actors/org/actor.ts"
import { AddMember, CreateOrganization, CreateWorkspace, SetWorkspaceRole } from "../../actors/org/protocol.ts"
import { streamChat } from "../support/chat.ts"
import { addPerson, callWithCookie, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type Caller, ok, overMcp, signInPluginPeople } from "../support/plugins.ts"
import { call, expectError } from "./client.ts"

let node: TestNode
let asOwner: Caller
let ownerMcp: Client
let ownerCli: string
/** The Owner of a second organization, signed in. */
let asOtherOwner: Caller

/** A second organization made through the actors, as bootstrap makes the first, and its Owner signed in. */
const otherOrganization = async (): Promise<Caller> => {
  const suffix = randomUUID().slice(0, 8)
  const orgId = `org_other_${suffix}`
  const workspaceId = `wsp_other_${suffix}`
  const owner = await addPerson(node, "other-owner")
  const meta = () => ({ commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })
  await Runtime.runPromise(node.runtime)(
    Effect.gen(function* () {
      yield* node.host.send(OrgActor, orgId, new CreateOrganization({ orgId, slug: `other-${suffix}`, name: "Other" }), meta())
      yield* node.host.send(OrgActor, orgId, new AddMember({ orgId, userId: owner.userId, role: "owner" }), meta())
      yield* node.host.send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId, slug: "main", name: "Main" }), meta())
      yield* node.host.send(OrgActor, orgId, new SetWorkspaceRole({ orgId, workspaceId, userId: owner.userId, role: "admin" }), meta())
    }) as Effect.Effect<void, unknown, never>
  )
  const { cookie } = await signIn(node.baseUrl, owner)
  return (capability, input) => callWithCookie(node.baseUrl, cookie, `/v1/other-${suffix}/main/${capability.replaceAll(".", "/")}`, input)
}

beforeAll(async () => {
  node = await startTestNode()
  ;({ asOwner, ownerMcp, ownerCli } = await signInPluginPeople(node, "packs-e2e"))
  asOtherOwner = await otherOrganization()
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
      statusChangedAt: null,
      denylisted: null
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
    const listing = ok(await asOwner("plugin.org.install", { pluginId: "svc/media-video" }))
    ok(await asOwner("plugin.org.set_enabled", { listingId: listing.listingId, enabled: true }))
    expectError(await asOwner("plugin.workspace.set_enabled", { listingId: listing.listingId, enabled: true }), 409, "conflict", "capability_listing")
  })
})

describe("entitlement in the checkpoint (spec 7.3, 8)", () => {
  const notInstalled = (reply: { status: number; body: any }) => {
    expectError(reply, 403, "capability_not_installed", undefined)
    expect(reply.body.error.message).toContain("svc/media-image")
    expect(reply.body.error.message).toContain(`plugin.org.install {"pluginId":"svc/media-image"}`)
  }
  // agent.tools.list answers on POST agent/tools
  const agentTools = async (caller: Caller) => ok(await caller("agent.tools", {})).tools.map((t: { capability: string | null }) => t.capability)
  const agentTurn = () => streamChat(node, { content: `/tool image__list {}` })
  const agentCall = async () => (await agentTurn()).events.find((e) => e.type === "tool-call-end")
  const agentRefused = async () => {
    const turn = await agentTurn()
    expect(turn.events.find((e) => e.type === "tool-call-end")).toMatchObject({ status: "failed", errorReason: "capability_not_installed" })
    expect(turn.done.toolCalls).toEqual([expect.objectContaining({ toolName: "image.list", outcome: "denied" })])
    // the model read the refusal's body (the offline model repeats its first characters)
    expect(turn.done.reply).toContain('{\\"error\\":{\\"code\\":\\"capability_not_installed\\"')
  }

  it("a pack's capability is refused until installed and enabled, served then, refused again once uninstalled; another organization unaffected", async () => {
    notInstalled(await asOwner("image.list", {}))
    const mcpRefusal = await overMcp(ownerMcp, "image.list", {})
    expect(mcpRefusal).toMatchObject({ refused: true, body: { error: { code: "capability_not_installed" } } })
    expect(mcpRefusal.body.error.message).toContain("svc/media-image")
    // the CLI (a person's CLI login on the REST route) is told the same
    notInstalled(await call(node, "image.list", {}, { key: ownerCli }))
    expect(await agentTools(asOwner)).not.toContain("image.list")
    expect(await agentTools(asOwner)).toContain("document.list")
    // not offered to the turn at all: the offline model asking for it anyway is refused as REST and MCP refuse it
    await agentRefused()

    // installed but not enabled: still refused
    const listing = ok(await asOwner("plugin.org.install", { pluginId: "svc/media-image" }))
    notInstalled(await asOwner("image.list", {}))

    ok(await asOwner("plugin.org.set_enabled", { listingId: listing.listingId, enabled: true }))
    expect(ok(await asOwner("image.list", {}))).toEqual({ images: [] })
    expect(await overMcp(ownerMcp, "image.list", {})).toEqual({ refused: false, body: { images: [] } })
    expect(ok(await call(node, "image.list", {}, { key: ownerCli }))).toEqual({ images: [] })
    expect(await agentTools(asOwner)).toContain("image.list")
    expect(await agentCall()).toMatchObject({ status: "completed", output: { images: [] } })
    // the other organization installed nothing
    notInstalled(await asOtherOwner("image.list", {}))
    expect(await agentTools(asOtherOwner)).not.toContain("image.list")

    ok(await asOwner("plugin.org.uninstall", { listingId: listing.listingId }))
    notInstalled(await asOwner("image.list", {}))
    expect(await overMcp(ownerMcp, "image.list", {})).toMatchObject({ refused: true, body: { error: { code: "capability_not_installed" } } })
    expect(await agentTools(asOwner)).not.toContain("image.list")
    // not offered to the turn at all: the offline model asking for it anyway is refused as REST and MCP refuse it
    await agentRefused()
  })

  it("the other organization's install serves it there, not here", async () => {
    const listing = ok(await asOtherOwner("plugin.org.install", { pluginId: "svc/media-image" }))
    ok(await asOtherOwner("plugin.org.set_enabled", { listingId: listing.listingId, enabled: true }))
    expect(ok(await asOtherOwner("image.list", {}))).toEqual({ images: [] })
    notInstalled(await asOwner("image.list", {}))
  })

  it("uninstalling blocks new invocations only: a call already running finishes", async () => {
    const listing = ok(await asOwner("plugin.org.install", { pluginId: "svc/documents" }))
    ok(await asOwner("plugin.org.set_enabled", { listingId: listing.listingId, enabled: true }))
    // the offline model writes this back a few words at a time, 400 ms apart: the call runs about 3 s
    const words = Array.from({ length: 24 }, (_, i) => `word${i}`).join(" ")
    let answered = false
    const running = asOwner("documents.generate", { prompt: `/slow 400\n${words}`, title: "written while uninstalled" }).finally(() => (answered = true))
    await new Promise((resolve) => setTimeout(resolve, 300))
    ok(await asOwner("plugin.org.uninstall", { listingId: listing.listingId }))
    expect((await asOwner("documents.generate", { prompt: "too late" })).body.error.code).toBe("capability_not_installed")
    // all this while the first call was still running
    expect(answered).toBe(false)
    const written = ok(await running)
    expect(written).toMatchObject({ title: "written while uninstalled" })
    expect(written.content).toContain("word23")
  })
})
