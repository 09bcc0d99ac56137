/**
 * The enable gate covers changes (issue 22, finding 1), on a real node over REST and MCP. An Owner's
 * session enables an `api` automation with a harmless step; the workspace key (a Member, which may
 * not call `agent.create` itself) rewrites it to call `agent.create` and fires it. The rewrite
 * disables it until a person enables it, its owner is told, and no agent is created. Enabled again,
 * a run acts with the rights of the person who enabled the current revision, and a step calling a
 * capability that needs approval parks it for that person, as chat does: the run waits, and makes
 * the call as them once they approve it, or fails with `approval_denied`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { connectMcp } from "../support/mcp.ts"
import { addPerson, type Person } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { asPerson, type Caller, ok, overMcp } from "../support/plugins.ts"
import { call, expectError, type Reply, sleep } from "./client.ts"

const APPROVAL_TTL_MS = 8_000

const ping = { name: "ping", stepType: "tool", config: { capability: "system.ping" } }
/** A step deleting the node the trigger's payload names: a call that needs approval. */
const scrap = { name: "scrap", stepType: "tool", config: { capability: "node.delete", input: { nodeId: "{{trigger.payload.nodeId}}" } } }
/** A step creating an agent: what the key may not do itself. */
const hire = (slug: string) => ({ name: "hire", stepType: "tool", config: { capability: "agent.create", input: { slug, name: `Hired as ${slug}` } } })

describe("the enable gate covers changes (issue 22)", () => {
  let node: TestNode
  let owner: Person
  let member: Person
  let asOwner: Caller
  let asMember: Caller
  let keyMcp: Client
  const asKey = (capability: string, input: unknown): Promise<Reply> => call(node, capability, input)

  beforeAll(async () => {
    // a parked call expires soon enough that a test can let one expire; the others answer at once
    node = await startTestNode({ assistant: { ...loadConfig({}).assistant, approvalTtlMs: APPROVAL_TTL_MS } })
    owner = await addPerson(node, "owner", { org: "owner" })
    member = await addPerson(node, "member", { org: "member", workspace: "member" })
    asOwner = await asPerson(node, owner)
    asMember = await asPerson(node, member)
    keyMcp = await connectMcp(node.baseUrl, node.bootstrap.workspaceKey, "svc-e2e-automation-gate")
  }, 60_000)

  afterAll(async () => {
    await keyMcp?.close()
    await node?.stop()
  })

  /** An enabled `api` automation of the Owner's, pinging. */
  const ownersAutomation = async (name: string) => {
    const automation = ok(await asOwner("automation.create", { name, trigger: { type: "api" }, steps: [ping], enabled: true }))
    expect(automation).toMatchObject({ enabled: true, origin: "human" })
    return automation.automationId as string
  }

  const noAgent = async (slug: string) => expectError(await asOwner("agent.get", { slug }), 404, "not_found", "agent_not_found")

  /** Fired: the run, once it ended, had one started (so that what it did is there to look for). */
  const settled = async <F extends Reply | { readonly refused: boolean; readonly body: any }>(fired: F): Promise<F> => {
    const started = "status" in fired ? fired.status === 200 : !fired.refused
    if (started) await endedRun(fired.body.runId)
    return fired
  }

  /** The run once it ended. */
  const endedRun = async (runId: string) => {
    for (let i = 0; i < 300; i++) {
      const run = ok(await asOwner("automation.get_run", { runId }))
      if (run.status === "succeeded" || run.status === "failed") return run
      await sleep(50)
    }
    throw new Error(`run ${runId} did not end`)
  }

  /** The run once it waits for a person. */
  const waitingRun = async (runId: string) => {
    for (let i = 0; i < 300; i++) {
      const run = ok(await asOwner("automation.get_run", { runId }))
      if (run.status === "waiting") return run
      if (run.status === "succeeded" || run.status === "failed") throw new Error(`run ${runId} ended ${run.status}, waiting for nobody`)
      await sleep(50)
    }
    throw new Error(`run ${runId} did not wait`)
  }

  /** The people the run's playbook events (in the audit log) name: whom it acted for. */
  const actedFor = async (runId: string) => {
    for (let i = 0; i < 100; i++) {
      const entries = ok(await asOwner("audit.list", { kind: "playbook", limit: 200 })).entries.filter((e: any) => e.detail?.runId === runId)
      if (entries.some((e: any) => e.event === "automation_run.succeeded" || e.event === "automation_run.failed")) return [...new Set(entries.map((e: any) => e.userId))]
      await sleep(50)
    }
    throw new Error(`run ${runId} has no end in the audit log`)
  }

  it("over REST: the key's rewrite answers enabled: false, its trigger is refused, and no agent is created", async () => {
    const automationId = await ownersAutomation("rewritten over REST")
    expectError(await asKey("agent.create", { slug: "by-key", name: "by key" }), 403, "forbidden", undefined)

    const rewritten = await asKey("automation.update", { automationId, steps: [hire("rest-rewrite")] })
    const fired = await settled(await asKey("automation.trigger", { automationId }))
    await noAgent("rest-rewrite")
    expect(ok(rewritten)).toMatchObject({ enabled: false, origin: "ai", steps: [hire("rest-rewrite")] })
    expectError(fired, 409, "conflict", "automation_disabled")
    expect(ok(await asOwner("automation.get", { automationId }))).toMatchObject({ enabled: false, origin: "ai", recentRuns: [] })
    // nor does the Owner's own call run what the key wrote
    expectError(await asOwner("automation.trigger", { automationId }), 409, "conflict", "automation_disabled")
  })

  it("over MCP: the key's rewrite answers enabled: false, its trigger is refused, and no agent is created", async () => {
    const automationId = await ownersAutomation("rewritten over MCP")
    const rewritten = await overMcp(keyMcp, "automation.update", { automationId, steps: [hire("mcp-rewrite")] })
    const fired = await settled(await overMcp(keyMcp, "automation.trigger", { automationId }))
    await noAgent("mcp-rewrite")
    expect(rewritten).toMatchObject({ refused: false, body: { enabled: false, origin: "ai" } })
    expect(fired).toMatchObject({ refused: true, body: { error: { code: "conflict", reason: "automation_disabled" } } })
    expect(ok(await asOwner("automation.get", { automationId })).recentRuns).toEqual([])
  })

  it("records each revision and who enabled it: the key's rewrite is a revision nobody enabled", async () => {
    const automationId = await ownersAutomation("revisions")
    expect(ok(await asOwner("automation.get", { automationId }))).toMatchObject({ revision: 1, enabledBy: owner.userId })
    expect(ok(await asKey("automation.update", { automationId, steps: [ping, { ...ping, name: "twice" }] }))).toMatchObject({ revision: 2, enabledBy: null })
    expect(ok(await asOwner("automation.enable", { automationId }))).toMatchObject({ revision: 2, enabledBy: owner.userId })
  })

  it("a rename by the key leaves it enabled: what runs did not change", async () => {
    const automationId = await ownersAutomation("renamed by the key")
    expect(ok(await asKey("automation.update", { automationId, name: "renamed" }))).toMatchObject({ enabled: true, revision: 1, enabledBy: owner.userId })
    expect((await endedRun(ok(await asKey("automation.trigger", { automationId })).runId)).status).toBe("succeeded")
  })

  it("the owner is told, with a link to the automation, and the audit log names the key that changed it", async () => {
    const automationId = await ownersAutomation("told about")
    ok(await asKey("automation.update", { automationId, trigger: { type: "api" }, steps: [ping, hire("told")] }))
    const { orgSlug, workspaceSlug } = node.bootstrap
    for (let i = 0; ; i++) {
      const notice = ok(await asOwner("notifications.list", {})).notifications.find((n: any) => n.subject?.automationId === automationId)
      if (notice !== undefined) {
        expect(notice).toMatchObject({ kind: "security", subject: { automationId, revision: 2 }, deepLink: `/${orgSlug}/${workspaceSlug}/automations/${automationId}`, resolvedAt: null })
        break
      }
      if (i > 100) throw new Error("the owner got no notice")
      await sleep(50)
    }
    const held = ok(await asOwner("audit.list", { kind: "security", event: "automation.held" })).entries.filter((e: any) => e.detail?.automationId === automationId)
    expect(held).toEqual([expect.objectContaining({ principalKind: "key", apiKeyId: expect.stringMatching(/^aky_/), detail: { automationId, revision: 2 } })])
  })

  it("enabled again by a person (a Member), a run acts as them: the step needing approval waits for them, and approved, runs with their rights: still no agent", async () => {
    const automationId = await ownersAutomation("enabled again")
    ok(await asKey("automation.update", { automationId, steps: [ping, hire("re-enabled")] }))
    expectError(await asKey("automation.enable", { automationId }), 403, "forbidden", "human_required")
    expect(ok(await asMember("automation.enable", { automationId }))).toMatchObject({ enabled: true })

    const { runId } = ok(await asMember("automation.trigger", { automationId }))
    expect((await waitingRun(runId)).steps[1]).toMatchObject({ name: "hire", status: "waiting", approval: { capability: "agent.create", approver: member.userId } })
    // the Owner, who wrote the first revision, answers for nobody's run but their own
    expectError(await asOwner("automation.resolve_approval", { runId, decision: "approved" }), 409, "conflict", "approval_expired")
    ok(await asMember("automation.resolve_approval", { runId, decision: "approved" }))
    const run = await endedRun(runId)
    await noAgent("re-enabled")
    expect(run).toMatchObject({ status: "failed", error: { code: "forbidden", step: "hire" } })
    expect(run.steps.map((s: any) => [s.name, s.status])).toEqual([["ping", "succeeded"], ["hire", "failed"]])
    expect(await actedFor(runId)).toEqual([member.userId])
  })

  describe("a step's call that needs approval parks for the person who enabled the automation", () => {
    let automationId: string
    const newNode = async () => ok(await asKey("node.create", { label: "Scrap", properties: { title: "to scrap" } })).nodeId as string

    beforeAll(async () => {
      ok(await asKey("schema.define_label", { label: "Scrap", properties: { title: { type: "string" } } }))
      automationId = ok(await asOwner("automation.create", { name: "scrapper", trigger: { type: "api" }, steps: [ping, scrap], enabled: true })).automationId
    })

    it("the run waits with the node still there; approved by the enabler, the node is deleted as them and the run succeeds", async () => {
      const nodeId = await newNode()
      const { runId } = ok(await asOwner("automation.trigger", { automationId, payload: { nodeId } }))

      const waiting = await waitingRun(runId)
      expect(waiting.steps.map((s: any) => [s.name, s.status])).toEqual([["ping", "succeeded"], ["scrap", "waiting"]])
      expect(waiting.steps[1].approval).toMatchObject({ capability: "node.delete", input: { nodeId }, approver: owner.userId, decision: null })
      expect((await asKey("node.get", { nodeId })).status).toBe(200)
      // told, as for a human_input step: a notice to the person the run acts for
      const notices = ok(await asOwner("notifications.list", {})).notifications.filter((n: any) => n.subject?.runId === runId)
      expect(notices).toEqual([expect.objectContaining({ kind: "run", title: "An automation waits for your approval: scrap", resolvedAt: null })])

      // a key does not approve for its person, and another person may not
      expectError(await asKey("automation.resolve_approval", { runId, decision: "approved" }), 403, "forbidden", "session_required")
      expectError(await asMember("automation.resolve_approval", { runId, decision: "approved" }), 409, "conflict", "approval_expired")
      expect((await asKey("node.get", { nodeId })).status).toBe(200)

      expect(ok(await asOwner("automation.resolve_approval", { runId, decision: "approved" }))).toMatchObject({ runId, status: "running", receipt: { decision: expect.any(String) } })
      const run = await endedRun(runId)
      expect(run.status).toBe("succeeded")
      expect(run.steps[1]).toMatchObject({ name: "scrap", attempt: 1, status: "succeeded", output: { nodeId, deleted: true }, approval: { decision: "approved" } })
      expectError(await asKey("node.get", { nodeId }), 404, "not_found", "node_not_found")
      expect(await actedFor(runId)).toEqual([owner.userId])
      expectError(await asOwner("automation.resolve_approval", { runId, decision: "approved" }), 409, "conflict", "run_not_waiting")
    })

    it("denied, the node stays and the run fails with approval_denied", async () => {
      const nodeId = await newNode()
      const { runId } = ok(await asOwner("automation.trigger", { automationId, payload: { nodeId } }))
      await waitingRun(runId)

      expect(ok(await asOwner("automation.resolve_approval", { runId, decision: "denied", note: "keep it" }))).toMatchObject({ runId, status: "failed", receipt: { decision: expect.any(String) } })
      const run = await endedRun(runId)
      expect(run).toMatchObject({ status: "failed", error: { code: "approval_denied", step: "scrap" } })
      expect(run.error.message).toContain("keep it")
      expect(run.steps[1]).toMatchObject({ name: "scrap", status: "failed", approval: { decision: "denied", note: "keep it" } })
      expect((await asKey("node.get", { nodeId })).status).toBe(200)
    })

    it("unanswered until it expires, the step fails with approval_expired and the node stays", async () => {
      const nodeId = await newNode()
      const { runId } = ok(await asOwner("automation.trigger", { automationId, payload: { nodeId } }))
      const { steps } = await waitingRun(runId)
      // the expiry is set when the step parks, a moment before the run records the request
      const ttl = Date.parse(steps[1].approval.expiresAt) - Date.parse(steps[1].approval.requestedAt)
      expect(ttl).toBeGreaterThan(APPROVAL_TTL_MS - 1_000)
      expect(ttl).toBeLessThanOrEqual(APPROVAL_TTL_MS)

      const run = await endedRun(runId)
      expect(run).toMatchObject({ status: "failed", error: { code: "approval_expired", step: "scrap" } })
      expectError(await asOwner("automation.resolve_approval", { runId, decision: "approved" }), 409, "conflict", "run_not_waiting")
      expect((await asKey("node.get", { nodeId })).status).toBe(200)
    })
  })

  it("a person's own rewrite keeps it enabled, and its runs act with that person's rights, not the earlier enabler's", async () => {
    const automationId = await ownersAutomation("rewritten by a Member")
    const rewritten = ok(await asMember("automation.update", { automationId, steps: [ping, { ...ping, name: "ping again" }] }))
    const { runId } = ok(await asOwner("automation.trigger", { automationId }))
    expect((await endedRun(runId)).status).toBe("succeeded")
    expect(await actedFor(runId)).toEqual([member.userId])
    expect(rewritten).toMatchObject({ enabled: true, origin: "human", revision: 2, enabledBy: member.userId })
  })
})
