/**
 * Depth bounds (docs/decisions.md, "Depth bounds"): JSON nested past MAX_JSON_DEPTH is refused with
 * 400 `bad_request`, reason `json_too_deep`, before any recursive code sees it: a request body on
 * REST, MCP and A2A (the gateway scans its bytes), and a capability's input on a surface with no
 * body to scan (the agent's tool calls: the checkpoint walks it). Bodies are written as text: a
 * depth bomb is what an attacker sends, not what JSON.stringify makes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_JSON_DEPTH, textNestsTooDeep } from "../../src/platform/JsonDepth.ts"
import { addPerson, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { bearer, call, callAsAgent, expectError, send } from "./client.ts"

let node: TestNode
let cookie: string

beforeAll(async () => {
  node = await startTestNode()
  cookie = (await signIn(node.baseUrl, await addPerson(node, "owner", { org: "owner" }))).cookie
  const defined = await call(node, "schema.define_label", { label: "Ticket", properties: { title: { type: "string", required: true } } })
  expect(defined.status).toBe(200)
})

afterAll(async () => {
  await node?.stop()
})

/** JSON text of arrays nested `depth` deep around `inner`. */
const nested = (depth: number, inner = "1") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`

const place = () => `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`

const post = (path: string, body: string, headers: Record<string, string> = bearer(node.bootstrap.workspaceKey)) =>
  send(node, path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })

/** A condition tree `depth` groups deep. */
const groups = (depth: number): string => {
  const open = `{"kind":"group","id":"g","combinator":"and","children":[`
  return `${open.repeat(depth)}{"kind":"condition","id":"c","property":"trigger.x","operator":"exists"}${"]}".repeat(depth)}`
}

describe("the depth scan of JSON text", () => {
  it("counts arrays and objects outside strings, escapes included", () => {
    expect(textNestsTooDeep(Buffer.from(nested(MAX_JSON_DEPTH)))).toBe(false)
    expect(textNestsTooDeep(Buffer.from(nested(MAX_JSON_DEPTH + 1)))).toBe(true)
    // brackets inside strings, an escaped quote among them, are text
    const quoted = JSON.stringify({ text: `${"[{".repeat(100)}\\"${"[".repeat(100)}` })
    expect(textNestsTooDeep(Buffer.from(quoted))).toBe(false)
    expect(textNestsTooDeep(Buffer.from(`{"a":${nested(MAX_JSON_DEPTH)}}`))).toBe(true)
  })
})

describe("JSON nested past the bound", () => {
  it("a node property 10,000 deep over REST is 400 json_too_deep, not a 500", async () => {
    const reply = await post(`${place()}/node/create`, `{"label":"Ticket","properties":{"title":${nested(10_000, '"x"')}}}`)
    expectError(reply, 400, "bad_request", "json_too_deep")
  })

  it("the same over MCP is refused 400 before the transport parses it", async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"node.create","arguments":{"label":"Ticket","properties":{"title":${nested(10_000, '"x"')}}}}}`
    const response = await fetch(`${node.baseUrl}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...bearer(node.bootstrap.workspaceKey) },
      body
    })
    expect(response.status).toBe(400)
    const answer: any = await response.json()
    expect(answer).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600, data: { code: "bad_request", reason: "json_too_deep" } } })
  })

  it("an A2A request 10,000 deep is an invalid request carrying 400 json_too_deep", async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"data","data":${nested(10_000)}}]}}}`
    const response = await fetch(`${node.baseUrl}/a2a`, { method: "POST", headers: { "content-type": "application/json", ...bearer(node.bootstrap.workspaceKey) }, body })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ id: null, error: { code: -32600, data: { status: 400, code: "bad_request", reason: "json_too_deep" } } })
  })

  it("an automation whose condition step holds a tree 3,000 deep, or whose trigger payload nests 2,600 deep, is 400", async () => {
    const withTree = `{"name":"deep","trigger":{"type":"api"},"steps":[{"name":"check","stepType":"condition","config":{"conditions":${groups(3_000)}}}]}`
    expectError(await post(`${place()}/automation/create`, withTree, { cookie }), 400, "bad_request", "json_too_deep")
    const automation = await post(`${place()}/automation/create`, JSON.stringify({ name: "api", trigger: { type: "api" }, steps: [], enabled: true }), { cookie })
    expect(automation.status).toBe(200)
    const payload = `{"automationId":"${automation.body.automationId}","payload":${nested(2_600)}}`
    expectError(await post(`${place()}/automation/trigger`, payload, { cookie }), 400, "bad_request", "json_too_deep")
  })

  it("input that comes with no body (an agent's tool call) is walked by the checkpoint: one level past the bound is 400", async () => {
    let payload: unknown = 1
    for (let i = 0; i < MAX_JSON_DEPTH; i++) payload = [payload]
    const step = { name: "post", stepType: "webhook", config: { url: "https://example.test/hook", body: payload } }
    // the steps array, its step, the config and the body's own levels: past the bound at the body
    const reply = await callAsAgent(node, node.bootstrap.workspaceKey, "automation.create", { name: "deep", trigger: { type: "api" }, steps: [step] })
    expectError(reply, 400, "bad_request", "json_too_deep")
    const shallow = { ...step, config: { ...step.config, body: [[1]] } }
    expect((await callAsAgent(node, node.bootstrap.workspaceKey, "automation.create", { name: "shallow", trigger: { type: "api" }, steps: [shallow] })).status).toBe(200)
  })
})
