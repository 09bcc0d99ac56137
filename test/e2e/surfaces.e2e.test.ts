/**
 * One capability, three surfaces, one checkpoint: `system.ping` called over REST, over MCP (the SDK's
 * own client over Streamable HTTP) and by the agent as a tool (a chat turn on the built-in offline
 * model), all with the workspace key, answers the same and leaves the same audit record on each, but
 * for its id, time, duration and surface (`api`, `mcp`, `agent`).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { auditRows, comparableAudit } from "../support/audit.ts"
import { streamChat } from "../support/chat.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call } from "./client.ts"

let node: TestNode
let workspaceClient: Client

const connect = async (key: string) => {
  const client = new Client({ name: "svc-e2e", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${node.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } })
  )
  return client
}

beforeAll(async () => {
  // the default operator tiers are the offline model: the agent's tool call is its `/tool` directive
  node = await startTestNode()
  workspaceClient = await connect(node.bootstrap.workspaceKey)
})

afterAll(async () => {
  await workspaceClient?.close()
  await node?.stop()
})

describe("one checkpoint on every surface", () => {
  it("system.ping over REST, MCP and as an agent tool leaves the same audit record, but for id, time, duration and surface", async () => {
    const before = new Set((await auditRows(node, "system.ping")).map((r) => r.invocation_id))

    const overRest = await call(node, "system.ping", {})
    expect(overRest).toEqual({ status: 200, body: { pong: true } })

    const overMcp = (await workspaceClient.callTool({ name: "system.ping", arguments: {} })) as CallToolResult
    expect(overMcp.isError).toBeFalsy()
    expect(overMcp.structuredContent).toEqual({ pong: true })

    const turn = await streamChat(node, { content: "/tool system__ping {}" })
    expect(turn.status).toBe(200)
    const start = turn.events.find((e) => e.type === "tool-call-start")
    expect(start).toMatchObject({ capability: "system.ping", riskLevel: "low" })
    expect(turn.events.find((e) => e.type === "tool-call-end")).toMatchObject({ toolCallId: start.toolCallId, status: "completed", output: { pong: true } })
    expect(turn.done.toolCalls).toEqual([expect.objectContaining({ toolName: "system.ping", outcome: "completed" })])

    const rows = (await auditRows(node, "system.ping")).filter((r) => !before.has(r.invocation_id))
    expect(rows.map((r) => r.surface).sort()).toEqual(["agent", "api", "mcp"])
    const [overApi, viaMcp, asTool] = ["api", "mcp", "agent"].map((surface) => rows.find((r) => r.surface === surface)!)
    expect(comparableAudit(viaMcp)).toEqual(comparableAudit(overApi))
    expect(comparableAudit(asTool)).toEqual(comparableAudit(overApi))
    expect(comparableAudit(overApi)).toMatchObject({
      outcome: "succeeded",
      org_id: expect.any(String),
      workspace_id: expect.any(String),
      api_key_id: expect.any(String)
    })
    // three records, told apart by what the comparison leaves out
    expect(new Set(rows.map((r) => r.invocation_id)).size).toBe(3)
  })
})
