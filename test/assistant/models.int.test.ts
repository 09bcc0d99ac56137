/**
 * Model resolution against a real node (real Postgres): each test gets an organization of its own
 * whose Owner sets tiers and keys through the capabilities over HTTP; `resolveTurnModel` then reads
 * them through the node's runtime, and every refusal of spec 7.1's 404 and 409 rows is checked as
 * the gateway states it. Then effort (sent, not sent, capped), and the OpenAI-compatible adapter
 * through `streamText` against a local chat-completions server: text, reasoning, tool-call deltas,
 * usage, `reasoning_effort` in the request, whose key is sent, and how failures are classified.
 */
import { APICallError } from "@ai-sdk/provider"
import { jsonSchema, streamText, type TextStreamPart, tool, type ToolSet } from "ai"
import { Cause, Effect, Either, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { describeFailure } from "../../gateway/errors.ts"
import { OrgActor } from "../../actors/org/actor.ts"
import { AddMember, CreateOrganization, CreateWorkspace } from "../../actors/org/protocol.ts"
import { classifyModelError, type PaidBy } from "../../src/assistant/models/errors.ts"
import type { Effort } from "../../src/assistant/models/ids.ts"
import { type ResolvedModel, resolveTurnModel, type TurnModelRequest } from "../../src/assistant/models/resolve.ts"
import type { AssistantSettings } from "../../src/assistant/Settings.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import { type OutboundPolicy, parseOutboundAllow } from "../../src/platform/Outbound.ts"
import type { Db } from "../../streams/Db.ts"
import type { PlatformSecrets } from "../../src/platform/Secrets.ts"
import type { ActorHost } from "../../streams/ActorHost.ts"
import { eventsOf } from "../e2e/client.ts"
import { streamChat } from "../support/chat.ts"
import { connectMcp } from "../support/mcp.ts"
import { startOpenAiServer, type OpenAiServer } from "../support/openaiServer.ts"
import { addPerson, callWithCookie, cliLogin, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

const OPERATOR_KEY = "sk-operator-0123456789abcdef"
const ORG_KEY = "sk-organization-0123456789wxyz"

let node: TestNode
let server: OpenAiServer
let run: <A, E>(effect: Effect.Effect<A, E, Db | ActorHost | AssistantSettings | PlatformSecrets | OutboundPolicy>) => Promise<A>
let owner: { userId: string; cookie: string }
let member: { userId: string; cookie: string }

beforeAll(async () => {
  server = await startOpenAiServer()
  const base = loadConfig({}).assistant
  node = await startTestNode({
    assistant: {
      ...base,
      operatorTiers: { fast: "offline:fast", balanced: "openai:gpt-5-mini", precise: "anthropic:claude-opus-4-5" },
      defaultTier: "fast",
      openaiBaseUrl: server.url,
      openaiApiKey: OPERATOR_KEY
    },
    // the local chat-completions server listens there
    outboundAllow: parseOutboundAllow("127.0.0.1")
  })
  run = Runtime.runPromise(node.runtime as Runtime.Runtime<Db | ActorHost | AssistantSettings | PlatformSecrets | OutboundPolicy>)
  const olivia = await addPerson(node, "olivia")
  const mark = await addPerson(node, "mark")
  owner = { userId: olivia.userId, cookie: (await signIn(node.baseUrl, olivia)).cookie }
  member = { userId: mark.userId, cookie: (await signIn(node.baseUrl, mark)).cookie }
})

afterAll(async () => {
  await node?.stop()
  await server?.close()
})

/** A new organization with one workspace: Olivia is its Owner, Mark a member. */
const newOrg = async () => {
  const orgId = `org_${randomUUID().replaceAll("-", "")}`
  const slug = `m-${randomUUID().slice(0, 8)}`
  const meta = () => ({ commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })
  await run(
    Effect.gen(function* () {
      yield* node.host.send(OrgActor, orgId, new CreateOrganization({ orgId, slug, name: "Models test" }), meta())
      yield* node.host.send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId: `wsp_${randomUUID().slice(0, 8)}`, slug: "main", name: "Main" }), meta())
      yield* node.host.send(OrgActor, orgId, new AddMember({ orgId, userId: owner.userId, role: "owner" }), meta())
      yield* node.host.send(OrgActor, orgId, new AddMember({ orgId, userId: member.userId, role: "member" }), meta())
    })
  )
  const call = (capability: string, input: unknown, cookie = owner.cookie) =>
    callWithCookie(node.baseUrl, cookie, `/v1/${slug}/main/${capability.replaceAll(".", "/")}`, input)
  const ok = async (capability: string, input: unknown) => {
    const reply = await call(capability, input)
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    return reply.body
  }
  const resolve = (request: Omit<TurnModelRequest, "orgId"> = {}) => run(resolveTurnModel({ orgId, ...request }))
  /** `ok`, or the refusal as the gateway states it: `<status> <code> <reason>`. */
  const refusal = async (request: Omit<TurnModelRequest, "orgId"> = {}) => {
    const result = await run(Effect.either(resolveTurnModel({ orgId, ...request })))
    if (Either.isRight(result)) return "ok"
    const { status, code, reason } = describeFailure(Cause.fail(result.left))
    return `${status} ${code} ${reason}`
  }
  return { orgId, call, ok, resolve, refusal }
}

const summary = (resolved: ResolvedModel) => ({
  modelId: resolved.modelId,
  family: resolved.family,
  tier: resolved.tier,
  paidBy: resolved.paidBy,
  effort: resolved.effort,
  provider: resolved.model.provider,
  name: resolved.model.modelId
})

describe("which model a turn runs on", () => {
  it("no tier and no model: the operator's default tier, then the organization's default once it sets one", async () => {
    const org = await newOrg()
    expect(summary(await org.resolve())).toEqual({
      modelId: "offline:fast", family: "offline", tier: "fast", paidBy: "operator", effort: null, provider: "offline", name: "fast"
    })
    await org.ok("org.model_tier.set", { slug: "house", model: "gpt-5-mini", sharedKey: true, default: true })
    expect(summary(await org.resolve())).toMatchObject({ modelId: "openai:gpt-5-mini", family: "openai", tier: "house", paidBy: "operator", provider: "openai.chat" })
    await org.ok("org.model_tier.set", { slug: "house", model: "gpt-5-mini", sharedKey: true, default: false })
    expect(summary(await org.resolve())).toMatchObject({ modelId: "offline:fast", tier: "fast" })
  })

  it("a tier: the organization's with that slug, else the operator's fast/balanced/precise, else 404", async () => {
    const org = await newOrg()
    expect(summary(await org.resolve({ tier: "balanced" }))).toMatchObject({ modelId: "openai:gpt-5-mini", tier: "balanced", paidBy: "operator" })
    expect(summary(await org.resolve({ tier: "precise" }))).toMatchObject({ modelId: "anthropic:claude-opus-4-5", family: "anthropic", paidBy: "operator", provider: "anthropic.messages" })
    await org.ok("org.model_tier.set", { slug: "balanced", model: "offline:house", sharedKey: true })
    expect(summary(await org.resolve({ tier: "balanced" }))).toMatchObject({ modelId: "offline:house", tier: "balanced" })
    expect(await org.refusal({ tier: "nonesuch" })).toBe("404 not_found model_tier_not_found")
  })

  it("an explicit model wins over the tier, and the operator pays for it", async () => {
    const org = await newOrg()
    await org.ok("org.model_tier.set", { slug: "gone", model: "offline:x", sharedKey: false, archived: true })
    expect(summary(await org.resolve({ tier: "gone", model: "claude-sonnet-4-6" }))).toMatchObject({
      modelId: "anthropic:claude-sonnet-4-6", tier: null, paidBy: "operator"
    })
    expect(summary(await org.resolve({ tier: "nonesuch", model: "openai:llama3:8b" }))).toMatchObject({ modelId: "openai:llama3:8b", name: "llama3:8b" })
    for (const [model, id] of [["gpt-4o", "openai:gpt-4o"], ["o3-mini", "openai:o3-mini"], ["chatgpt-4o-latest", "openai:chatgpt-4o-latest"], ["offline-tiny", "offline:offline-tiny"]]) {
      expect((await org.resolve({ model })).modelId).toBe(id)
    }
  })

  it("refuses an archived tier, a tier with no model, and a model of no known family (409)", async () => {
    const org = await newOrg()
    await org.ok("org.model_tier.set", { slug: "old", model: "offline:x", sharedKey: true, archived: true })
    await org.ok("org.model_tier.set", { slug: "later", model: null, sharedKey: true })
    expect(await org.refusal({ tier: "old" })).toBe("409 conflict model_tier_archived")
    expect(await org.refusal({ tier: "later" })).toBe("409 conflict model_tier_unmapped")
    expect(await org.refusal({ model: "llama3" })).toBe("409 conflict model_family_unknown")
    expect(await org.refusal({ model: "mistral:large" })).toBe("409 conflict model_family_unknown")
    // restoring the archived tier lets it run again
    await org.ok("org.model_tier.set", { slug: "old", model: "offline:x", sharedKey: true })
    expect(await org.refusal({ tier: "old" })).toBe("ok")
  })

  it("an organization that pays needs a key of the model's family that may run the model", async () => {
    const org = await newOrg()
    await org.ok("org.model_tier.set", { slug: "own", model: "openai:gpt-5-mini", sharedKey: false })
    expect(await org.refusal({ tier: "own" })).toBe("409 conflict model_tier_key_missing")
    await org.ok("org.model_key.set", { family: "anthropic", apiKey: "sk-ant-0123456789abcdef" })
    expect(await org.refusal({ tier: "own" })).toBe("409 conflict model_tier_key_cannot_serve")
    await org.ok("org.model_key.set", { family: "openai", apiKey: ORG_KEY, baseUrl: server.url, models: ["gpt-4o", "openai:o3"] })
    expect(await org.refusal({ tier: "own" })).toBe("409 conflict model_tier_key_cannot_serve")
    await org.ok("org.model_key.set", { family: "openai", apiKey: ORG_KEY, baseUrl: server.url, models: ["gpt-5-mini"] })
    expect(summary(await org.resolve({ tier: "own" }))).toMatchObject({ modelId: "openai:gpt-5-mini", tier: "own", paidBy: "organization" })
    await org.ok("org.model_key.clear", { family: "openai" })
    await org.ok("org.model_key.clear", { family: "anthropic" })
    expect(await org.refusal({ tier: "own" })).toBe("409 conflict model_tier_key_missing")
  })

  it("an offline tier the organization pays for needs no key", async () => {
    const org = await newOrg()
    await org.ok("org.model_tier.set", { slug: "local", model: "offline:local", sharedKey: false })
    expect(summary(await org.resolve({ tier: "local" }))).toMatchObject({ modelId: "offline:local", paidBy: "organization" })
  })
})

describe("the capabilities", () => {
  it("store a normalized model, list tiers and keys, and never show or record the raw key", async () => {
    const org = await newOrg()
    expect(await org.ok("org.model_tier.set", { slug: "smart", model: "claude-opus-4-5", sharedKey: false, default: true })).toEqual({
      slug: "smart", model: "anthropic:claude-opus-4-5", sharedKey: false, archived: false, default: true
    })
    const set = await org.ok("org.model_key.set", { family: "anthropic", apiKey: "sk-ant-secret-value-9876", models: ["anthropic:claude-opus-4-5"] })
    expect(set).toEqual({ family: "anthropic", keyHint: "9876", baseUrl: null, models: ["claude-opus-4-5"], setAt: expect.any(String) })
    const list = await org.ok("org.model_tier.list", {})
    expect(list).toEqual({
      tiers: [{ slug: "smart", model: "anthropic:claude-opus-4-5", sharedKey: false, archived: false, default: true }],
      defaultTier: "smart",
      operatorTiers: { fast: "offline:fast", balanced: "openai:gpt-5-mini", precise: "anthropic:claude-opus-4-5" },
      operatorDefaultTier: "fast",
      keys: [{ family: "anthropic", keyHint: "9876", baseUrl: null, models: ["claude-opus-4-5"], setAt: set.setAt }]
    })
    expect(JSON.stringify(await eventsOf(node, `models:${org.orgId}`))).not.toContain("sk-ant-secret-value")
    const [row] = await node.db.sql`select api_key_sealed from ${node.db.sql(node.db.schema)}.model_keys where org_id = ${org.orgId}`
    expect(row.api_key_sealed).not.toContain("sk-ant-secret-value")
  })

  it("refuse a model of no known family, an archived default, a key restricted to another family's models", async () => {
    const org = await newOrg()
    const family = await org.call("org.model_tier.set", { slug: "x", model: "mistral-large", sharedKey: true })
    expect({ status: family.status, reason: family.body.error.reason }).toEqual({ status: 409, reason: "model_family_unknown" })
    const archived = await org.call("org.model_tier.set", { slug: "x", model: "offline:x", sharedKey: true, archived: true, default: true })
    expect({ status: archived.status, reason: archived.body.error.reason }).toEqual({ status: 409, reason: "model_tier_archived" })
    const restricted = await org.call("org.model_key.set", { family: "openai", apiKey: ORG_KEY, models: ["anthropic:claude-opus-4-5"] })
    expect({ status: restricted.status, reason: restricted.body.error.reason }).toEqual({ status: 400, reason: "invalid_input" })
  })

  it("refuse a baseUrl on an address the node may not call (metadata, private, loopback not on OUTBOUND_ALLOW); a host name is checked at each call", async () => {
    const org = await newOrg()
    for (const baseUrl of ["http://169.254.169.254/v1", "http://10.0.0.5/v1", "https://[fd00::1]/v1", "http://[::1]:8080/v1"]) {
      const refused = await org.call("org.model_key.set", { family: "openai", apiKey: ORG_KEY, baseUrl })
      expect({ status: refused.status, code: refused.body.error?.code, reason: refused.body.error?.reason }, baseUrl).toEqual({ status: 400, code: "bad_request", reason: "invalid_input" })
      expect(refused.body.error.message).toMatch(/^baseUrl: refused to call .* is a (metadata|private|loopback) address/)
    }
    expect((await org.ok("org.model_tier.list", {})).keys).toEqual([])
    // this node allows 127.0.0.1, so its local server may be the key's endpoint
    expect((await org.ok("org.model_key.set", { family: "openai", apiKey: ORG_KEY, baseUrl: server.url })).baseUrl).toBe(server.url)
    expect((await org.ok("org.model_key.set", { family: "openai", apiKey: ORG_KEY, baseUrl: "https://llm.example.com/v1" })).baseUrl).toBe("https://llm.example.com/v1")
  })

  it("are the Owner's alone", async () => {
    const org = await newOrg()
    for (const [capability, input] of [
      ["org.model_tier.list", {}],
      ["org.model_tier.set", { slug: "x", model: null, sharedKey: true }],
      ["org.model_key.set", { family: "openai", apiKey: ORG_KEY }],
      ["org.model_key.clear", { family: "openai" }]
    ] as const) {
      expect((await org.call(capability, input, member.cookie)).status, capability).toBe(403)
    }
  })
})

describe("effort", () => {
  const cases: ReadonlyArray<readonly [string, Effort | undefined, Effort | null, Record<string, unknown>]> = [
    ["offline:fast", "max", "max", { offline: { effort: "max" } }],
    ["offline:fast", undefined, null, {}],
    ["openai:gpt-5-mini", "high", "high", { openai: { reasoningEffort: "high" } }],
    ["openai:gpt-5.1", "max", "xhigh", { openai: { reasoningEffort: "xhigh" } }],
    ["openai:gpt-5-chat-latest", "low", null, {}],
    ["openai:o3", "xhigh", "high", { openai: { reasoningEffort: "high" } }],
    ["openai:o4-mini", "low", "low", { openai: { reasoningEffort: "low" } }],
    ["openai:o1-mini", "low", null, {}],
    ["openai:gpt-4o", "high", null, {}],
    ["anthropic:claude-opus-4-5", "max", "high", { anthropic: { effort: "high" } }],
    ["anthropic:claude-sonnet-4-6", "xhigh", "high", { anthropic: { effort: "high" } }],
    ["anthropic:claude-opus-5", "medium", "medium", { anthropic: { effort: "medium" } }],
    ["anthropic:claude-sonnet-4-20250514", "high", null, {}],
    ["anthropic:claude-3-5-haiku-latest", "low", null, {}]
  ]
  it.each(cases)("%s asked %s: sends %s", async (model, asked, sent, providerOptions) => {
    const org = await newOrg()
    const resolved = await org.resolve({ model, effort: asked })
    expect({ effort: resolved.effort, providerOptions: resolved.providerOptions }).toEqual({ effort: sent, providerOptions })
  })

  it("a tier's model gets the same effort rules", async () => {
    const org = await newOrg()
    expect((await org.resolve({ tier: "precise", effort: "max" })).providerOptions).toEqual({ anthropic: { effort: "high" } })
  })
})

describe("the OpenAI-compatible adapter against a chat-completions server", () => {
  const stream = async (resolved: ResolvedModel, content: string, tools?: ToolSet) => {
    const result = streamText({
      model: resolved.model,
      messages: [{ role: "user", content }],
      tools,
      providerOptions: resolved.providerOptions,
      maxRetries: 0,
      onError: () => {}
    })
    const parts: Array<TextStreamPart<ToolSet>> = []
    for await (const part of result.fullStream) parts.push(part)
    return parts
  }
  const deltas = (parts: ReadonlyArray<TextStreamPart<ToolSet>>, type: "text-delta" | "reasoning-delta") =>
    parts.flatMap((p) => (p.type === type ? [p.text] : []))

  it("streams reasoning and text, reports usage, and sends the effort and the operator's key", async () => {
    const org = await newOrg()
    const resolved = await org.resolve({ tier: "balanced", effort: "high" })
    const before = server.requests.length
    server.script({ kind: "text", text: "Paris is the capital of France.", reasoning: "The user asks about geography." })
    const parts = await stream(resolved, "What is the capital of France?")
    expect(deltas(parts, "reasoning-delta").join("")).toBe("The user asks about geography.")
    expect(deltas(parts, "text-delta").join("")).toBe("Paris is the capital of France.")
    expect(deltas(parts, "text-delta").length).toBeGreaterThan(1)
    const finish = parts.find((p) => p.type === "finish")!
    expect(finish.type === "finish" && finish.finishReason).toBe("stop")
    expect(finish.type === "finish" && finish.totalUsage).toMatchObject({ outputTokens: Math.ceil((31 + 30) / 4), reasoningTokens: Math.ceil(30 / 4) })
    expect(finish.type === "finish" && finish.totalUsage.inputTokens).toBeGreaterThan(0)
    const request = server.requests[before]
    expect(request.path).toBe("/v1/chat/completions")
    expect(request.headers.authorization).toBe(`Bearer ${OPERATOR_KEY}`)
    expect(request.body).toMatchObject({
      model: "gpt-5-mini",
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: "high",
      messages: [{ role: "user", content: "What is the capital of France?" }]
    })
  })

  it("sends no effort to a model that takes none", async () => {
    const org = await newOrg()
    const resolved = await org.resolve({ model: "openai:gpt-4o", effort: "high" })
    const before = server.requests.length
    const parts = await stream(resolved, "echo me")
    expect(deltas(parts, "text-delta").join("")).toBe("echo me")
    expect(server.requests[before].body).not.toHaveProperty("reasoning_effort")
  })

  it("streams a tool call's input in pieces and sends the tools", async () => {
    const org = await newOrg()
    const resolved = await org.resolve({ model: "openai:gpt-5-mini" })
    const before = server.requests.length
    server.script({ kind: "tool", name: "lookup", arguments: { city: "Paris", limit: 3 } })
    const lookup = tool({ description: "Look a city up", inputSchema: jsonSchema<Record<string, unknown>>({ type: "object", properties: { city: { type: "string" } } }) })
    const parts = await stream(resolved, "look up Paris", { lookup })
    const types = parts.map((p) => p.type)
    expect(types.indexOf("tool-input-start")).toBeLessThan(types.indexOf("tool-input-delta"))
    expect(types.indexOf("tool-input-end")).toBeLessThan(types.indexOf("tool-call"))
    const pieces = parts.flatMap((p) => (p.type === "tool-input-delta" ? [p.delta] : []))
    expect(pieces.length).toBeGreaterThanOrEqual(3)
    expect(JSON.parse(pieces.join(""))).toEqual({ city: "Paris", limit: 3 })
    const call = parts.find((p) => p.type === "tool-call")!
    expect(call.type === "tool-call" && { name: call.toolName, input: call.input }).toEqual({ name: "lookup", input: { city: "Paris", limit: 3 } })
    const finish = parts.find((p) => p.type === "finish")!
    expect(finish.type === "finish" && finish.finishReason).toBe("tool-calls")
    expect(server.requests[before].body.tools).toEqual([
      { type: "function", function: { name: "lookup", description: "Look a city up", parameters: expect.objectContaining({ type: "object" }) } }
    ])
  })

  it("sends the organization's own key to the key's endpoint when the organization pays", async () => {
    const org = await newOrg()
    await org.ok("org.model_key.set", { family: "openai", apiKey: ORG_KEY, baseUrl: server.url })
    await org.ok("org.model_tier.set", { slug: "own", model: "o3", sharedKey: false })
    const resolved = await org.resolve({ tier: "own", effort: "max" })
    const before = server.requests.length
    await stream(resolved, "hello")
    expect(server.requests[before].headers.authorization).toBe(`Bearer ${ORG_KEY}`)
    expect(server.requests[before].body).toMatchObject({ model: "o3", reasoning_effort: "high" })
  })

  it("classifies failures: an operator out of balance is platform_provider_balance, the provider's other failures model_call_failed, and none of this node's own", async () => {
    const org = await newOrg()
    const resolved = await org.resolve({ tier: "balanced" })
    const failureOf = async (status: number, body: unknown, paidBy: PaidBy) => {
      server.script({ kind: "error", status, body })
      const error = (await stream(resolved, "hi")).find((p) => p.type === "error")
      expect(error?.type === "error" && APICallError.isInstance(error.error)).toBe(true)
      return error?.type === "error" ? classifyModelError(error.error, paidBy)?.code : undefined
    }
    const quota = { error: { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" } }
    expect(await failureOf(402, { error: { message: "Payment required" } }, "operator")).toBe("platform_provider_balance")
    expect(await failureOf(429, quota, "operator")).toBe("platform_provider_balance")
    expect(await failureOf(402, { error: { message: "Payment required" } }, "organization")).toBe("model_call_failed")
    expect(await failureOf(429, { error: { message: "Rate limit reached", type: "requests" } }, "operator")).toBe("model_call_failed")
    expect(await failureOf(500, { error: { message: "boom" } }, "operator")).toBe("model_call_failed")
    // a fault of this node is not the provider's: it has no code of 7.2 (the turn ends `Stream error`)
    expect(classifyModelError(new TypeError("cannot read properties of undefined"), "operator")).toBeUndefined()
  })

  it("classifies the last failure after retries", async () => {
    const org = await newOrg()
    const resolved = await org.resolve({ tier: "balanced" })
    server.script({ kind: "error", status: 503, body: { error: { message: "busy" } } }, { kind: "error", status: 503, body: { error: { message: "credit balance is too low" } } })
    const result = streamText({ model: resolved.model, prompt: "hi", maxRetries: 1, onError: () => {} })
    let error: unknown
    for await (const part of result.fullStream) if (part.type === "error") error = part.error
    expect(classifyModelError(error, "operator")?.code).toBe("platform_provider_balance")
  })
})

describe("a node that allows no private address (no OUTBOUND_ALLOW)", () => {
  let strict: TestNode
  let ownerCookie: string
  let ownerLogin: string

  beforeAll(async () => {
    strict = await startTestNode({
      assistant: { ...loadConfig({}).assistant, operatorTiers: { fast: "offline:fast", balanced: "openai:gpt-5-mini", precise: "offline:precise" }, openaiBaseUrl: server.url, openaiApiKey: OPERATOR_KEY }
    })
    const olivia = await addPerson(strict, "olivia", { org: "owner" })
    ownerCookie = (await signIn(strict.baseUrl, olivia)).cookie
    ownerLogin = await cliLogin(strict, olivia)
  })

  afterAll(async () => {
    await strict?.stop()
  })

  const asOwner = (capability: string, input: unknown) =>
    callWithCookie(strict.baseUrl, ownerCookie, `/v1/${strict.bootstrap.orgSlug}/${strict.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`, input)

  it("refuses a loopback baseUrl when it is set, over REST and MCP", async () => {
    const input = { family: "openai", apiKey: ORG_KEY, baseUrl: server.url }
    const rest = await asOwner("org.model_key.set", input)
    expect(rest.status).toBe(400)
    expect(rest.body.error).toMatchObject({ code: "bad_request", reason: "invalid_input", message: expect.stringMatching(/127\.0\.0\.1 is a loopback address; the operator may allow it with OUTBOUND_ALLOW/) })
    const mcp = await connectMcp(strict.baseUrl, ownerLogin, "svc-models-test")
    try {
      const result = (await mcp.callTool({ name: "org.model_key.set", arguments: input })) as { isError?: boolean; content: Array<{ text: string }> }
      expect(result.isError).toBe(true)
      expect(JSON.parse(result.content[0].text)).toEqual(rest.body)
    } finally {
      await mcp.close()
    }
  })

  it("a member's turn on a tier whose key's endpoint resolves to loopback never reaches it: the model call is refused in the stream", async () => {
    const port = new URL(server.url).port
    const set = await asOwner("org.model_key.set", { family: "openai", apiKey: ORG_KEY, baseUrl: `http://localhost:${port}/v1` })
    expect(set.status, JSON.stringify(set.body)).toBe(200)
    expect((await asOwner("org.model_tier.set", { slug: "own", model: "openai:gpt-4o", sharedKey: false })).status).toBe(200)
    const before = server.requests.length
    // the workspace key: a Member
    const turn = await streamChat(strict, { content: "what is my system prompt?", tier: "own" })
    expect(turn.status).toBe(200)
    expect(turn.events.find((e) => e.type === "error")).toMatchObject({ code: "model_call_failed", message: "the model provider's address is refused (loopback)" })
    expect(server.requests.length).toBe(before)
  })

  it("the operator's own endpoint on loopback is refused alike until OUTBOUND_ALLOW names it", async () => {
    const before = server.requests.length
    const turn = await streamChat(strict, { content: "hello", tier: "balanced" })
    expect(turn.events.find((e) => e.type === "error")).toMatchObject({ code: "model_call_failed", message: "the model provider's address is refused (loopback)" })
    expect(server.requests.length).toBe(before)
  })
})
