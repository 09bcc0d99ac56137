/**
 * Workspace agents end to end (spec 2.8's `agentSlug`, 5.3): agent.create/list/get/update/delete
 * over REST (an Owner's session) and MCP (an Owner's CLI login), the built-in `assistant` listed
 * first and never changed, what a workspace key may do (read, not write) and what an organization
 * key may not (403 `forbidden`); a turn of an agent (through `askAgent`, as automations run one, and
 * through A2A's `message.metadata.agentSlug`) against a local OpenAI-compatible server that records
 * each request: the agent's instructions in the system prompt, its tier's model, only its tools;
 * and the A2A extended card listing the agents as skills.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Exit, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { authenticate } from "../../src/identity/Auth.ts"
import { askAgent } from "../../src/assistant/Agents.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import { auditRows } from "../support/audit.ts"
import { type OpenAiServer, type RecordedRequest, startOpenAiServer, systemOf } from "../support/openaiServer.ts"
import { connectMcp } from "../support/mcp.ts"
import { addPerson, cliLogin, callWithCookie, type Person, signIn } from "../support/people.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, callAsAgent, expectError, type Reply } from "./client.ts"

let server: OpenAiServer
let node: TestNode
let owner: Person
let ownerCookie: string
/** MCP clients: the Owner's CLI login, the bootstrap workspace key (a Member), the organization key. */
let ownerMcp: Client
let memberMcp: Client
let orgMcp: Client

const run = <A, E>(effect: Effect.Effect<A, E, any>) => Runtime.runPromiseExit(node.runtime)(effect as Effect.Effect<A, E, never>)

const connect = (key: string) => connectMcp(node.baseUrl, key, "svc-e2e-agents")

/** A capability over REST with the Owner's session. */
const asOwner = (capability: string, input: unknown): Promise<Reply> =>
  callWithCookie(node.baseUrl, ownerCookie, `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`, input)

const callTool = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult

/** The JSON error body of a refused tool call. */
const toolError = (result: CallToolResult) => {
  expect(result.isError).toBe(true)
  return JSON.parse((result.content[0] as { text: string }).text)
}

const toolsOf = (request: RecordedRequest): Array<string> => (request.body.tools ?? []).map((t: any) => t.function.name).sort()

beforeAll(async () => {
  server = await startOpenAiServer()
  node = await startTestNode({
    assistant: {
      ...loadConfig({}).assistant,
      openaiBaseUrl: server.url,
      openaiApiKey: "sk-test",
      operatorTiers: { fast: "openai:gpt-4o-mini", balanced: "openai:gpt-5-test", precise: "openai:o3" },
      chatRateLimitPerMinute: 100_000
    },
    // the model server listens on this machine
    outboundAllow: parseOutboundAllow("127.0.0.1")
  })
  owner = await addPerson(node, "owner", { org: "owner" })
  ownerCookie = (await signIn(node.baseUrl, owner)).cookie
  ownerMcp = await connect(await cliLogin(node, owner))
  memberMcp = await connect(node.bootstrap.workspaceKey)
  orgMcp = await connect(node.bootstrap.orgKey)
})

afterAll(async () => {
  await Promise.all([ownerMcp?.close(), memberMcp?.close(), orgMcp?.close()])
  await node?.stop()
  await server?.close()
})

const triage = {
  slug: "triage",
  name: "Triage",
  description: "Sorts new tickets by urgency.",
  instructions: "Label every ticket low or high.",
  tier: "fast",
  tools: ["node.list", "system.ping"]
}

describe("over REST", () => {
  it("an Owner creates, reads, changes and deletes an agent; the built-in assistant comes first and stays", async () => {
    const created = await asOwner("agent.create", triage)
    expect(created).toEqual({
      status: 200,
      body: { ...triage, skills: [], builtIn: false, version: 1, createdAt: expect.any(String), updatedAt: created.body.createdAt }
    })

    const listed = await call(node, "agent.list", {})
    expect(listed.status).toBe(200)
    expect(listed.body.agents.map((a: any) => a.slug)).toEqual(["assistant", "triage"])
    // the default agent reflects the workspace assistant: every tool the caller's role allows, the default tier
    const [assistant] = listed.body.agents
    expect(assistant).toMatchObject({ slug: "assistant", name: "Workspace assistant", instructions: "", tier: null, builtIn: true, version: 0, createdAt: null })
    expect(assistant.tools).toEqual(expect.arrayContaining(["system.ping", "node.create", "node.list", "agent.list"]))
    // a Member's tools hold no agent writes (those are an Admin's)
    expect(assistant.tools).not.toContain("agent.create")
    expect((await asOwner("agent.get", { slug: "assistant" })).body.tools).toContain("agent.create")

    expect(await call(node, "agent.get", { slug: "triage" })).toEqual({ status: 200, body: created.body })

    const updated = await asOwner("agent.update", { slug: "triage", instructions: "Label every ticket low, medium or high.", tier: null })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ ...triage, instructions: "Label every ticket low, medium or high.", tier: null, version: 2 })
    // nothing changed: nothing recorded
    expect((await asOwner("agent.update", { slug: "triage", name: "Triage" })).body.version).toBe(2)

    expect(await asOwner("agent.delete", { slug: "triage" })).toEqual({ status: 200, body: { slug: "triage", deleted: true } })
    expectError(await call(node, "agent.get", { slug: "triage" }), 404, "not_found", "agent_not_found")
    expect((await call(node, "agent.list", {})).body.agents.map((a: any) => a.slug)).toEqual(["assistant"])
    // the slug is free again
    expect((await asOwner("agent.create", triage)).body.version).toBe(1)
    await asOwner("agent.delete", { slug: "triage" })
  })

  it("refuses a taken slug, the built-in assistant's, an unknown tool, an unknown tier and a malformed slug", async () => {
    expect((await asOwner("agent.create", { ...triage, slug: "dupe" })).status).toBe(200)
    expectError(await asOwner("agent.create", { ...triage, slug: "dupe" }), 409, "conflict", "agent_exists")
    expectError(await asOwner("agent.create", { ...triage, slug: "assistant" }), 409, "conflict", "agent_builtin")
    expectError(await asOwner("agent.update", { slug: "assistant", name: "Mine" }), 409, "conflict", "agent_builtin")
    expectError(await asOwner("agent.delete", { slug: "assistant" }), 409, "conflict", "agent_builtin")
    // create_api_key is no capability of the agent surface
    expectError(await asOwner("agent.create", { ...triage, slug: "keys", tools: ["create_api_key"] }), 400, "bad_request", "unknown_tool")
    expectError(await asOwner("agent.create", { ...triage, slug: "tiered", tier: "nope" }), 404, "not_found", "model_tier_not_found")
    expectError(await asOwner("agent.create", { ...triage, slug: "Not_A_Slug" }), 400, "bad_request", "invalid_input")
    expectError(await asOwner("agent.update", { slug: "ghost", name: "Ghost" }), 404, "not_found", "agent_not_found")
    await asOwner("agent.delete", { slug: "dupe" })
  })

  it("a workspace key (a Member) reads agents but does not write them; an organization key does neither: 403 forbidden", async () => {
    await asOwner("agent.create", { ...triage, slug: "readable" })
    expect((await call(node, "agent.get", { slug: "readable" })).status).toBe(200)
    expectError(await call(node, "agent.create", { ...triage, slug: "mine" }), 403, "forbidden", undefined)
    expectError(await call(node, "agent.delete", { slug: "readable" }), 403, "forbidden", undefined)

    const orgKey = { key: node.bootstrap.orgKey }
    for (const [capability, input] of [["agent.list", {}], ["agent.get", { slug: "readable" }], ["agent.get", { slug: "assistant" }], ["agent.create", triage]] as const) {
      expectError(await call(node, capability, input, orgKey), 403, "forbidden", undefined)
    }
    await asOwner("agent.delete", { slug: "readable" })
  })
})

describe("over MCP", () => {
  it("the Owner's CLI login creates, updates and deletes an agent, which REST reads; a Member's key is refused as on REST", async () => {
    const created = await callTool(ownerMcp, "agent.create", { ...triage, slug: "mcp-made" })
    expect(created.isError).toBeFalsy()
    expect(created.structuredContent).toMatchObject({ slug: "mcp-made", name: "Triage", tools: ["node.list", "system.ping"], version: 1 })
    expect((await call(node, "agent.get", { slug: "mcp-made" })).body).toEqual(created.structuredContent)

    const updated = await callTool(ownerMcp, "agent.update", { slug: "mcp-made", tools: ["system.ping"] })
    expect(updated.structuredContent).toMatchObject({ tools: ["system.ping"], version: 2 })
    const listed = await callTool(memberMcp, "agent.list", {})
    expect((listed.structuredContent as any).agents.map((a: any) => a.slug)).toEqual(["assistant", "mcp-made"])

    const refused = await call(node, "agent.delete", { slug: "mcp-made" })
    expect(toolError(await callTool(memberMcp, "agent.delete", { slug: "mcp-made" }))).toEqual(refused.body)

    expect((await callTool(ownerMcp, "agent.delete", { slug: "mcp-made" })).structuredContent).toEqual({ slug: "mcp-made", deleted: true })
    expect(toolError(await callTool(ownerMcp, "agent.get", { slug: "mcp-made" })).error.reason).toBe("agent_not_found")
  })

  it("an organization key reads no agents: 403 forbidden, as on REST", async () => {
    const workspace = `${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
    const overRest = await call(node, "agent.list", {}, { key: node.bootstrap.orgKey })
    const overMcp = toolError(await callTool(orgMcp, "agent.list", { workspace }))
    expect(overMcp).toEqual(overRest.body)
    expect(overMcp.error.code).toBe("forbidden")
  })
})

describe("a turn of an agent", () => {
  const writer = {
    slug: "writer",
    name: "Writer",
    description: "Writes short notes.",
    instructions: "Always answer in exactly three lines.",
    tier: "precise",
    tools: ["system.ping"]
  }

  beforeAll(async () => {
    expect((await asOwner("agent.create", writer)).status).toBe(200)
  })

  const workspacePrincipal = async () => {
    const principal = await run(authenticate({ authorization: `Bearer ${node.bootstrap.workspaceKey}` }))
    if (Exit.isFailure(principal)) throw new Error("the workspace key did not authenticate")
    return principal.value
  }
  const path = () => ({ orgSlug: node.bootstrap.orgSlug, workspaceSlug: node.bootstrap.workspaceSlug })

  it("askAgent runs it through ask_assistant: its instructions in the system prompt, its tier's model, only its tools", async () => {
    const from = server.requests.length
    const before = new Set((await auditRows(node, "ask_assistant")).map((r) => r.invocation_id))
    server.script({ kind: "text", text: "one\ntwo\nthree" })
    const asked = await run(askAgent({ principal: await workspacePrincipal(), path: path(), surface: "api", agentSlug: "writer", content: "a note on the printer" }))
    expect(Exit.isSuccess(asked)).toBe(true)
    const result = Exit.isSuccess(asked) ? asked.value : undefined
    expect(result).toMatchObject({ reply: "one\ntwo\nthree", runId: expect.stringMatching(/^tse_/), conversationPublicId: expect.stringMatching(/^cnv_/), stopped: false })

    const [request] = server.requests.slice(from)
    expect(systemOf(request)).toContain(`You are Writer, an agent of the workspace ${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}.`)
    expect(systemOf(request)).toContain("Always answer in exactly three lines.")
    // the tier `precise` is the operator's o3
    expect(request.body.model).toBe("o3")
    expect(toolsOf(request)).toEqual(["ask_user", "system__ping"])
    expect(request.body.messages.at(-1)).toEqual({ role: "user", content: "a note on the printer" })

    // one invocation of ask_assistant in the audit log, as for any turn
    const audited = (await auditRows(node, "ask_assistant")).filter((r) => !before.has(r.invocation_id))
    expect(audited).toEqual([expect.objectContaining({ outcome: "succeeded", surface: "api" })])
  })

  it("skills: created, attached to an agent, carried by its turns at their current version; an update is the next turn's; a deleted one is left out", async () => {
    const workspace = `${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
    const created = await asOwner("skill.create", { slug: "tone", name: "Tone", instructions: "Never use exclamation marks." })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    expect(created.body).toMatchObject({ slug: "tone", name: "Tone", description: "", instructions: "Never use exclamation marks.", version: 1 })
    // over MCP too, and every surface reads the same skill
    const overMcp = await callTool(ownerMcp, "skill.create", { workspace, slug: "sources", name: "Sources", instructions: "Name a source for every fact." })
    expect(overMcp.structuredContent).toMatchObject({ slug: "sources", version: 1 })
    expect((await asOwner("skill.list", {})).body.skills.map((skill: any) => skill.slug)).toEqual(["sources", "tone"])
    expect((await asOwner("skill.get", { slug: "tone" })).body).toEqual(created.body)
    expectError(await asOwner("skill.create", { slug: "tone", name: "Again", instructions: "x" }), 409, "conflict", "skill_exists")
    expectError(await asOwner("agent.update", { slug: "writer", skills: ["tone", "missing"] }), 404, "not_found", "skill_not_found")
    const attached = await asOwner("agent.update", { slug: "writer", skills: ["tone", "sources"] })
    expect(attached.body).toMatchObject({ slug: "writer", skills: ["tone", "sources"] })

    const turn = async () => {
      const from = server.requests.length
      server.script({ kind: "text", text: "noted" })
      expect(Exit.isSuccess(await run(askAgent({ principal: await workspacePrincipal(), path: path(), surface: "api", agentSlug: "writer", content: "a note" })))).toBe(true)
      return systemOf(server.requests[from])
    }
    const first = await turn()
    expect(first).toContain("Skill tone (Tone, version 1):\nNever use exclamation marks.")
    expect(first).toContain("Skill sources (Sources, version 1):\nName a source for every fact.")

    const updated = await asOwner("skill.update", { slug: "tone", instructions: "Never use exclamation marks or emoji." })
    expect(updated.body).toMatchObject({ version: 2, instructions: "Never use exclamation marks or emoji." })
    const second = await turn()
    expect(second).toContain("Skill tone (Tone, version 2):\nNever use exclamation marks or emoji.")
    expect(second).not.toContain("version 1):\nNever use exclamation marks.")

    expect((await asOwner("skill.delete", { slug: "sources" })).body).toEqual({ slug: "sources", deleted: true })
    expectError(await asOwner("skill.get", { slug: "sources" }), 404, "not_found", "skill_not_found")
    const third = await turn()
    expect(third).toContain("Skill tone (Tone, version 2)")
    expect(third).not.toContain("Name a source for every fact.")
  })

  it("skills: a workspace key (a Member) reads them and may not write them; an organization key gets 403 forbidden on REST, MCP and the agent surface", async () => {
    const workspace = `${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
    expect((await call(node, "skill.list", {}, { key: node.bootstrap.workspaceKey })).status).toBe(200)
    expectError(await call(node, "skill.create", { slug: "mine", name: "Mine", instructions: "x" }, { key: node.bootstrap.workspaceKey }), 403, "forbidden", undefined)
    for (const [capability, input] of [["skill.list", {}], ["skill.get", { slug: "tone" }], ["skill.create", { slug: "org", name: "Org", instructions: "x" }], ["skill.update", { slug: "tone", name: "X" }], ["skill.delete", { slug: "tone" }]] as const) {
      const overRest = await call(node, capability, input, { key: node.bootstrap.orgKey })
      expectError(overRest, 403, "forbidden", undefined)
      expect(toolError(await callTool(orgMcp, capability, { ...input, workspace }))).toEqual(overRest.body)
      const overAgent = await callAsAgent(node, node.bootstrap.orgKey, capability, input)
      expect(overAgent.body).toEqual(overRest.body)
    }
  })

  it("the built-in assistant through askAgent is the plain workspace assistant; an unknown agent is refused before any model call", async () => {
    const from = server.requests.length
    const principal = await workspacePrincipal()
    const asked = await run(askAgent({ principal, path: path(), surface: "api", agentSlug: "assistant", content: "hello" }))
    expect(Exit.isSuccess(asked)).toBe(true)
    const [request] = server.requests.slice(from)
    expect(systemOf(request)).toContain(`You are the assistant of the workspace`)
    expect(systemOf(request)).not.toContain("Always answer")
    expect(request.body.model).toBe("gpt-5-test")
    expect(toolsOf(request)).toEqual(expect.arrayContaining(["node__create", "node__list", "system__ping", "ask_user"]))

    const unknown = await run(askAgent({ principal, path: path(), surface: "api", agentSlug: "nobody", content: "hello" }))
    expect(Exit.isFailure(unknown) && unknown.cause._tag === "Fail" ? (unknown.cause.error as { _tag: string })._tag : undefined).toBe("AgentNotFound")
    expect(server.requests.length).toBe(from + 1)
  })

  /** A JSON-RPC call to /a2a with the workspace key. */
  const rpc = async (method: string, params: unknown) => {
    const response = await fetch(`${node.baseUrl}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${node.bootstrap.workspaceKey}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
    })
    return (await response.json()) as { result?: any; error?: { code: number; message: string; data?: any } }
  }
  const send = (text: string, metadata?: Record<string, unknown>) =>
    rpc("message/send", { message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text }], ...(metadata === undefined ? {} : { metadata }) } })

  it("A2A: the extended card lists the agents as skills and declares how a message names one; message.metadata.agentSlug runs it", async () => {
    const card = (await rpc("agent/getAuthenticatedExtendedCard", {})).result
    // not required: left out, as the signed 1.0 card must (its verifier's schema drops the default)
    expect(card.capabilities.extensions).toEqual([expect.objectContaining({ uri: "urn:svc:a2a:ext:agent-slug:v1" })])
    expect(card.capabilities.extensions[0].required ?? false).toBe(false)
    const skills = new Map<string, any>(card.skills.map((skill: any) => [skill.id, skill]))
    expect(skills.get("assistant")).toMatchObject({ name: "Workspace assistant" })
    expect(skills.get("writer")).toMatchObject({ name: "Writer", description: "Writes short notes.", tags: ["agent"] })
    expect(card.skills.findIndex((s: any) => s.id === "writer")).toBe(1)
    // the public card is the platform's, without the workspace's agents
    const publicCard: any = await (await fetch(`${node.baseUrl}/.well-known/agent-card.json`)).json()
    expect(publicCard.skills.map((s: any) => s.id)).toEqual(["assistant"])

    const from = server.requests.length
    server.script({ kind: "text", text: "a\nb\nc" })
    const task = (await send("a note please", { agentSlug: "writer" })).result
    expect(task).toMatchObject({ kind: "task", status: { state: "completed" } })
    const [request] = server.requests.slice(from)
    expect(systemOf(request)).toContain("Always answer in exactly three lines.")
    expect(toolsOf(request)).toEqual(["ask_user", "system__ping"])

    // a slug that is not one: invalid params; one that names no agent: refused with not_found
    expect((await send("hi", { agentSlug: 42 })).error).toMatchObject({ code: -32602, data: { reason: "invalid_agent_slug" } })
    expect((await send("hi", { agentSlug: "nobody" })).error).toMatchObject({ code: -32000, data: { status: 404, reason: "agent_not_found" } })
  })
})
