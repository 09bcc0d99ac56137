/**
 * Automations end to end (spec 2.8, 3.4, 4.4, 6.3.2), on a real node over real HTTP: the enable
 * gate row by row over REST (an Owner's session is a person; a workspace key is an AI), MCP (an AI
 * origin even for a person's CLI login) and the agent surface; event triggers from a node event to
 * the run, its tool step's audit record and its playbook events; API triggers and their payload;
 * every refusal of create and update; the organization key's 403; signed webhooks to a local
 * receiver (and refused without the outbound allow-list); human input; condition branching, a
 * failing step, a blank playbook, run history, update and delete.
 *
 * "No run started" is shown against a witness: an enabled automation watching the same label and
 * event without conditions. The reaction reads each node event once for every watcher, so once the
 * witness's run of that node exists, any other run of it would exist too.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Exit, Runtime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { authenticate } from "../../src/identity/Auth.ts"
import type { Principal } from "../../src/checkpoint/Capability.ts"
import { invoke } from "../../src/checkpoint/Checkpoint.ts"
import { FailureDescriber } from "../../src/platform/Failures.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { verifyWebhook } from "../../src/automations/Webhooks.ts"
import { connectMcp } from "../support/mcp.ts"
import { addPerson, cliLogin, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhookReceiver.ts"
import { call, expectError, type Reply, sleep } from "./client.ts"

/** What a test drives one node with: the Owner's session, the workspace key, MCP and the agent surface. */
interface Driver {
  readonly node: TestNode
  readonly owner: Person
  /** REST with the Owner's session: a direct human origin. */
  readonly asOwner: (capability: string, input: unknown) => Promise<Reply>
  /** REST with the bootstrap workspace key (a Member): an AI origin. */
  readonly asKey: (capability: string, input: unknown) => Promise<Reply>
  readonly close: () => Promise<void>
}

const startDriver = async (overrides: Parameters<typeof startTestNode>[0] = {}): Promise<Driver> => {
  const node = await startTestNode(overrides)
  const owner = await addPerson(node, "owner", { org: "owner" })
  const cookie = (await signIn(node.baseUrl, owner)).cookie
  const place = `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
  return {
    node,
    owner,
    asOwner: (capability, input) => callWithCookie(node.baseUrl, cookie, `${place}/${capability.replaceAll(".", "/")}`, input),
    asKey: (capability, input) => call(node, capability, input),
    close: () => node.stop()
  }
}

/** Polls `read` every 50 ms until `done` holds; fails with the last value after `timeoutMs`. */
const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`still not there after ${timeoutMs} ms: ${JSON.stringify(value)}`)
    await sleep(50)
  }
}

const ended = (run: { readonly status: string }) => run.status === "succeeded" || run.status === "failed"

/** The run once it has ended (succeeded or failed). */
const endedRun = (d: Driver, runId: string) => until(() => d.asOwner("automation.get_run", { runId }), (reply) => reply.status === 200 && ended(reply.body)).then((r) => r.body)

/** An automation's runs of one node (event triggers), newest first. */
const runsOfNode = async (d: Driver, automationId: string, nodeId: string): Promise<Array<any>> => {
  const got = await d.asOwner("automation.get", { automationId })
  expect(got.status).toBe(200)
  return got.body.recentRuns.filter((r: any) => r.trigger.nodeId === nodeId)
}

/** The ended run of an event automation for a node. */
const endedRunOfNode = (d: Driver, automationId: string, nodeId: string) =>
  until(() => runsOfNode(d, automationId, nodeId), (runs) => runs.length > 0 && ended(runs[0])).then((runs) => runs[0])

const created = (reply: Reply) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

const fire = async (d: Driver, automationId: string, payload?: unknown) =>
  created(await d.asOwner("automation.trigger", { automationId, ...(payload === undefined ? {} : { payload }) }))

/** An id of the right shape that names no automation. */
const unknownAutomation = `aut_${"0".repeat(32)}`

const ticketLabel = {
  label: "Ticket",
  properties: { title: { type: "string" }, status: { type: "enum", values: ["open", "closed"] }, priority: { type: "number" }, due: { type: "datetime" } }
}
const noteLabel = { label: "Note", properties: { title: { type: "string" }, priority: { type: "number" } } }

const onCreated = (conditions?: unknown) => ({ type: "event", entityType: "Ticket", eventType: "node.created", ...(conditions === undefined ? {} : { conditions }) })
const ping = (name = "ping") => ({ name, stepType: "tool", config: { capability: "system.ping" } })
const readTrigger = { name: "read", stepType: "tool", config: { capability: "node.get", input: { nodeId: "{{trigger.nodeId}}" } } }

describe("on one node", () => {
  let d: Driver
  let ownerMcp: Client
  let keyMcp: Client
  let ownerPrincipal: Principal

  const runtime = () => d.node.runtime
  const runExit = <A, E>(effect: Effect.Effect<A, E, any>) => Runtime.runPromiseExit(runtime())(effect as Effect.Effect<A, E, never>)

  const connect = (key: string) => connectMcp(d.node.baseUrl, key, "svc-e2e-automations")

  /** A tool call over MCP: its structured output, or (`isError`) the error body REST would answer with. */
  const overMcp = async (client: Client, capability: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name: capability, arguments: args })) as CallToolResult
    return result.isError === true
      ? { refused: true, body: JSON.parse((result.content[0] as { text: string }).text) }
      : { refused: false, body: result.structuredContent as any }
  }
  const mcpCreated = (result: { readonly refused: boolean; readonly body: any }) => {
    expect(result.refused, JSON.stringify(result.body)).toBe(false)
    return result.body
  }
  /** An MCP refusal carries the body of the REST answer; its status is REST's to state. */
  const expectMcpError = (result: { readonly refused: boolean; readonly body: any }, rest: Reply) => {
    expect(result.refused).toBe(true)
    expect(result.body).toEqual({ error: { ...rest.body.error, message: expect.any(String) } })
  }

  /** A capability on the agent surface as the Owner (what their chat's tool call runs), stated as REST states it. */
  const asAgent = async (capability: string, input: unknown): Promise<Reply> => {
    const exit = await runExit(invoke({
      authorization: undefined,
      principal: ownerPrincipal,
      surface: "agent",
      capability,
      path: { orgSlug: d.node.bootstrap.orgSlug, workspaceSlug: d.node.bootstrap.workspaceSlug },
      input: Effect.succeed(input)
    }))
    if (Exit.isSuccess(exit)) return { status: 200, body: exit.value }
    const described = await runExit(Effect.map(FailureDescriber, (describe) => describe(exit.cause)))
    if (Exit.isFailure(described)) throw new Error("the node describes no failures")
    const { status, code, reason, message } = described.value
    return { status, body: { error: { code, ...(reason === undefined ? {} : { reason }), message } } }
  }

  beforeAll(async () => {
    d = await startDriver()
    ownerMcp = await connect(await cliLogin(d.node, d.owner))
    keyMcp = await connect(d.node.bootstrap.workspaceKey)
    const principal = await runExit(authenticate({ authorization: `Bearer ${await cliLogin(d.node, d.owner)}` }))
    if (Exit.isFailure(principal)) throw new Error("the Owner's CLI login did not authenticate")
    ownerPrincipal = principal.value
    created(await d.asKey("schema.define_label", ticketLabel))
    created(await d.asKey("schema.define_label", noteLabel))
  }, 60_000)

  afterAll(async () => {
    await Promise.all([ownerMcp?.close(), keyMcp?.close()])
    await d?.close()
  })

  const newTicket = async (properties: Record<string, unknown>) => created(await d.asKey("node.create", { label: "Ticket", properties: { title: "t", status: "open", priority: 1, ...properties } })).nodeId as string

  describe("the enable gate (spec 3.4)", () => {
    /** An event automation on new Tickets, created through `create` with `enabled: true`. */
    const watcher = (name: string) => ({ name, trigger: onCreated(), steps: [ping()], enabled: true })

    it("created by an AI origin with enabled: true, it is disabled: a workspace key, MCP (even a person's CLI login), the agent", async () => {
      const byKey = created(await d.asKey("automation.create", watcher("by key")))
      const byCliLoginOverMcp = mcpCreated(await overMcp(ownerMcp, "automation.create", watcher("by CLI login over MCP")))
      const byKeyOverMcp = mcpCreated(await overMcp(keyMcp, "automation.create", watcher("by key over MCP")))
      const byAgent = created(await asAgent("automation.create", watcher("by the agent")))
      for (const automation of [byKey, byCliLoginOverMcp, byKeyOverMcp, byAgent]) {
        expect(automation).toMatchObject({ enabled: false, origin: "ai", webhookSecret: expect.stringMatching(/^whsec_/) })
        expect((await d.asOwner("automation.get", { automationId: automation.automationId })).body).toMatchObject({ enabled: false, origin: "ai" })
      }
    })

    it("created by a person directly (a session, or a CLI login on the API) with enabled: true, it is enabled", async () => {
      expect(created(await d.asOwner("automation.create", watcher("by session")))).toMatchObject({ enabled: true, origin: "human" })
      const cliLoginOverRest = await call(d.node, "automation.create", watcher("by CLI login over REST"), { key: await cliLogin(d.node, d.owner) })
      expect(created(cliLoginOverRest)).toMatchObject({ enabled: true, origin: "human" })
    })

    it("created by a person without enabled, it is disabled", async () => {
      const { enabled: _, ...unset } = watcher("unset")
      expect(created(await d.asOwner("automation.create", unset))).toMatchObject({ enabled: false, origin: "human" })
    })

    it("enable by an AI origin is 403 forbidden human_required, on every AI surface, and it stays disabled", async () => {
      const { automationId } = created(await d.asOwner("automation.create", { ...watcher("to enable"), enabled: false }))
      const byKey = await d.asKey("automation.enable", { automationId })
      expectError(byKey, 403, "forbidden", "human_required")
      expectMcpError(await overMcp(ownerMcp, "automation.enable", { automationId }), byKey)
      expectMcpError(await overMcp(keyMcp, "automation.enable", { automationId }), byKey)
      expectError(await asAgent("automation.enable", { automationId }), 403, "forbidden", "human_required")
      expect((await d.asOwner("automation.get", { automationId })).body.enabled).toBe(false)
    })

    it("enable by the person enables what an AI created, and its trigger goes live", async () => {
      const { automationId } = created(await asAgent("automation.create", watcher("AI-made, person-enabled")))
      expect(created(await d.asOwner("automation.enable", { automationId }))).toMatchObject({ automationId, enabled: true, origin: "ai" })
      const ticket = await newTicket({ title: "after enable" })
      expect(await endedRunOfNode(d, automationId, ticket)).toMatchObject({ status: "succeeded", trigger: { type: "event", nodeId: ticket } })
    })

    it("disable is allowed from every origin; once it is answered, no run starts", async () => {
      const witness = created(await d.asOwner("automation.create", watcher("witness of disable"))).automationId
      const byKey = created(await d.asOwner("automation.create", watcher("disabled by key"))).automationId
      const byMcp = created(await d.asOwner("automation.create", watcher("disabled over MCP"))).automationId
      const byAgent = created(await d.asOwner("automation.create", watcher("disabled by the agent"))).automationId
      const byOwner = created(await d.asOwner("automation.create", watcher("disabled by the owner"))).automationId
      expect(created(await d.asKey("automation.disable", { automationId: byKey })).enabled).toBe(false)
      expect(mcpCreated(await overMcp(ownerMcp, "automation.disable", { automationId: byMcp })).enabled).toBe(false)
      expect(created(await asAgent("automation.disable", { automationId: byAgent })).enabled).toBe(false)
      expect(created(await d.asOwner("automation.disable", { automationId: byOwner })).enabled).toBe(false)

      const ticket = await newTicket({ title: "after disable" })
      await endedRunOfNode(d, witness, ticket)
      for (const automationId of [byKey, byMcp, byAgent, byOwner]) expect(await runsOfNode(d, automationId, ticket)).toEqual([])

      // fired over the API once disabled: refused, nothing run
      const onDemand = created(await d.asOwner("automation.create", { name: "on demand, then disabled", trigger: { type: "api" }, steps: [ping()], enabled: true })).automationId
      created(await asAgent("automation.disable", { automationId: onDemand }))
      expectError(await d.asOwner("automation.trigger", { automationId: onDemand }), 409, "conflict", "automation_disabled")
      expect((await d.asOwner("automation.get", { automationId: onDemand })).body.recentRuns).toEqual([])
    })
  })

  describe("event triggers", () => {
    let witness: string
    beforeAll(async () => {
      witness = created(await d.asOwner("automation.create", { name: "witness of events", trigger: onCreated(), steps: [ping()], enabled: true })).automationId
    })

    it("a node created runs the watching automation whose conditions hold; its tool step is audited on the playbook surface, its run as playbook events", async () => {
      const urgent = created(await d.asOwner("automation.create", {
        name: "urgent tickets",
        trigger: onCreated({ kind: "group", id: "g", combinator: "and", children: [
          { kind: "condition", id: "p", property: "priority", operator: "gte", value: 5 },
          { kind: "condition", id: "s", property: "status", operator: "eq", value: "open" }
        ] }),
        steps: [readTrigger],
        enabled: true
      })).automationId

      const ticket = await newTicket({ title: "printer on fire", priority: 8 })
      const run = await endedRunOfNode(d, urgent, ticket)
      // the run carries the originating node, as the event left it
      expect(run).toMatchObject({
        status: "succeeded",
        trigger: { type: "event", eventType: "node.created", nodeId: ticket, label: "Ticket", properties: { title: "printer on fire", priority: 8, status: "open" } },
        error: null
      })
      expect(run.steps).toEqual([expect.objectContaining({ name: "read", stepType: "tool", status: "succeeded", attempt: 1, output: expect.objectContaining({ nodeId: ticket }) })])

      // the step's capability call: a capability record as interactive use leaves, on the playbook surface, as the Owner
      const calls = await until(
        () => d.asOwner("audit.list", { capability: "node.get", surface: "playbook", limit: 100 }),
        (reply) => reply.status === 200 && reply.body.entries.length > 0
      )
      expect(calls.body.entries).toContainEqual(expect.objectContaining({ kind: "capability", capability: "node.get", surface: "playbook", userId: d.owner.userId, outcome: "succeeded" }))

      // the run as playbook events in the organization audit log
      const events = await until(
        () => d.asOwner("audit.list", { kind: "playbook", limit: 200 }),
        (reply) => reply.body.entries.filter((e: any) => e.detail?.runId === run.runId).length >= 4
      )
      const ofRun = events.body.entries.filter((e: any) => e.detail?.runId === run.runId).reverse()
      expect(ofRun.map((e: any) => e.event)).toEqual(["automation_run.started", "automation_run.step_started", "automation_run.step_succeeded", "automation_run.succeeded"])
      expect(ofRun[0]).toMatchObject({ kind: "playbook", surface: "playbook", detail: { automationId: urgent, trigger: { type: "event", eventType: "node.created", nodeId: ticket } } })
      expect(ofRun[1].detail).toMatchObject({ step: "read", index: 0, attempt: 1 })
    })

    it("a node whose properties break the conditions starts no run; a disabled automation starts none", async () => {
      const urgent = created(await d.asOwner("automation.create", {
        name: "urgent only",
        trigger: onCreated({ kind: "condition", id: "p", property: "priority", operator: "gte", value: 5 }),
        steps: [ping()],
        enabled: true
      })).automationId
      const disabled = created(await d.asOwner("automation.create", { name: "never enabled", trigger: onCreated(), steps: [ping()] })).automationId

      const calm = await newTicket({ title: "calm", priority: 2 })
      await endedRunOfNode(d, witness, calm)
      expect(await runsOfNode(d, urgent, calm)).toEqual([])
      expect(await runsOfNode(d, disabled, calm)).toEqual([])
      expect((await d.asOwner("automation.get", { automationId: disabled })).body.recentRuns).toEqual([])
    })

    it("node.updated with `changed`: a change of the watched property runs it, with the change and the node's properties; another change does not", async () => {
      const updatedWitness = created(await d.asOwner("automation.create", {
        name: "witness of updates",
        trigger: { type: "event", entityType: "Ticket", eventType: "node.updated" },
        steps: [ping()],
        enabled: true
      })).automationId
      const statusChanged = created(await d.asOwner("automation.create", {
        name: "status changed",
        trigger: { type: "event", entityType: "Ticket", eventType: "node.updated", conditions: { kind: "condition", id: "c", property: "status", operator: "changed" } },
        steps: [readTrigger],
        enabled: true
      })).automationId

      const ticket = await newTicket({ title: "to close" })
      created(await d.asKey("node.update", { nodeId: ticket, properties: { title: "renamed" } }))
      await until(() => runsOfNode(d, updatedWitness, ticket), (runs) => runs.length === 1 && ended(runs[0]))
      expect(await runsOfNode(d, statusChanged, ticket)).toEqual([])

      created(await d.asKey("node.update", { nodeId: ticket, properties: { status: "closed" } }))
      const run = await endedRunOfNode(d, statusChanged, ticket)
      expect(run).toMatchObject({
        status: "succeeded",
        trigger: { type: "event", eventType: "node.updated", nodeId: ticket, properties: { title: "renamed", status: "closed" }, changes: { status: expect.anything() } }
      })
      expect(Object.keys(run.trigger.changes)).toEqual(["status"])
      expect(run.steps[0].output).toMatchObject({ nodeId: ticket, properties: { status: "closed" } })
    })
  })

  describe("API triggers", () => {
    it("fires with a payload that placeholders carry into a step, whole values keeping their type", async () => {
      const automationId = created(await d.asOwner("automation.create", {
        name: "note from payload",
        trigger: { type: "api" },
        steps: [{ name: "write", stepType: "tool", config: { capability: "node.create", input: { label: "Note", properties: { title: "re: {{trigger.payload.subject}}", priority: "{{trigger.payload.priority}}" } } } }],
        enabled: true
      })).automationId
      const fired = await fire(d, automationId, { subject: "invoices", priority: 3 })
      expect(fired).toEqual({ runId: expect.stringMatching(/^arn_/), status: "running" })
      const run = await endedRun(d, fired.runId)
      expect(run).toMatchObject({ automationId, status: "succeeded", trigger: { type: "api", payload: { subject: "invoices", priority: 3 } } })
      const note = run.steps[0].output
      expect(note).toMatchObject({ label: "Note", properties: { title: "re: invoices", priority: 3 } })
      expect((await d.asKey("node.get", { nodeId: note.nodeId })).body.properties).toEqual({ title: "re: invoices", priority: 3 })
    })

    it("refuses a disabled automation (409 automation_disabled), an event automation (409 trigger_mismatch) and an unknown id (404 automation_not_found)", async () => {
      const disabled = created(await d.asOwner("automation.create", { name: "api, disabled", trigger: { type: "api" }, steps: [ping()] })).automationId
      expectError(await d.asOwner("automation.trigger", { automationId: disabled }), 409, "conflict", "automation_disabled")
      const onEvents = created(await d.asOwner("automation.create", { name: "events only", trigger: onCreated(), steps: [ping()], enabled: true })).automationId
      expectError(await d.asOwner("automation.trigger", { automationId: onEvents }), 409, "conflict", "trigger_mismatch")
      expectError(await d.asOwner("automation.trigger", { automationId: unknownAutomation }), 404, "not_found", "automation_not_found")
      for (const automationId of [disabled, onEvents]) expect((await d.asOwner("automation.get", { automationId })).body.recentRuns).toEqual([])
    })
  })

  describe("validation", () => {
    const condition = (property: string, operator: string, value?: unknown) => ({ kind: "condition", id: "c1", property, operator, ...(value === undefined ? {} : { value }) })
    const step = (name: string, stepType: string, config: unknown) => ({ name, stepType, config })

    /** Each refusal: the reason, and what part of a create breaks it (a trigger or steps). */
    const refusals: ReadonlyArray<readonly [string, { readonly trigger?: unknown; readonly steps?: unknown }]> = [
      ["unknown_label", { trigger: { type: "event", entityType: "Nope", eventType: "node.created" } }],
      ["unknown_property", { trigger: onCreated(condition("colour", "eq", "red")) }],
      ["operator_not_allowed", { trigger: onCreated(condition("title", "gt", "m")) }],
      ["invalid_enum_value", { trigger: onCreated(condition("status", "eq", "pending")) }],
      ["invalid_condition_value", { trigger: onCreated(condition("priority", "in", 3)) }],
      ["invalid_cron", { trigger: { type: "schedule", cronExpression: "every monday" } }],
      ["invalid_cron", { trigger: { type: "schedule", cronExpression: "61 * * * *" } }],
      ["invalid_timezone", { trigger: { type: "schedule", cronExpression: "0 9 * * 1", timezone: "Mars/Olympus_Mons" } }],
      ["unknown_capability", { steps: [step("x", "tool", { capability: "no.such_thing" })] }],
      // on no agent's surface: a playbook may not run it either
      ["unknown_capability", { steps: [step("x", "tool", { capability: "create_api_key" })] }],
      ["unknown_agent", { steps: [step("x", "agent", { agentSlug: "ghost" })] }],
      ["unknown_assignee", { steps: [step("x", "human_input", { prompt: "?", assignee: "usr_nobody" })] }],
      ["invalid_step_config", { steps: [step("x", "tool", { input: {} })] }],
      ["invalid_step_config", { steps: [step("x", "webhook", { url: "ftp://example.com/hook" })] }],
      ["invalid_step_config", { steps: [step("x", "tool", { capability: "system.ping", unknownField: 1 })] }],
      ["invalid_step_config", { steps: [ping("a"), step("b", "condition", { conditions: condition("trigger.payload.x", "exists"), else: "a" })] }],
      // headers the transport or a proxy writes (a declared length not the body's desynchronizes the receiver)
      ...["Content-Length", "Host", "transfer-encoding", "Connection", "X-Forwarded-For", "x-forwarded-host", "Forwarded"].map((name) =>
        ["invalid_step_config", { steps: [step("x", "webhook", { url: "https://example.com/hook", headers: { [name]: "2" } })] }] as const
      ),
      ["duplicate_step_name", { steps: [ping("same"), ping("same")] }],
      ["too_many_steps", { steps: Array.from({ length: 51 }, (_, i) => ping(`step ${i}`)) }]
    ]

    const listed = async () => (await d.asOwner("automation.list", { limit: 100 })).body.automations.map((a: any) => a.automationId)

    it("create refuses each with 400 bad_request and its reason, and creates nothing", async () => {
      const before = await listed()
      for (const [reason, part] of refusals) {
        const reply = await d.asOwner("automation.create", { name: `refused: ${reason}`, trigger: { type: "api" }, steps: [], enabled: true, ...part })
        expectError(reply, 400, "bad_request", reason)
      }
      // the workspace key (an AI) is refused alike
      expectError(await d.asKey("automation.create", { name: "refused", trigger: { type: "event", entityType: "Nope", eventType: "node.created" } }), 400, "bad_request", "unknown_label")
      expect(await listed()).toEqual(before)
    })

    it("update refuses each with 400 bad_request and its reason, and changes nothing", async () => {
      const original = created(await d.asOwner("automation.create", { name: "kept as it was", trigger: onCreated(), steps: [ping()], enabled: true }))
      const { webhookSecret: _, ...kept } = original
      for (const [reason, part] of refusals) expectError(await d.asOwner("automation.update", { automationId: original.automationId, name: "changed", ...part }), 400, "bad_request", reason)
      const { webhookSecret: __, recentRuns: ___, ...after } = (await d.asOwner("automation.get", { automationId: original.automationId })).body
      expect(after).toEqual(kept)
      expectError(await d.asOwner("automation.update", { automationId: unknownAutomation, name: "x" }), 404, "not_found", "automation_not_found")
    })
  })

  it("a webhook step's Content-Length is refused over MCP too, at create and at update", async () => {
    const desync = [{ name: "x", stepType: "webhook", config: { url: "https://example.com/hook", headers: { "Content-Length": "2" } } }]
    const rest = await d.asKey("automation.create", { name: "desync", trigger: { type: "api" }, steps: desync })
    expectError(rest, 400, "bad_request", "invalid_step_config")
    expect(rest.body.error.message).toMatch(/Content-Length/)
    expectMcpError(await overMcp(keyMcp, "automation.create", { name: "desync", trigger: { type: "api" }, steps: desync }), rest)
    const { automationId } = created(await d.asKey("automation.create", { name: "to desync", trigger: { type: "api" }, steps: [ping()] }))
    expectMcpError(await overMcp(keyMcp, "automation.update", { automationId, steps: desync }), rest)
    expect((await d.asOwner("automation.get", { automationId })).body.steps).toEqual([ping()])
  })

  it("the webhook signing secret: shown at creation to its creator, afterwards to Owners and Admins, not to a Member nor a key", async () => {
    const byKey = created(await d.asKey("automation.create", { name: "secret of a key's", trigger: { type: "api" } }))
    expect(byKey.webhookSecret).toMatch(/^whsec_/)
    const member = await addPerson(d.node, "member", { org: "member", workspace: "member" })
    const admin = await addPerson(d.node, "admin", { org: "member", workspace: "admin" })
    const place = `/v1/${d.node.bootstrap.orgSlug}/${d.node.bootstrap.workspaceSlug}/automation/get`
    const asPerson = async (person: Person) => callWithCookie(d.node.baseUrl, (await signIn(d.node.baseUrl, person)).cookie, place, { automationId: byKey.automationId })
    const byMember = await asPerson(member)
    expect(byMember.status).toBe(200)
    expect(byMember.body).not.toHaveProperty("webhookSecret")
    const byKeyLater = await d.asKey("automation.get", { automationId: byKey.automationId })
    expect(byKeyLater.status).toBe(200)
    expect(byKeyLater.body).not.toHaveProperty("webhookSecret")
    expect(mcpCreated(await overMcp(keyMcp, "automation.get", { automationId: byKey.automationId }))).not.toHaveProperty("webhookSecret")
    expect((await asPerson(admin)).body.webhookSecret).toBe(byKey.webhookSecret)
    expect((await d.asOwner("automation.get", { automationId: byKey.automationId })).body.webhookSecret).toBe(byKey.webhookSecret)
    expect(mcpCreated(await overMcp(ownerMcp, "automation.get", { automationId: byKey.automationId })).webhookSecret).toBe(byKey.webhookSecret)
  })

  it("an organization key neither lists nor reads automations: 403 forbidden (spec 5 rule 3)", async () => {
    const { automationId } = created(await d.asOwner("automation.create", { name: "not the org key's", trigger: { type: "api" } }))
    const orgKey = { key: d.node.bootstrap.orgKey }
    expectError(await call(d.node, "automation.list", {}, orgKey), 403, "forbidden", undefined)
    expectError(await call(d.node, "automation.get", { automationId }, orgKey), 403, "forbidden", undefined)
    expectError(await call(d.node, "automation.get_run", { runId: `arn_${"0".repeat(32)}` }, orgKey), 403, "forbidden", undefined)
  })

  describe("webhook steps without the outbound allow-list", () => {
    let receiver: WebhookReceiver
    beforeAll(async () => {
      receiver = await startWebhookReceiver()
    })
    afterAll(async () => receiver?.close())

    it("a webhook to localhost or 127.0.0.1 fails the run with outbound_refused at once, and nothing is received", async () => {
      for (const url of [`http://localhost:${receiver.port}/hook`, `http://127.0.0.1:${receiver.port}/hook`]) {
        const { automationId } = created(await d.asOwner("automation.create", {
          name: `hook to ${url}`,
          trigger: { type: "api" },
          steps: [{ name: "notify", stepType: "webhook", config: { url } }, ping("after")],
          enabled: true
        }))
        const run = await endedRun(d, (await fire(d, automationId)).runId)
        expect(run).toMatchObject({ status: "failed", error: { code: "outbound_refused", step: "notify", message: expect.stringContaining(url) } })
        // a refusal is not retried, and the run stops there
        expect(run.steps).toEqual([expect.objectContaining({ name: "notify", status: "failed", attempt: 1, error: expect.objectContaining({ code: "outbound_refused" }) })])
      }
      expect(receiver.deliveries).toEqual([])
    })
  })

  describe("human_input steps", () => {
    it("the run waits, its assignee is notified, a person's answer is the step's output and the run goes on", async () => {
      const { automationId } = created(await d.asOwner("automation.create", {
        name: "ask before shipping",
        trigger: { type: "api" },
        steps: [
          { name: "approve", stepType: "human_input", config: { prompt: "Ship {{trigger.payload.release}}?" } },
          { name: "record", stepType: "tool", config: { capability: "node.create", input: { label: "Note", properties: { title: "shipped: {{steps.approve.output.response.note}}" } } } }
        ],
        enabled: true
      }))
      const { runId } = await fire(d, automationId, { release: "v2" })
      const waiting = await until(() => d.asOwner("automation.get_run", { runId }), (reply) => reply.body.status === "waiting")
      expect(waiting.body.steps).toEqual([expect.objectContaining({ name: "approve", status: "waiting", input: expect.objectContaining({ prompt: "Ship v2?", assignee: d.owner.userId }) })])

      const notices = await until(() => d.asOwner("notifications.list", {}), (reply) => reply.body.notifications?.some((n: any) => n.subject.runId === runId))
      expect(notices.body.notifications.find((n: any) => n.subject.runId === runId)).toMatchObject({ kind: "run", body: "Ship v2?", resolvedAt: null, subject: { automationId, index: 0 } })

      // a key is no person: it may not answer, and the run still waits
      expectError(await d.asKey("automation.respond", { runId, response: { ship: true } }), 403, "forbidden", "session_required")
      expect((await d.asOwner("automation.get_run", { runId })).body.status).toBe("waiting")

      expect(created(await d.asOwner("automation.respond", { runId, response: { ship: true, note: "all good" } })).runId).toBe(runId)
      const run = await endedRun(d, runId)
      expect(run.status).toBe("succeeded")
      expect(run.steps.map((s: any) => [s.name, s.status])).toEqual([["approve", "succeeded"], ["record", "succeeded"]])
      expect(run.steps[0].output).toMatchObject({ response: { ship: true, note: "all good" } })
      expect(run.steps[1].output.properties).toEqual({ title: "shipped: all good" })

      // answered: the notice is resolved, and a second answer finds nothing waiting
      await until(() => d.asOwner("notifications.list", {}), (reply) => !reply.body.notifications.some((n: any) => n.subject.runId === runId))
      expectError(await d.asOwner("automation.respond", { runId, response: "again" }), 409, "conflict", "run_not_waiting")
    })
  })

  describe("playbooks", () => {
    it("a condition step goes on when it holds, jumps to its else when not, and without else ends the run", async () => {
      const { automationId } = created(await d.asOwner("automation.create", {
        name: "triage",
        trigger: { type: "api" },
        steps: [
          { name: "is bug", stepType: "condition", config: { conditions: { kind: "condition", id: "k", property: "trigger.payload.kind", operator: "eq", value: "bug" }, else: "feature" } },
          ping("bug"),
          ping("feature"),
          { name: "urgent only", stepType: "condition", config: { conditions: { kind: "condition", id: "u", property: "trigger.payload.urgent", operator: "eq", value: true } } },
          ping("page someone")
        ],
        enabled: true
      }))
      const timeline = async (payload: unknown) => {
        const run = await endedRun(d, (await fire(d, automationId, payload)).runId)
        expect(run.status).toBe("succeeded")
        return run.steps.map((s: any) => s.name)
      }
      expect(await timeline({ kind: "bug", urgent: true })).toEqual(["is bug", "bug", "feature", "urgent only", "page someone"])
      expect(await timeline({ kind: "feature", urgent: true })).toEqual(["is bug", "feature", "urgent only", "page someone"])
      expect(await timeline({ kind: "feature", urgent: false })).toEqual(["is bug", "feature", "urgent only"])
    })

    it("a failing tool step fails the run with the step's error, without retrying a 4xx", async () => {
      const { automationId } = created(await d.asOwner("automation.create", {
        name: "read a missing node",
        trigger: { type: "api" },
        steps: [{ name: "read", stepType: "tool", config: { capability: "node.get", input: { nodeId: "{{trigger.payload.nodeId}}" } } }, ping("after")],
        enabled: true
      }))
      const { runId } = await fire(d, automationId, { nodeId: "nod_missing" })
      const run = await endedRun(d, runId)
      expect(run).toMatchObject({ status: "failed", error: { code: "node_not_found", step: "read", message: expect.stringContaining("nod_missing") } })
      expect(run.steps).toEqual([expect.objectContaining({ name: "read", status: "failed", attempt: 1, error: { code: "node_not_found", message: run.error.message } })])

      // automation.get shows it among the recent runs: status, trigger, timeline, error
      const got = (await d.asOwner("automation.get", { automationId })).body
      expect(got.recentRuns).toEqual([expect.objectContaining({ runId, status: "failed", trigger: expect.objectContaining({ type: "api", payload: { nodeId: "nod_missing" } }), steps: run.steps, error: run.error, endedAt: expect.any(String) })])
    })

    it("agent and prompt steps are turns (on the built-in offline model), audited as ask_assistant on the playbook surface", async () => {
      const { automationId } = created(await d.asOwner("automation.create", {
        name: "two turns",
        trigger: { type: "api" },
        steps: [
          { name: "ask", stepType: "agent", config: { agentSlug: "assistant", prompt: "hello {{trigger.payload.name}}" } },
          { name: "summarise", stepType: "prompt", config: { prompt: "{{steps.ask.output.reply}} again", tier: "fast" } }
        ],
        enabled: true
      }))
      const run = await endedRun(d, (await fire(d, automationId, { name: "Ada" })).runId)
      expect(run.status, JSON.stringify(run)).toBe("succeeded")
      expect(run.steps.map((s: any) => [s.name, s.output.reply])).toEqual([
        ["ask", "You said: hello Ada"],
        ["summarise", "You said: You said: hello Ada again"]
      ])
      const audited = await until(
        () => d.asOwner("audit.list", { capability: "ask_assistant", surface: "playbook" }),
        (reply) => reply.body.entries?.length >= 2
      )
      expect(audited.body.entries.slice(0, 2).map((e: any) => [e.surface, e.outcome, e.userId])).toEqual([
        ["playbook", "succeeded", d.owner.userId],
        ["playbook", "succeeded", d.owner.userId]
      ])
    })

    it("a blank playbook's run succeeds at once", async () => {
      const { automationId } = created(await d.asOwner("automation.create", { name: "blank", trigger: { type: "api" }, enabled: true }))
      const fired = await fire(d, automationId)
      expect(fired.status).toBe("succeeded")
      expect((await d.asOwner("automation.get_run", { runId: fired.runId })).body).toMatchObject({ status: "succeeded", steps: [], error: null })
    })

    it("automation.get shows recent runs newest first; automation.list each one's latest", async () => {
      const { automationId } = created(await d.asOwner("automation.create", { name: "history", trigger: { type: "api" }, steps: [ping()], enabled: true }))
      const listedOne = async () => (await d.asOwner("automation.list", { limit: 100 })).body.automations.find((a: any) => a.automationId === automationId)
      expect((await listedOne()).lastRun).toBeNull()
      const first = (await fire(d, automationId, { n: 1 })).runId
      await endedRun(d, first)
      const second = (await fire(d, automationId, { n: 2 })).runId
      await endedRun(d, second)
      const runs = (await d.asOwner("automation.get", { automationId })).body.recentRuns
      expect(runs.map((r: any) => [r.runId, r.status, r.trigger.payload])).toEqual([[second, "succeeded", { n: 2 }], [first, "succeeded", { n: 1 }]])
      expect(runs[0].steps).toEqual([expect.objectContaining({ name: "ping", status: "succeeded", output: { pong: true }, startedAt: expect.any(String), endedAt: expect.any(String) })])
      expect((await listedOne()).lastRun).toEqual({ runId: second, status: "succeeded", createdAt: runs[0].createdAt, endedAt: runs[0].endedAt })
    })

    it("update replaces the trigger: an event automation becomes one fired over the API", async () => {
      const original = created(await d.asOwner("automation.create", { name: "was on events", trigger: onCreated(), steps: [ping()], enabled: true }))
      expectError(await d.asOwner("automation.trigger", { automationId: original.automationId }), 409, "conflict", "trigger_mismatch")
      const updated = created(await d.asOwner("automation.update", { automationId: original.automationId, name: "now on demand", trigger: { type: "api" } }))
      expect(updated).toMatchObject({ name: "now on demand", trigger: { type: "api" }, steps: original.steps, enabled: true, version: original.version + 1 })
      const run = await endedRun(d, (await fire(d, original.automationId, { via: "api" })).runId)
      expect(run).toMatchObject({ status: "succeeded", trigger: { type: "api", payload: { via: "api" } } })
    })

    it("delete removes it: not read, not listed, not fired", async () => {
      const { automationId } = created(await d.asOwner("automation.create", { name: "short-lived", trigger: { type: "api" }, enabled: true }))
      expect(await d.asOwner("automation.delete", { automationId })).toEqual({ status: 200, body: { automationId, deleted: true } })
      expectError(await d.asOwner("automation.get", { automationId }), 404, "not_found", "automation_not_found")
      expectError(await d.asOwner("automation.trigger", { automationId }), 404, "not_found", "automation_not_found")
      expect((await d.asOwner("automation.list", { limit: 100 })).body.automations.map((a: any) => a.automationId)).not.toContain(automationId)
    })
  })
})

describe("webhook steps with 127.0.0.1 on the outbound allow-list", () => {
  let d: Driver
  let receiver: WebhookReceiver
  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    d = await startDriver({ outboundAllow: parseOutboundAllow("127.0.0.1") })
  }, 60_000)
  afterAll(async () => {
    await d?.close()
    await receiver?.close()
  })

  it("the receiver gets the rendered body, signed with the automation's webhookSecret (Standard Webhooks)", async () => {
    const automation = created(await d.asOwner("automation.create", {
      name: "tell the receiver",
      trigger: { type: "api" },
      steps: [{ name: "notify", stepType: "webhook", config: { url: `${receiver.url}/hook`, body: { ticket: "{{trigger.payload.ticket}}", text: "ticket {{trigger.payload.ticket}} is in" } } }],
      enabled: true
    }))
    const { runId } = await fire(d, automation.automationId, { ticket: 42 })
    const run = await endedRun(d, runId)
    expect(run).toMatchObject({ status: "succeeded", steps: [expect.objectContaining({ name: "notify", status: "succeeded", output: { status: 200, body: { received: true } } })] })

    expect(receiver.deliveries).toHaveLength(1)
    const [delivery] = receiver.deliveries
    expect(delivery).toMatchObject({ method: "POST", path: "/hook" })
    expect(JSON.parse(delivery.body)).toEqual({ ticket: 42, text: "ticket 42 is in" })
    const verified = verifyWebhook({ headers: delivery.headers, body: delivery.body, secret: automation.webhookSecret, nowSeconds: Math.floor(Date.now() / 1000) })
    expect(verified).toMatchObject({ valid: true, id: `${runId}.0` })
    // another automation's secret does not verify it
    const other = created(await d.asOwner("automation.create", { name: "other", trigger: { type: "api" } }))
    expect(verifyWebhook({ headers: delivery.headers, body: delivery.body, secret: other.webhookSecret, nowSeconds: Math.floor(Date.now() / 1000) })).toEqual({ valid: false, reason: "bad_signature" })
  })
})
