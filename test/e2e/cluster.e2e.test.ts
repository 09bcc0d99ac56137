/**
 * `cluster.get` on a node of the embedded log: the one node owns and is ready on every partition,
 * each partition's lag is its end offset less its checkpoint, the end offsets and the sampled
 * throughput follow the writes; only an Owner may ask, on the API and over MCP.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import manifest from "../../package.json" with { type: "json" }
import type { ClusterView } from "../../src/platform/Wire.ts"
import { connectMcp } from "../support/mcp.ts"
import { addPerson, cliLogin } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { asPerson, type Caller, ok, overMcp } from "../support/plugins.ts"
import { call, eventually, expectError } from "./client.ts"

let node: TestNode
let asOwner: Caller
let asMember: Caller
let ownerMcp: Client

beforeAll(async () => {
  node = await startTestNode({ clusterSampleMs: 200 })
  const owner = await addPerson(node, "owner", { org: "owner" })
  asOwner = await asPerson(node, owner)
  asMember = await asPerson(node, await addPerson(node, "admin", { org: "member", workspace: "admin" }))
  ownerMcp = await connectMcp(node.baseUrl, await cliLogin(node, owner), "cluster-e2e")
})

afterAll(async () => {
  await ownerMcp?.close()
  await node?.stop()
})

const cluster = async (): Promise<ClusterView> => ok(await asOwner("cluster.get", {}))
const written = (view: ClusterView) => view.partitions.reduce((n, p) => n + p.endOffset, 0)

describe("cluster.get", () => {
  it("shows the embedded log's one node owning and ready on every partition, with its version", async () => {
    const view = await cluster()
    const all = [0, 1, 2, 3]
    expect(view.nodes).toEqual([{ nodeId: node.config.nodeId, self: true, version: manifest.version, draining: false, partitions: all, ready: all }])
    expect(view.partitions.map((p) => p.partition)).toEqual(all)
    for (const p of view.partitions) {
      expect(p.projected).toBeLessThanOrEqual(p.endOffset)
      expect(p.lag).toBe(p.endOffset - p.projected)
    }
  })

  it("grows the end offsets with writes, and samples the throughput they make", async () => {
    const before = await cluster()
    for (let i = 0; i < 10; i++) expect((await call(node, "system.ping", {})).status).toBe(200)
    const after = await cluster()
    expect(written(after)).toBeGreaterThanOrEqual(written(before) + 10)
    // each ping's audit record is an event: some sample after the writes counts them
    const sampled = await eventually(cluster, (v) => v.throughput.some((s) => Date.parse(s.at) > Date.now() - 1_000 && s.eventsPerSecond > 0), 5_000)
    expect(sampled.throughput.length).toBeGreaterThanOrEqual(2)
    for (const s of sampled.throughput) expect(s).toEqual({ at: expect.any(String), eventsPerSecond: expect.any(Number), lag: expect.any(Number) })
    // the samples come oldest first
    expect(sampled.throughput.map((s) => s.at)).toEqual([...sampled.throughput.map((s) => s.at)].sort())
  })

  it("refuses a workspace key and a workspace Admin with 403 forbidden", async () => {
    expectError(await call(node, "cluster.get", {}), 403, "forbidden", undefined)
    expectError(await asMember("cluster.get", {}), 403, "forbidden", undefined)
  })

  it("is a read-only tool over MCP for the Owner, and not listed for a workspace key", async () => {
    const { tools } = await ownerMcp.listTools()
    expect(tools.find((t) => t.name === "cluster.get")?.annotations?.readOnlyHint).toBe(true)
    const called = await overMcp(ownerMcp, "cluster.get", {})
    expect(called.refused).toBe(false)
    expect(called.body.nodes.map((n: { nodeId: string }) => n.nodeId)).toEqual([node.config.nodeId])
    const keyMcp = await connectMcp(node.baseUrl, node.bootstrap.workspaceKey, "cluster-e2e-key")
    try {
      expect((await keyMcp.listTools()).tools.map((t) => t.name)).not.toContain("cluster.get")
    } finally {
      await keyMcp.close()
    }
  })
})
