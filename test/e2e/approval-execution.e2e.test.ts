/**
 * What the approval resolve answers (spec 2.4's `execution`), over REST and MCP: `succeeded`, or
 * `failed` with its reason, when the approved call ended within the resolve's wait; `queued` when
 * the node had no room to run it within the wait, `dispatched` when it was still running; `denied`
 * for a denial. A queued or dispatched call still runs, and its run records how it ended.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { postJson, streamChat, waitForEvent } from "../support/chat.ts"
import { connectMcp } from "../support/mcp.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, createNote, eventually } from "./client.ts"

/** How long the resolve waits on the node with one running place: long enough for any call to end, short for a test. */
const WAIT_MS = 3_000

let onePlace: TestNode
let neverWaits: TestNode
const clients: Array<Client> = []

beforeAll(async () => {
  const base = loadConfig({})
  onePlace = await startTestNode({ admission: { ...base.admission, maxTurnsRunning: 1 }, assistant: { ...base.assistant, approvalAnswerWaitMs: WAIT_MS } })
  neverWaits = await startTestNode({ assistant: { ...base.assistant, approvalAnswerWaitMs: 0 } })
})
afterAll(async () => {
  for (const client of clients) await client.close()
  await onePlace?.stop()
  await neverWaits?.stop()
})

type Resolve = (node: TestNode, approvalId: string, decision: "approved" | "denied") => Promise<any>

/** The resolve over REST: its 200 body. */
const overRest: Resolve = async (node, approvalId, decision) => {
  const resolved = await postJson(node, "agent/approvals/resolve", { approvalId, decision })
  expect(resolved.status).toBe(200)
  return resolved.body
}

const mcpClients = new Map<TestNode, Client>()
/** The resolve as an MCP tool call, with the same key: its structured result. */
const overMcp: Resolve = async (node, approvalId, decision) => {
  let client = mcpClients.get(node)
  if (client === undefined) {
    client = await connectMcp(node.baseUrl, node.bootstrap.workspaceKey, "approvals-e2e")
    clients.push(client)
    mcpClients.set(node, client)
  }
  const result = (await client.callTool({ name: "agent.approvals.resolve", arguments: { approvalId, decision } })) as CallToolResult
  expect(result.isError).toBeFalsy()
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent)
  return result.structuredContent
}

/** A node deletion the agent parked for approval, and the node it would delete. */
const parkDelete = async (node: TestNode) => {
  const nodeId = await createNote(node)
  const turn = await streamChat(node, { content: `/tool node__delete {"nodeId":"${nodeId}"}` })
  const card = turn.events.find((e) => e.type === "approval-required")
  expect(card).toBeDefined()
  return { nodeId, approvalId: card.approvalId as string }
}

const runOf = async (node: TestNode, runId: string) => (await call(node, "run.get", { runId })).body
const exists = async (node: TestNode, nodeId: string) => (await call(node, "node.get", { nodeId })).status === 200

describe.each([
  ["REST", overRest],
  ["MCP", overMcp]
] as const)("the approval resolve over %s", (_surface, resolve) => {
  it("answers succeeded when the approved call ran and ended within the wait", async () => {
    const { nodeId, approvalId } = await parkDelete(onePlace)
    const { execution } = await resolve(onePlace, approvalId, "approved")
    expect(execution).toEqual({ status: "succeeded", runId: expect.stringMatching(/^tse_/) })
    expect(await exists(onePlace, nodeId)).toBe(false)
  })

  it("answers failed with the reason when the approved call ran and failed, and its run records it", async () => {
    const { nodeId, approvalId } = await parkDelete(onePlace)
    expect((await call(onePlace, "node.delete", { nodeId })).status).toBe(200)
    const { execution } = await resolve(onePlace, approvalId, "approved")
    expect(execution).toEqual({ status: "failed", runId: expect.stringMatching(/^tse_/), reason: "node_not_found" })
    expect(await runOf(onePlace, execution.runId)).toMatchObject({ kind: "approval", status: "failed", execution })
  })

  it("answers denied for a denial, and nothing runs", async () => {
    const { nodeId, approvalId } = await parkDelete(onePlace)
    const answered = await resolve(onePlace, approvalId, "denied")
    expect(answered.execution).toEqual({ status: "denied" })
    expect(answered.receipt).toMatchObject({ decision: "denied", capability: "node.delete" })
    expect(await exists(onePlace, nodeId)).toBe(true)
  })

  it("answers queued when every running place of the node stays taken through the wait; the call runs once one frees", async () => {
    const { nodeId, approvalId } = await parkDelete(onePlace)
    // a turn waiting on its question holds the node's one running place
    const events: Array<any> = []
    const holding = streamChat(onePlace, { content: "/ask Hold on? | yes | no" }, { onEvent: (e) => events.push(e) })
    const question = await waitForEvent(events, (e) => e.type === "question")

    const { execution } = await resolve(onePlace, approvalId, "approved")
    expect(execution).toEqual({ status: "queued", runId: expect.stringMatching(/^tse_/) })
    expect(await exists(onePlace, nodeId)).toBe(true)
    expect((await runOf(onePlace, execution.runId)).status).toBe("running")

    await postJson(onePlace, "assistant/question/answer", { questionId: question.id, answer: "yes" })
    await holding
    const ran = await eventually(() => runOf(onePlace, execution.runId), (run) => run.status !== "running")
    expect(ran).toMatchObject({ kind: "approval", status: "finished", execution: { status: "succeeded", runId: execution.runId } })
    expect(await exists(onePlace, nodeId)).toBe(false)
  })

  it("answers dispatched when the call is running as the wait ends (a node that never waits); its run ends with the call", async () => {
    const { nodeId, approvalId } = await parkDelete(neverWaits)
    const { execution } = await resolve(neverWaits, approvalId, "approved")
    expect(execution).toEqual({ status: "dispatched", runId: expect.stringMatching(/^tse_/) })
    const ran = await eventually(() => runOf(neverWaits, execution.runId), (run) => run.status !== "running")
    expect(ran).toMatchObject({ kind: "approval", status: "finished", execution: { status: "succeeded", runId: execution.runId }, output: { nodeId, deleted: true } })
    expect(await exists(neverWaits, nodeId)).toBe(false)
  })
})
