/**
 * Registries and the catalog end to end (spec 2.9, 4.5, 4.6, 6.3.3, 6.3.4): a node whose default
 * seed points at a local registry serving the real public seed (471 records), over REST with
 * people's sessions and over MCP with a CLI login. A full sync, an incremental one after five
 * upstream changes (only they are fetched; is_latest moves; a deletion is marked), a failure in the
 * middle of the pages and the resumption from the checkpoint, a one-server sync, search and
 * filters, READMEs rendered and sanitized, and the roles refused.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { actorKinds } from "../../bin/App.ts"
import { catalogServerId } from "../../src/marketplace/CatalogEntry.ts"
import { DEFAULT_SEED_REGISTRY_ID } from "../../src/marketplace/RegistrySettings.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { bootstrapPlace } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type Caller, localSeedMarketplace, ok, overMcp, signInPluginPeople } from "../support/plugins.ts"
import { databaseUrl } from "../support/env.ts"
import { connect, service } from "../../streams/Db.ts"
import { allPartitions, EventLog } from "../../streams/EventLog.ts"
import { readCheckpoints } from "../../streams/Projector.ts"
import { replay, tableDigest } from "../../streams/Replay.ts"
import { type RegistryServer, startRegistryServer } from "../support/registryServer.ts"
import { call, expectError } from "./client.ts"

const SEED = DEFAULT_SEED_REGISTRY_ID

let node: TestNode
let upstream: RegistryServer
let asOwner: Caller
let asAdmin: Caller
let asMember: Caller
let asViewer: Caller
let ownerMcp: Client

const listRequests = () => upstream.requests.filter((r) => r.path === "/v0.1/servers")
const seedRow = async () => (ok(await asOwner("plugin.registry.list", {})).registries as Array<any>).find((r) => r.registryId === SEED)

beforeAll(async () => {
  upstream = await startRegistryServer()
  node = await startTestNode({
    outboundAllow: parseOutboundAllow("127.0.0.1"),
    marketplace: localSeedMarketplace(upstream)
  })
  ;({ asOwner, asAdmin, asMember, asViewer, ownerMcp } = await signInPluginPeople(node, "svc-e2e-marketplace"))
}, 60_000)

afterAll(async () => {
  await ownerMcp?.close()
  await node?.stop()
  await upstream?.close()
})

describe("the default seed registry", () => {
  it("is listed for the organization, pointing at MCP_REGISTRY_URL, not synced yet", async () => {
    const seed = await seedRow()
    expect(seed).toMatchObject({ orgId: null, baseUrl: upstream.url, enabled: true, isDefaultSeed: true, lastSyncedAt: null, lastSync: null })
  })

  it("full sync: the 471 records of the seed fetched in pages of 100; 464 server versions kept, the 7 blank records skipped", async () => {
    const before = listRequests().length
    const sync = ok(await asOwner("plugin.registry.sync", { registryId: SEED, wait: true }))
    expect(sync).toMatchObject({ mode: "full", status: "succeeded", reason: null, counts: { pages: 5, fetched: 471, upserted: 464, skipped: 7, deleted: 0 } })
    const asked = listRequests().slice(before)
    expect(asked.map((r) => r.query.limit)).toEqual(["100", "100", "100", "100", "100"])
    expect(asked.every((r) => r.query.updated_since === undefined && r.query.include_deleted === "true")).toBe(true)
    expect(asked[0].query.cursor).toBeUndefined()
    const seed = await seedRow()
    expect(seed.lastSyncedAt).not.toBeNull()
    expect(seed.lastSyncedCursor).toBeNull()
    expect(seed.lastSync).toMatchObject({ status: "succeeded", counts: { fetched: 471, upserted: 464 } })
    expect(seed.lastSync.durationMs).toBeGreaterThanOrEqual(0)
    const [{ count }] = await node.db.sql`select count(*)::int as count from ${node.db.sql(node.db.schema)}.catalog_servers where registry_id = ${SEED}`
    expect(count).toBe(464)
    // the seed holds one name twice? no: 464 names, each its own latest
    const [{ latest }] = await node.db.sql`select count(*)::int as latest from ${node.db.sql(node.db.schema)}.catalog_latest where registry_id = ${SEED}`
    expect(latest).toBe(464)
  }, 60_000)
})

/** Every page of a browse, followed through its cursors. */
const browseAll = async (input: Record<string, unknown>) => {
  const servers: Array<any> = []
  let cursor: string | undefined
  do {
    const page = ok(await asOwner("plugin.catalog.browse", { ...input, limit: 200, ...(cursor === undefined ? {} : { cursor }) }))
    servers.push(...page.servers)
    cursor = page.nextCursor ?? undefined
  } while (cursor !== undefined)
  return servers
}

const idOf = (name: string, version: string) => catalogServerId(SEED, name, version)

describe("browse and get over the synced seed", () => {
  it("pages through every latest version, 464 in all, in name order", async () => {
    const all = await browseAll({})
    expect(all.length).toBe(464)
    expect(all.map((s) => s.name)).toEqual([...all.map((s) => s.name)].sort())
    expect(all.every((s) => s.isLatest && s.status === "active" && s.registryId === SEED)).toBe(true)
  })

  it("searches name, title and description by word prefixes", async () => {
    const magic = ok(await asOwner("plugin.catalog.browse", { search: "magic" })).servers.map((s: any) => s.name)
    expect(magic).toContain("io.github.21st-dev/magic-mcp")
    const two = ok(await asOwner("plugin.catalog.browse", { search: "frontend magic", limit: 200 })).servers.map((s: any) => s.name)
    expect(two).toEqual(["io.github.21st-dev/magic-mcp"])
    expect(ok(await asOwner("plugin.catalog.browse", { search: "zzzyqx" })).servers).toEqual([])
  })

  it("filters by transport and auth kind, as derived from packages, remotes and isSecret flags", async () => {
    const sse = await browseAll({ transport: "sse" })
    const withSseRemotes = upstream.entries().filter((e) => e.server.name && (e.server.remotes ?? []).some((r: any) => r.type === "sse")).map((e) => e.server.name)
    expect(sse.map((s) => s.name).sort()).toEqual([...new Set(withSseRemotes)].sort())
    const secret = await browseAll({ authKind: "secret" })
    const flagged = upstream.entries().filter((e) => e.server.name && (e.server.packages ?? []).some((p: any) => p.environmentVariables.some((v: any) => v.isSecret)))
    expect(secret.map((s) => s.name).sort()).toEqual(flagged.map((e) => e.server.name).sort())
    expect((await browseAll({ authKind: "none" })).length).toBe(464 - secret.length)
    expect(ok(await asOwner("plugin.catalog.browse", { category: "nothing-here" })).servers).toEqual([])
  })

  it("answers capability packs from the pack registry, none of the registries' servers (test/e2e/packs.e2e.test.ts)", async () => {
    const { servers } = ok(await asOwner("plugin.catalog.browse", { pluginType: "capability" }))
    expect(servers.length).toBeGreaterThan(0)
    expect(servers.every((s: { registryId: string }) => s.registryId === "svc")).toBe(true)
  })

  it("gets one server with its packages, versions and (none found) README", async () => {
    const got = ok(await asOwner("plugin.catalog.get", { serverId: idOf("io.github.21st-dev/magic-mcp", "0.0.1-seed") }))
    expect(got).toMatchObject({
      name: "io.github.21st-dev/magic-mcp",
      version: "0.0.1-seed",
      isLatest: true,
      transportTypes: ["stdio"],
      repository: { url: "https://github.com/21st-dev/magic-mcp", source: "github" },
      versions: [{ version: "0.0.1-seed", isLatest: true, status: "active" }],
      readmeHtml: null
    })
    expect(got.packages[0]).toMatchObject({ registryType: "npm", identifier: "@21st-dev/magic" })
    expect(got.readmeFetchedAt).not.toBeNull()
    expectError(await asOwner("plugin.catalog.get", { serverId: `mcat_${"0".repeat(32)}` }), 404, "not_found", "catalog_server_not_found")
  })
})

describe("incremental sync after five upstream changes", () => {
  it("fetches only what changed since last_synced_at; is_latest moves; the deletion is marked", async () => {
    const seed = await seedRow()
    const secretless = upstream.entries().find((e) => (e.server.packages ?? []).some((p: any) => p.environmentVariables.some((v: any) => !v.isSecret)) && !(e.server.packages ?? []).some((p: any) => p.environmentVariables.some((v: any) => v.isSecret)))!
    const names = upstream.entries().map((e) => e.server.name).filter((n) => n && n !== secretless.server.name && n !== "io.github.21st-dev/magic-mcp")
    const [renamed, redescribed, deleted] = [names[10], names[20], names[30]]
    upstream.addVersion("io.github.21st-dev/magic-mcp", "0.0.2", { description: "It's like v0 but in your editor (new version)." })
    upstream.markDeleted(deleted)
    const variable = secretless.server.packages.flatMap((p: any) => p.environmentVariables).find((v: any) => !v.isSecret).name
    upstream.setSecret(secretless.server.name, variable)
    upstream.change(renamed, { title: "A Renamed Server" })
    upstream.change(redescribed, { description: "Now with quasar telemetry." })

    const before = listRequests().length
    const sync = ok(await asOwner("plugin.registry.sync", { registryId: SEED, wait: true }))
    // the new version and the old one (its isLatest moved) of the same name, and one of each other
    expect(sync).toMatchObject({ mode: "incremental", status: "succeeded", counts: { pages: 1, fetched: 6, upserted: 6, skipped: 0, deleted: 1 } })
    const asked = listRequests().slice(before)
    expect(asked.length).toBe(1)
    expect(asked[0].query.updated_since).toBe(seed.lastSyncedAt)

    const magicOld = ok(await asOwner("plugin.catalog.get", { serverId: idOf("io.github.21st-dev/magic-mcp", "0.0.1-seed") }))
    const magicNew = ok(await asOwner("plugin.catalog.get", { serverId: idOf("io.github.21st-dev/magic-mcp", "0.0.2") }))
    expect([magicOld.isLatest, magicNew.isLatest]).toEqual([false, true])
    expect(magicNew.versions.map((v: any) => [v.version, v.isLatest])).toEqual([["0.0.2", true], ["0.0.1-seed", false]])
    const latestRows = await node.db.sql`select version from ${node.db.sql(node.db.schema)}.catalog_latest where registry_id = ${SEED} and name = 'io.github.21st-dev/magic-mcp'`
    expect(latestRows.map((r) => r.version)).toEqual(["0.0.2"])

    const all = await browseAll({})
    expect(all.length).toBe(463)
    expect(all.find((s) => s.name === "io.github.21st-dev/magic-mcp").version).toBe("0.0.2")
    expect(all.some((s) => s.name === deleted)).toBe(false)
    expect((await browseAll({ status: "deleted" })).map((s) => s.name)).toEqual([deleted])
    expect(all.find((s) => s.name === secretless.server.name).authKind).toBe("secret")
    expect(all.find((s) => s.name === renamed).title).toBe("A Renamed Server")
    expect(ok(await asOwner("plugin.catalog.browse", { search: "quasar" })).servers.map((s: any) => s.name)).toEqual([redescribed])
  })

  it("syncs one server on demand from its latest version", async () => {
    upstream.change("io.github.21st-dev/magic-mcp", { title: "Magic" })
    const sync = ok(await asOwner("plugin.registry.sync", { registryId: SEED, serverName: "io.github.21st-dev/magic-mcp", wait: true }))
    expect(sync).toMatchObject({ mode: "server", status: "succeeded", counts: { fetched: 1, upserted: 1 } })
    expect(ok(await asOwner("plugin.catalog.get", { serverId: idOf("io.github.21st-dev/magic-mcp", "0.0.2") })).title).toBe("Magic")
    const missing = ok(await asOwner("plugin.registry.sync", { registryId: SEED, serverName: "io.example/none", wait: true }))
    expect(missing).toMatchObject({ mode: "server", status: "failed" })
    expect(missing.reason).toMatch(/^http_404/)
  })
})

describe("categories", () => {
  it("come from the publisher's extension of server.json and filter browse", async () => {
    const name = "io.github.21st-dev/magic-mcp"
    upstream.change(name, { _meta: { "io.modelcontextprotocol.registry/publisher-provided": { categories: ["design", "frontend"] } } })
    ok(await asOwner("plugin.registry.sync", { registryId: SEED, serverName: name, wait: true }))
    const design = ok(await asOwner("plugin.catalog.browse", { category: "design" })).servers
    expect(design.map((s: any) => [s.name, s.categories])).toEqual([[name, ["design", "frontend"]]])
    expect(ok(await asOwner("plugin.catalog.browse", { category: "frontend", search: "magic" })).servers.map((s: any) => s.name)).toEqual([name])
  })
})

describe("a failure in the middle of the pages", () => {
  it("fails the sync with its reason, keeps the checkpoint, and the next run resumes from it", async () => {
    upstream.failListRequest(3, 503)
    const before = listRequests().length
    const failed = ok(await asOwner("plugin.registry.sync", { registryId: SEED, full: true, wait: true }))
    expect(failed).toMatchObject({ mode: "full", status: "failed", counts: { pages: 2, fetched: 200 } })
    expect(failed.reason).toMatch(/^http_503/)
    const seed = await seedRow()
    expect(seed.lastSync).toMatchObject({ status: "failed", reason: failed.reason })
    expect(seed.lastSyncedCursor).not.toBeNull()
    const [row] = await node.db.sql`select status, reason from ${node.db.sql(node.db.schema)}.registry_syncs where sync_id = ${failed.syncId}`
    expect(row).toEqual({ status: "failed", reason: failed.reason })

    const resumed = ok(await asOwner("plugin.registry.sync", { registryId: SEED, wait: true }))
    expect(resumed).toMatchObject({ mode: "full", status: "succeeded", counts: { pages: 3 } })
    const asked = listRequests().slice(before)
    // pages 1 and 2, the failed third, then the third again from the checkpoint
    expect(asked.map((r) => r.status)).toEqual([200, 200, 503, 200, 200, 200])
    expect(asked[3].query.cursor).toBe(seed.lastSyncedCursor)
    expect(asked[3].query.cursor).toBe(asked[2].query.cursor)
    const after = await seedRow()
    expect(after.lastSyncedCursor).toBeNull()
    expect(Date.parse(after.lastSyncedAt)).toBeGreaterThan(Date.parse(seed.lastSyncedAt))
  })
})

describe("READMEs", () => {
  const magic = () => idOf("io.github.21st-dev/magic-mcp", "0.0.2")
  const raw = () => `${upstream.rawBaseUrl}/21st-dev/magic-mcp/HEAD/`
  /** Forgets the cached README's age, as 24 hours passing would. */
  const age = (hours: number) =>
    node.db.sql`update ${node.db.sql(node.db.schema)}.catalog_readmes set readme_fetched_at = now() - make_interval(hours => ${hours}) where server_id = ${magic()}`

  // markdown -> what the sanitized HTML must hold, and must not
  const table: ReadonlyArray<{ readonly name: string; readonly markdown: string; readonly has: ReadonlyArray<string>; readonly lacks: ReadonlyArray<string> }> = [
    { name: "headings and code", markdown: "# Magic\n\n```js\nconst a = 1\n```", has: ["<h1>Magic</h1>", '<code class="language-js">'], lacks: [] },
    { name: "a script", markdown: "hi <script>alert(1)</script>", has: ["hi"], lacks: ["<script", "alert(1)"] },
    { name: "a style", markdown: "<style>body{display:none}</style>text", has: ["text"], lacks: ["<style", "display:none"] },
    { name: "an iframe", markdown: '<iframe src="https://evil.example"></iframe>', has: [], lacks: ["<iframe", "evil.example"] },
    { name: "an event handler", markdown: '<img src="https://cdn.example/a.png" onerror="alert(1)">', has: ['src="https://cdn.example/a.png"'], lacks: ["onerror", "alert"] },
    { name: "a javascript: link", markdown: "[click](javascript:alert(1))", has: ["click"], lacks: ["javascript:"] },
    { name: "a raw javascript: link", markdown: '<a href="JaVaScRiPt:alert(1)">x</a>', has: [">x</a>"], lacks: ["alert(1)", "avascript"] },
    { name: "a data: image", markdown: "![x](data:image/svg+xml;base64,PHN2Zz4=)", has: [], lacks: ["data:"] },
    { name: "a relative image", markdown: "![logo](docs/logo.png)", has: [`src="RAW/docs/logo.png"`], lacks: ['src="docs/'] },
    { name: "a root-relative image", markdown: "![logo](/img/a.png)", has: ["/img/a.png"], lacks: ['src="/img/a.png"'] },
    { name: "an absolute image", markdown: "![x](https://img.example/x.png)", has: ['src="https://img.example/x.png"'], lacks: [] },
    { name: "a relative link", markdown: "[guide](docs/GUIDE.md)", has: ['href="https://github.com/21st-dev/magic-mcp/blob/HEAD/docs/GUIDE.md"', 'rel="noopener noreferrer nofollow"'], lacks: [] },
    { name: "an inline style attribute", markdown: '<p style="color:red">red</p>', has: ["<p>red</p>"], lacks: ["style="] },
    { name: "a form", markdown: '<form action="https://evil.example"><input name="x"></form>', has: [], lacks: ["<form", 'name="x"'] }
  ]

  it.each(table)("sanitizes $name", async ({ markdown, has, lacks }) => {
    upstream.setReadme("21st-dev/magic-mcp", markdown)
    await age(25)
    const { readmeHtml } = ok(await asOwner("plugin.catalog.get", { serverId: magic() }))
    for (const fragment of has) expect(readmeHtml).toContain(fragment.replace("RAW/", raw()))
    for (const fragment of lacks) expect(readmeHtml).not.toContain(fragment)
  })

  it("is cached with readme_fetched_at and read again only once 24 hours old", async () => {
    upstream.setReadme("21st-dev/magic-mcp", "first")
    await age(25)
    const first = ok(await asOwner("plugin.catalog.get", { serverId: magic() }))
    expect(first.readmeHtml).toBe("<p>first</p>\n")
    upstream.setReadme("21st-dev/magic-mcp", "second")
    const cached = ok(await asOwner("plugin.catalog.get", { serverId: magic() }))
    expect(cached).toMatchObject({ readmeHtml: "<p>first</p>\n", readmeFetchedAt: first.readmeFetchedAt })
    await age(23)
    expect(ok(await asOwner("plugin.catalog.get", { serverId: magic() })).readmeHtml).toBe("<p>first</p>\n")
    await age(24)
    expect(ok(await asOwner("plugin.catalog.get", { serverId: magic() })).readmeHtml).toBe("<p>second</p>\n")
  })

  it("is read from GitHub only: a repository elsewhere has none, and nothing is asked for it", async () => {
    const other = upstream.entries().find((e) => e.server.name && e.server.name !== "io.github.21st-dev/magic-mcp")!
    upstream.change(other.server.name, { repository: { url: "https://gitlab.com/example/server", source: "gitlab" } })
    ok(await asOwner("plugin.registry.sync", { registryId: SEED, serverName: other.server.name, wait: true }))
    const asked = upstream.requests.filter((r) => r.path.startsWith("/raw/")).length
    const got = ok(await asOwner("plugin.catalog.get", { serverId: idOf(other.server.name, other.server.version) }))
    expect(got.repository).toEqual({ url: "https://gitlab.com/example/server", source: "gitlab" })
    expect(got.readmeHtml).toBeNull()
    expect(upstream.requests.filter((r) => r.path.startsWith("/raw/")).length).toBe(asked)
  })
})

describe("organization registries", () => {
  let own: RegistryServer
  beforeAll(async () => {
    own = await startRegistryServer({ synthetic: { servers: 30, versions: 2 } })
  })
  afterAll(() => own?.close())

  it("adds one (listed beside the seed), syncs it, browses it, refuses a second at the same URL, removes it", async () => {
    const added = ok(await asOwner("plugin.registry.add", { name: "Team registry", baseUrl: `${own.url}/` }))
    expect(added).toMatchObject({ name: "Team registry", baseUrl: own.url, enabled: true, isDefaultSeed: false, lastSyncedAt: null })
    expect(added.registryId).toMatch(/^mreg_[0-9a-f]{32}$/)
    const { orgId } = await bootstrapPlace(node)
    expect(added.orgId).toBe(orgId)
    expect(ok(await asOwner("plugin.registry.list", {})).registries.map((r: any) => r.registryId)).toEqual([SEED, added.registryId])
    expectError(await asOwner("plugin.registry.add", { name: "again", baseUrl: own.url }), 409, "conflict", "registry_exists")
    expectError(await asOwner("plugin.registry.add", { name: "bad", baseUrl: "ftp://example.com" }), 400, "bad_request", "invalid_registry_url")

    const sync = ok(await asOwner("plugin.registry.sync", { registryId: added.registryId, wait: true }))
    expect(sync).toMatchObject({ mode: "full", status: "succeeded", counts: { fetched: 60, upserted: 60 } })
    const mine = await browseAll({ registryId: added.registryId })
    expect(mine.length).toBe(30)
    expect(mine.every((s) => s.version === "1.1.0" && s.isLatest)).toBe(true)
    expect(mine.filter((s) => s.authKind === "secret").length).toBe(10)
    expect((await browseAll({ transport: "streamable-http", registryId: added.registryId })).length).toBe(6)
    expect((await browseAll({})).length).toBe(463 + 30)

    const removed = ok(await asOwner("plugin.registry.remove", { registryId: added.registryId }))
    expect(removed).toEqual({ registryId: added.registryId, removed: true })
    expect((await browseAll({})).length).toBe(463)
    expectError(await asOwner("plugin.registry.remove", { registryId: added.registryId }), 404, "not_found", "registry_not_found")
    expectError(await asOwner("plugin.registry.sync", { registryId: added.registryId }), 404, "not_found", "registry_not_found")
    expectError(await asOwner("plugin.registry.remove", { registryId: SEED }), 409, "conflict", "default_seed_registry")
  })

  it("records a page too large for one event in parts, each under 256 KB", async () => {
    const large = await startRegistryServer({ synthetic: { servers: 120, versions: 1 } })
    try {
      for (const e of large.entries().slice(0, 100)) large.change(e.server.name, { description: `${e.server.description} ${"lorem ipsum ".repeat(400)}` })
      const added = ok(await asOwner("plugin.registry.add", { name: "Large", baseUrl: large.url }))
      const sync = ok(await asOwner("plugin.registry.sync", { registryId: added.registryId, wait: true }))
      // the first page of 100 (~530 KB of entries) in three parts, then the second page of 20
      expect(sync).toMatchObject({ status: "succeeded", counts: { pages: 4, fetched: 120, upserted: 120, skipped: 0 } })
      const sizes = await node.db.sql`select length(payload::text) as bytes from ${node.db.sql(`${node.config.dbSchema}_log`)}.log_events
        where key = ${`registry:${added.registryId}`} and type = 'registry.page_synced' order by "offset"`
      expect(sizes.length).toBe(4)
      expect(sizes.every((r) => r.bytes < 300 * 1024)).toBe(true)
      expect((await browseAll({ registryId: added.registryId })).length).toBe(120)
      ok(await asOwner("plugin.registry.remove", { registryId: added.registryId }))
    } finally {
      await large.close()
    }
  })

  it("keeps a registry added disabled out of the catalog and refuses to sync it", async () => {
    const added = ok(await asOwner("plugin.registry.add", { name: "Off", baseUrl: own.url, enabled: false }))
    expect(added.enabled).toBe(false)
    expectError(await asOwner("plugin.registry.sync", { registryId: added.registryId }), 409, "conflict", "registry_disabled")
    expect(ok(await asOwner("plugin.catalog.browse", { registryId: added.registryId }))).toEqual({ servers: [], nextCursor: null })
    ok(await asOwner("plugin.registry.remove", { registryId: added.registryId }))
  })

  it("records an address the outbound guard refuses as the sync's reason", async () => {
    const added = ok(await asOwner("plugin.registry.add", { name: "Private", baseUrl: "http://10.1.2.3:8080" }))
    const sync = ok(await asOwner("plugin.registry.sync", { registryId: added.registryId, wait: true }))
    expect(sync).toMatchObject({ status: "failed", reason: "outbound_refused: private", counts: { pages: 0 } })
    ok(await asOwner("plugin.registry.remove", { registryId: added.registryId }))
  })

  it("answers a sync while another holds the registry with 409 sync_in_progress", async () => {
    const added = ok(await asOwner("plugin.registry.add", { name: "Slow", baseUrl: own.url }))
    own.setDelay(1_000)
    try {
      const running = ok(await asOwner("plugin.registry.sync", { registryId: added.registryId }))
      expect(running).toMatchObject({ status: "running", mode: "full", counts: null })
      expectError(await asAdmin("plugin.registry.sync", { registryId: added.registryId }), 409, "conflict", "sync_in_progress")
      const syncing = (ok(await asOwner("plugin.registry.list", {})).registries as Array<any>).find((r) => r.registryId === added.registryId).syncing
      expect(syncing).toMatchObject({ syncId: running.syncId, mode: "full" })
    } finally {
      own.setDelay(0)
    }
    ok(await asOwner("plugin.registry.remove", { registryId: added.registryId }))
  })
})

describe("surfaces and roles", () => {
  it("offers every capability over MCP with the same answers", async () => {
    const listed = await overMcp(ownerMcp, "plugin.registry.list", {})
    expect(listed).toEqual({ refused: false, body: ok(await asOwner("plugin.registry.list", {})) })
    const browsed = await overMcp(ownerMcp, "plugin.catalog.browse", { search: "magic" })
    expect(browsed.body.servers.map((s: any) => s.name)).toContain("io.github.21st-dev/magic-mcp")
    const got = await overMcp(ownerMcp, "plugin.catalog.get", { serverId: idOf("io.github.21st-dev/magic-mcp", "0.0.2") })
    expect(got.body).toMatchObject({ name: "io.github.21st-dev/magic-mcp", isLatest: true })
    const synced = await overMcp(ownerMcp, "plugin.registry.sync", { registryId: SEED, wait: true })
    expect(synced.body).toMatchObject({ status: "succeeded", mode: "incremental" })
    const added = await overMcp(ownerMcp, "plugin.registry.add", { name: "Over MCP", baseUrl: "https://registry.example.com" })
    expect(added.body).toMatchObject({ name: "Over MCP", baseUrl: "https://registry.example.com" })
    expect(await overMcp(ownerMcp, "plugin.registry.remove", { registryId: added.body.registryId })).toEqual({ refused: false, body: { registryId: added.body.registryId, removed: true } })
    const refused = await overMcp(ownerMcp, "plugin.registry.remove", { registryId: SEED })
    expect(refused.refused).toBe(true)
    expect(refused.body.error).toMatchObject({ code: "conflict", reason: "default_seed_registry" })
  })

  it("lets a workspace Admin manage registries and browse", async () => {
    expect(ok(await asAdmin("plugin.registry.list", {})).registries[0].registryId).toBe(SEED)
    expect(ok(await asAdmin("plugin.catalog.browse", { limit: 1 })).servers.length).toBe(1)
  })

  const inputs: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["plugin.registry.add", { name: "x", baseUrl: "https://registry.example.org" }],
    ["plugin.registry.remove", { registryId: SEED }],
    ["plugin.registry.list", {}],
    ["plugin.registry.sync", { registryId: SEED }],
    ["plugin.catalog.browse", {}],
    ["plugin.catalog.get", { serverId: `mcat_${"0".repeat(32)}` }]
  ]

  it.each(inputs)("refuses %s to Members, Viewers and keys with 403 forbidden", async (capability, input) => {
    expectError(await asMember(capability, input), 403, "forbidden", undefined)
    expectError(await asViewer(capability, input), 403, "forbidden", undefined)
    expectError(await call(node, capability, input), 403, "forbidden", undefined)
  })
})

describe("plugin/catalog.sync on a schedule", () => {
  let scheduled: TestNode
  let registry: RegistryServer
  afterAll(async () => {
    await scheduled?.stop()
    await registry?.close()
  })

  it("syncs the seed in full once, then incrementally every interval, on the node owning the registry", async () => {
    registry = await startRegistryServer()
    scheduled = await startTestNode({
      outboundAllow: parseOutboundAllow("127.0.0.1"),
      marketplace: { defaultRegistryUrl: registry.url, githubRawBaseUrl: registry.rawBaseUrl, syncIntervalSeconds: 1, pageSize: 100, leaseMs: 60_000 }
    })
    const syncs = () => scheduled.db.sql`select mode, status, counts from ${scheduled.db.sql(scheduled.db.schema)}.registry_syncs where registry_id = ${SEED} order by ended_at`
    const until = async (done: (rows: Array<any>) => boolean) => {
      const deadline = Date.now() + 20_000
      for (;;) {
        const rows = [...(await syncs())]
        if (done(rows)) return rows
        if (Date.now() > deadline) throw new Error(`no such syncs: ${JSON.stringify(rows)}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    const [first] = await until((rows) => rows.length >= 1)
    expect(first).toMatchObject({ mode: "full", status: "succeeded", counts: { fetched: 471, upserted: 464 } })
    registry.change("io.github.21st-dev/magic-mcp", { title: "Scheduled" })
    const rows = await until((rows) => rows.some((r) => r.counts.fetched === 1))
    expect(rows.slice(1).every((r) => r.mode === "incremental" && r.status === "succeeded")).toBe(true)
    const [server] = await scheduled.db.sql`select title from ${scheduled.db.sql(scheduled.db.schema)}.catalog_servers where name = 'io.github.21st-dev/magic-mcp'`
    expect(server.title).toBe("Scheduled")

    // the catalog is a projection of the registry's events: a replay to the positions the read
    // models held rebuilds it, table by table. The schedule goes on syncing every second, so the
    // live tables are read again until the projection stood still while they were read.
    const live = scheduled.db
    const partitions = allPartitions(scheduled.log.partitions)
    const marketplace = ["catalog_latest", "catalog_servers", "registries", "registry_syncs"]
    const digests = (db: typeof live) => Effect.forEach(marketplace, (table) => Effect.map(tableDigest(db, table), (d) => [table, d] as const))
    const target = service(connect({ url: databaseUrl, schema: `${live.schema}_replay` }), `${live.schema}_replay`)
    try {
      const [held, expected, rebuilt] = await Effect.runPromise(
        Effect.gen(function* () {
          for (;;) {
            const held = yield* readCheckpoints(live, partitions)
            const expected = yield* digests(live)
            const still = yield* readCheckpoints(live, partitions)
            if (![...held].every(([p, next]) => still.get(p) === next)) continue
            yield* replay(target, actorKinds, { _tag: "positions", through: new Map([...held].map(([p, next]) => [p, next - 1])) })
            return [held, expected, yield* digests(target)] as const
          }
        }).pipe(Effect.provide(Layer.succeed(EventLog, scheduled.log)), Effect.timeout("30 seconds"))
      )
      expect([...held.values()].some((next) => next > 0)).toBe(true)
      expect(rebuilt).toEqual(expected)
    } finally {
      await target.sql.end()
    }
  }, 60_000)
})
