/**
 * Reads as of a moment (issue 28, docs/audit.md "Reads as of a moment"): node.get, automation.get,
 * conversation.get, api_key.get and A2A's tasks/get (0.3) and GetTask (1.0, metadata `asOf`) answer the entity
 * as it stood at an RFC 3339 time or a log position after later changes, in the live read's
 * shape; a moment before the entity existed, or in the future, is refused 400 with its reason.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { call, capability, type Reply } from "../support/http.ts"
import { addPerson, callWithCookie, signIn } from "../support/people.ts"
import { asPerson } from "../support/plugins.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

let node: TestNode
let asKey: ReturnType<typeof capability>

beforeAll(async () => {
  node = await startTestNode({ assistant: { ...loadConfig({}).assistant, chatRateLimitPerMinute: 100_000 } })
  asKey = capability(node.baseUrl, node.bootstrap.workspaceKey, node.bootstrap.orgSlug, node.bootstrap.workspaceSlug)
})
afterAll(async () => {
  await node?.stop()
})

const ok = (reply: Reply) => {
  expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(300)
  return reply.body
}

/** The time now, a few milliseconds clear of the commands before and after it. */
const momentBetween = async () => {
  await new Promise((resolve) => setTimeout(resolve, 15))
  const at = new Date().toISOString()
  await new Promise((resolve) => setTimeout(resolve, 15))
  return at
}

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString()

const expectRefused = (reply: Reply, reason: string) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(400)
  expect(reply.body.error).toMatchObject({ code: "bad_request", reason })
  expect(reply.body.error.message).toMatch(/\S/)
}

/** `partition:offset` one past the end of the partition a position names. */
const pastTheEnd = (position: string) => {
  const [partition, offset] = position.split(",")[0]!.split(":").map(Number)
  return `${partition}:${offset! + 1_000_000}`
}

describe("node.get asOf", () => {
  it("answers the node as it stood at a time or a log position, after an update and a delete; 400 before it existed or in the future", async () => {
    ok(await asKey("schema.define_label", { label: "Ticket", properties: { title: { type: "string" } } }))
    const before = await momentBetween()
    const created = await asKey("node.create", { label: "Ticket", properties: { title: "first" } })
    const original = ok(created)
    const afterCreate = await momentBetween()
    const updated = ok(await asKey("node.update", { nodeId: original.nodeId, properties: { title: "second" } }))
    expect(updated.version).toBe(2)
    const afterUpdate = await momentBetween()
    ok(await asKey("node.delete", { nodeId: original.nodeId }))

    expect(ok(await asKey("node.get", { nodeId: original.nodeId, asOf: afterCreate }))).toEqual(original)
    expect(ok(await asKey("node.get", { nodeId: original.nodeId, asOf: created.position }))).toEqual(original)
    expect(ok(await asKey("node.get", { nodeId: original.nodeId, asOf: afterUpdate }))).toEqual(updated)
    // deleted by now: as the live read, not found
    expect((await asKey("node.get", { nodeId: original.nodeId })).status).toBe(404)
    expect((await asKey("node.get", { nodeId: original.nodeId, asOf: new Date().toISOString() })).status).toBe(404)

    expectRefused(await asKey("node.get", { nodeId: original.nodeId, asOf: before }), "as_of_before_creation")
    expectRefused(await asKey("node.get", { nodeId: original.nodeId, asOf: inAnHour() }), "as_of_in_future")
    expectRefused(await asKey("node.get", { nodeId: original.nodeId, asOf: pastTheEnd(created.position!) }), "as_of_in_future")
    expect((await asKey("node.get", { nodeId: original.nodeId, asOf: "yesterday" })).status).toBe(400)
    // a node that never was is not found, at any moment
    expect((await asKey("node.get", { nodeId: `nod_${randomUUID().replaceAll("-", "")}`, asOf: afterCreate })).status).toBe(404)
  })
})

describe("automation.get asOf", () => {
  it("answers the automation and its runs as they stood, after a run and a rename; 400 before it existed or in the future", async () => {
    // an automation a key creates waits for a person to enable it: the Owner makes this one
    const asOwner = await asPerson(node, await addPerson(node, "owner", { org: "owner" }))
    const before = await momentBetween()
    const original = ok(await asOwner("automation.create", { name: "nightly", trigger: { type: "api" }, steps: [], enabled: true }))
    const afterCreate = await momentBetween()
    expect(ok(await asOwner("automation.trigger", { automationId: original.automationId })).status).toBe("succeeded")
    const afterRun = await momentBetween()
    ok(await asOwner("automation.update", { automationId: original.automationId, name: "hourly" }))
    const now = ok(await asOwner("automation.get", { automationId: original.automationId }))
    expect(now.name).toBe("hourly")
    expect(now.recentRuns).toHaveLength(1)
    expect(ok(await asOwner("automation.get", { automationId: original.automationId, asOf: afterRun }))).toEqual({ ...now, name: "nightly", enabled: true, enabledBy: original.enabledBy, updatedAt: original.updatedAt, version: original.version, revision: original.revision })

    const then = ok(await asOwner("automation.get", { automationId: original.automationId, asOf: afterCreate }))
    const { webhookSecret: _secret, ...fields } = original
    expect(then).toMatchObject({ ...fields, name: "nightly", recentRuns: [] })
    expect(Object.keys(then).sort()).toEqual(Object.keys(now).sort())
    const latest = ok(await asOwner("automation.get", { automationId: original.automationId, asOf: new Date().toISOString() }))
    expect(latest).toEqual(now)

    expectRefused(await asOwner("automation.get", { automationId: original.automationId, asOf: before }), "as_of_before_creation")
    expectRefused(await asOwner("automation.get", { automationId: original.automationId, asOf: inAnHour() }), "as_of_in_future")
    // audited as any read: each as-of read answered is an entry of the audit log (a refused input, as any, is not)
    const audited = async () => ok(await asOwner("audit.list", { capability: "automation.get" })).entries as Array<{ outcome: string }>
    await expect.poll(async () => (await audited()).length, { timeout: 10_000 }).toBe(4)
    expect((await audited()).map((e) => e.outcome)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"])
  })
})

describe("api_key.get asOf", () => {
  it("answers the key as the list shows it, and active as it stood before its revocation; 404 for a key the caller does not manage; 400 before it existed or in the future", async () => {
    const { cookie } = await signIn(node.baseUrl, await addPerson(node, "keykeeper", { org: "owner" }))
    const place = `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
    const asOwner = (name: string, input: unknown) => call(node.baseUrl, undefined, `${place}/${name.replaceAll(".", "/")}`, input, { cookie })
    const before = await momentBetween()
    const created = await asOwner("create_api_key", { name: "audited" })
    const { publicId: keyPublicId } = ok(created)
    const listed = ok(await asOwner("api_key.list", {})).keys.find((k: any) => k.publicId === keyPublicId)
    expect(listed.status).toBe("active")
    expect(ok(await asOwner("api_key.get", { keyPublicId }))).toEqual(listed)
    const beforeRevoke = await momentBetween()
    expect((await callWithCookie(node.baseUrl, cookie, `${place}/api-keys/revoke`, { keyPublicId }, "DELETE")).status).toBe(200)
    const now = ok(await asOwner("api_key.get", { keyPublicId }))
    expect(now).toEqual({ ...listed, status: "revoked" })

    expect(ok(await asOwner("api_key.get", { keyPublicId, asOf: beforeRevoke }))).toEqual(listed)
    expect(ok(await asOwner("api_key.get", { keyPublicId, asOf: created.position }))).toEqual(listed)
    expect(ok(await asOwner("api_key.get", { keyPublicId, asOf: new Date().toISOString() }))).toEqual(now)
    expectRefused(await asOwner("api_key.get", { keyPublicId, asOf: before }), "as_of_before_creation")
    expectRefused(await asOwner("api_key.get", { keyPublicId, asOf: inAnHour() }), "as_of_in_future")
    expectRefused(await asOwner("api_key.get", { keyPublicId, asOf: pastTheEnd(created.position!) }), "as_of_in_future")

    // as their lists: an Owner sees the organization's keys, a workspace Admin only the workspace's, at any moment
    const orgKey = ok(await asOwner("create_api_key", { name: "organization-wide", level: "organization" })).publicId
    expect(ok(await asOwner("api_key.get", { keyPublicId: orgKey })).workspaceId).toBeNull()
    const asAdmin = await asPerson(node, await addPerson(node, "keyadmin", { org: "member", workspace: "admin" }))
    expect(ok(await asAdmin("api_key.get", { keyPublicId, asOf: beforeRevoke }))).toEqual(listed)
    const unknown = `aky_${"0".repeat(32)}`
    for (const [caller, id] of [[asAdmin, orgKey], [asOwner, unknown]] as const) {
      for (const asOf of [undefined, beforeRevoke]) {
        const reply = await caller("api_key.get", { keyPublicId: id, asOf })
        expect([reply.status, reply.body.error.code, reply.body.error.reason]).toEqual([404, "not_found", "api_key_not_found"])
      }
    }
    // a key manages no keys
    expect((await asKey("api_key.get", { keyPublicId })).status).toBe(403)
  })
})

// ---------------------------------------------------------------------------------------------
// A2A: tasks and their conversations

const a2a = async (method: string, params: unknown, version?: "1.0") => {
  const response = await fetch(`${node.baseUrl}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${node.bootstrap.workspaceKey}`, ...(version === undefined ? {} : { "a2a-version": version }) },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
  })
  expect(response.status).toBe(200)
  return (await response.json()) as { result?: any; error?: { code: number; message: string; data?: any } }
}

const send = async (text: string, contextId?: string) => {
  const { result } = await a2a("message/send", { message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text }], ...(contextId === undefined ? {} : { contextId }) } })
  expect(result.status.state).toBe("completed")
  return result as { id: string; contextId: string; status: { state: string; timestamp: string }; history: Array<unknown> }
}

/** -32602 with the platform's reason: 0.3's data object, or 1.0's ErrorInfo metadata. */
const invalidParams = (answer: { error?: { code: number; data?: any } }, reason: string, version?: "1.0") => {
  const data = version === "1.0" ? [expect.objectContaining({ reason: "INVALID_PARAMS", metadata: { reason } })] : { reason }
  expect(answer.error, JSON.stringify(answer)).toMatchObject({ code: -32602, data })
}

describe("A2A tasks/get and GetTask with metadata asOf", () => {
  it("answer the task as it stood before it completed; -32602 before it existed or in the future", async () => {
    const before = await momentBetween()
    const task = await send("hello then")
    // a millisecond before it completed, the turn had not answered yet
    const beforeDone = new Date(Date.parse(task.status.timestamp) - 1).toISOString()
    const { result: then } = await a2a("tasks/get", { id: task.id, metadata: { asOf: beforeDone } })
    expect(then.id).toBe(task.id)
    expect(then.status.state).not.toBe("completed")
    expect(then.history).toHaveLength(1)
    const { result: done } = await a2a("tasks/get", { id: task.id, metadata: { asOf: task.status.timestamp } })
    expect(done).toEqual((await a2a("tasks/get", { id: task.id })).result)

    invalidParams(await a2a("tasks/get", { id: task.id, metadata: { asOf: before } }), "as_of_before_creation")
    invalidParams(await a2a("tasks/get", { id: task.id, metadata: { asOf: inAnHour() } }), "as_of_in_future")
    invalidParams(await a2a("tasks/get", { id: task.id, metadata: { asOf: 42 } }), "invalid_as_of")

    const { result: v1 } = await a2a("GetTask", { id: task.id, metadata: { asOf: beforeDone } }, "1.0")
    expect(v1.id).toBe(task.id)
    expect(v1.status.state).not.toBe("TASK_STATE_COMPLETED")
    expect(v1.history).toHaveLength(1)
    expect((await a2a("GetTask", { id: task.id, metadata: { asOf: task.status.timestamp } }, "1.0")).result.status.state).toBe("TASK_STATE_COMPLETED")
    invalidParams(await a2a("GetTask", { id: task.id, metadata: { asOf: before } }, "1.0"), "as_of_before_creation", "1.0")
    invalidParams(await a2a("GetTask", { id: task.id, metadata: { asOf: inAnHour() } }, "1.0"), "as_of_in_future", "1.0")
  })
})

describe("conversation.get asOf", () => {
  it("answers the thread as it stood before a later turn; 400 before it existed or in the future", async () => {
    const before = await momentBetween()
    const first = await send("first question")
    const between = await momentBetween()
    await send("second question", first.contextId)
    const { conversations } = ok(await asKey("conversation.list", {}))
    const conversationId = conversations.find((c: any) => c.title === "first question")?.publicId
    expect(conversationId).toBeDefined()
    const now = ok(await asKey("conversation.get", { conversationId }))
    expect(now.messages).toHaveLength(4)
    expect(now.runs).toHaveLength(2)

    const then = ok(await asKey("conversation.get", { conversationId, asOf: between }))
    expect(then.messages).toEqual(now.messages.slice(0, 2))
    expect(then.runs).toEqual(now.runs.slice(0, 1))
    expect(Object.keys(then).sort()).toEqual(Object.keys(now).sort())
    expect(ok(await asKey("conversation.get", { conversationId, asOf: new Date().toISOString() }))).toEqual(now)

    expectRefused(await asKey("conversation.get", { conversationId, asOf: before }), "as_of_before_creation")
    expectRefused(await asKey("conversation.get", { conversationId, asOf: inAnHour() }), "as_of_in_future")
  })
})
