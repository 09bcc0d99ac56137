/**
 * Registries and the catalog end to end (spec 2.9, 4.5, 4.6, 6.3.3, 6.3.4): a node whose default
 * seed points at a local registry serving the real public seed (471 records), over REST with
 * people's sessions and over MCP with a CLI login. A full sync, an incremental one after five
 * upstream changes (only they are fetched; is_latest moves; a deletion is marked), a failure in the
 * middle of the pages and the resumption from the checkpoint, a one-server sync, search and
 * filters, READMEs rendered and sanitized, and the roles refused.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Exit, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { IssueCredential } from "../../actors/apikey/protocol.ts"
import { mintApiKey, newPublicId } from "../../src/ApiKeyToken.ts"
import { catalogServerId } from "../../src/marketplace/CatalogEntry.ts"
import { DEFAULT_SEED_REGISTRY_ID } from "../../src/marketplace/RegistrySettings.ts"
import { parseOutboundAllow } from "../../src/Outbound.ts"
import { addPerson, bootstrapPlace, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type RegistryServer, startRegistryServer } from "../support/registryServer.ts"
import { call, expectError, type Reply } from "./client.ts"

const SEED = DEFAULT_SEED_REGISTRY_ID

let node: TestNode
let upstream: RegistryServer
let asOwner: (capability: string, input: unknown) => Promise<Reply>
let asAdmin: (capability: string, input: unknown) => Promise<Reply>
let asMember: (capability: string, input: unknown) => Promise<Reply>
let asViewer: (capability: string, input: unknown) => Promise<Reply>
let ownerMcp: Client

const asPerson = async (person: Person) => {
  const cookie = (await signIn(node.baseUrl, person)).cookie
  const place = `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
  return (capability: string, input: unknown) => callWithCookie(node.baseUrl, cookie, `${place}/${capability.replaceAll(".", "/")}`, input)
}

/** A CLI login (`cli_session_v1`) of the person, as the device login issues one. */
const cliLogin = async (person: Person): Promise<string> => {
  const { orgId, workspaceId } = await bootstrapPlace(node)
  const token = mintApiKey()
  const keyId = newPublicId("aky")
  const issued = await Runtime.runPromiseExit(node.runtime)(node.host.send(ApiKeyActor, keyId, new IssueCredential({
    keyId, orgId, workspaceId, createdBy: person.userId, name: "CLI login (marketplace e2e)", lookupId: token.lookupId, secretHash: token.secretHash,
    scopes: { purpose: "cli_session_v1" }, expiresAt: null, customRole: null, machineId: null, supersedes: null
  }), { commandId: randomUUID(), at: new Date().toISOString(), actor: "system" }))
  expect(Exit.isSuccess(issued)).toBe(true)
  return token.raw
}

const overMcp = async (capability: string, args: Record<string, unknown>) => {
  const result = (await ownerMcp.callTool({ name: capability, arguments: args })) as CallToolResult
  return result.isError === true
    ? { refused: true, body: JSON.parse((result.content[0] as { text: string }).text) }
    : { refused: false, body: result.structuredContent as any }
}

const ok = (reply: Reply) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

const listRequests = () => upstream.requests.filter((r) => r.path === "/v0.1/servers")
const seedRow = async () => (ok(await asOwner("plugin.registry.list", {})).registries as Array<any>).find((r) => r.registryId === SEED)

beforeAll(async () => {
  upstream = await startRegistryServer()
  node = await startTestNode({
    outboundAllow: parseOutboundAllow("127.0.0.1"),
    marketplace: { defaultRegistryUrl: upstream.url, githubRawBaseUrl: upstream.rawBaseUrl, syncIntervalSeconds: 0, pageSize: 100, leaseMs: 60_000 }
  })
  const owner = await addPerson(node, "owner", { org: "owner" })
  asOwner = await asPerson(owner)
  asAdmin = await asPerson(await addPerson(node, "admin", { org: "member", workspace: "admin" }))
  asMember = await asPerson(await addPerson(node, "member", { org: "member", workspace: "member" }))
  asViewer = await asPerson(await addPerson(node, "viewer", { org: "member", workspace: "viewer" }))
  ownerMcp = new Client({ name: "svc-e2e-marketplace", version: "1.0.0" })
  await ownerMcp.connect(new StreamableHTTPClientTransport(new URL(`${node.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${await cliLogin(owner)}` } } }))
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
