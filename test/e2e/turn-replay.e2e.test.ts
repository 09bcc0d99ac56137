/**
 * A recorded turn replayed against its tape (docs/audit.md, "Replaying a turn"): turns with
 * reasoning, a tool call, a question answered and a call parked for approval, run against the local
 * chat-completions server, replay "identical" under the same code without a request to that
 * server; a deliberate change to a tool's decision (a capability that now parks its calls for
 * approval, or no longer does, registered for the test's replay alone) is reported as the first
 * divergence, at the step, tool call and field it lies in;
 * and `svc turn replay` prints the verdict and exits non-zero on a divergence.
 */
import { randomBytes } from "node:crypto"
import * as Envelope from "../../src/marketplace/Envelope.ts"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { registry } from "../../bin/App.ts"
import { loadRecordedTurn, type RecordedTurn, replayTurn } from "../../src/assistant/TurnReplay.ts"
import { Capabilities, makeRegistry, type Registry } from "../../src/checkpoint/Capability.ts"
import { Db } from "../../streams/Db.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { postJson, streamChat, waitForEvent } from "../support/chat.ts"
import { runCli } from "../support/cli.ts"
import { type OpenAiServer, startOpenAiServer } from "../support/openaiServer.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { addPerson, callWithCookie, signIn } from "../support/people.ts"
import { call } from "./client.ts"

let server: OpenAiServer
let node: TestNode

beforeAll(async () => {
  server = await startOpenAiServer()
  // with a master key: the tape is sealed under its person's key (actors/personal.ts), and opened to replay
  node = await startTestNode({
    authTokenEncryptionKey: randomBytes(32),
    assistant: { ...loadConfig({}).assistant, openaiBaseUrl: server.url, openaiApiKey: "sk-test", operatorTiers: { fast: "openai:gpt-4o-mini", balanced: "openai:gpt-5-test", precise: "openai:o3" } },
    outboundAllow: parseOutboundAllow("127.0.0.1")
  })
})

afterAll(async () => {
  await node?.stop()
  await server?.close()
})

const recordedTurn = (runId: string) =>
  Effect.runPromise(loadRecordedTurn(runId).pipe(Effect.provide(Envelope.layer(node.config.authTokenEncryptionKey)), Effect.provideService(Db, node.db), Effect.provideService(EventLog, node.log)))

/** A turn that calls system.ping, then answers with reasoning; its run as the log recorded it. */
const pingTurn = async (): Promise<RecordedTurn> => {
  server.script({ kind: "tool", name: "system__ping", arguments: "{ }" }, { kind: "text", text: "The workspace answered pong.", reasoning: "The ping answered. I report it." })
  const turn = await streamChat(node, { content: "is the workspace there?" })
  expect(turn.done).toMatchObject({ reply: "The workspace answered pong." })
  const recorded = await recordedTurn(turn.done.runId)
  if ("_tag" in recorded) throw new Error(`run ${turn.done.runId} not replayable: ${recorded._tag}`)
  return recorded
}

/** A turn that asks which node, is answered, and parks the node's deletion for approval, then answers. */
const askAndParkTurn = async (): Promise<RecordedTurn> => {
  server.script(
    { kind: "tool", name: "ask_user", arguments: { question: "Which node?", options: ["a", "b"] } },
    { kind: "tool", name: "node__delete", arguments: { nodeId: "nod_00000000000000000000000000000001" } },
    { kind: "text", text: "The deletion waits for your approval.", reasoning: "The person chose; the deletion needs approval." }
  )
  const events: Array<any> = []
  const streaming = streamChat(node, { content: "delete the node I pick" }, { onEvent: (e) => events.push(e) })
  const question = await waitForEvent(events, (e) => e.type === "question")
  expect((await postJson(node, "assistant/question/answer", { questionId: question.id, answer: "a" })).status).toBe(200)
  const turn = await streaming
  expect(turn.events.map((e) => e.type)).toEqual(expect.arrayContaining(["question-end", "approval-required"]))
  const recorded = await recordedTurn(turn.done.runId)
  if ("_tag" in recorded) throw new Error(`run ${turn.done.runId} not replayable: ${recorded._tag}`)
  return recorded
}

/** Replays under the node's capabilities, or under `capabilities`: the code as a test changed it. */
const replay = (recorded: RecordedTurn, capabilities: Registry = registry) => {
  const before = server.requests.length
  return Effect.runPromise(replayTurn(recorded).pipe(Effect.provideService(Capabilities, capabilities))).then((verdict) => ({ verdict, requests: server.requests.length - before }))
}

/** This build's capabilities with one capability's approval decision changed: a changed decider, in the test alone. */
const withApproval = (capability: string, needsApproval: boolean): Registry =>
  makeRegistry(registry.all.map((c) => (c.name === capability ? { ...c, needsApproval } : c)))

describe("the turn's tape", () => {
  it("holds the settings, the model's two calls, the tool's result and the clock's readings", async () => {
    const { tape } = await pingTurn()
    expect(tape.settings).toMatchObject({ model: "openai:gpt-5-test", tier: "balanced", goal: null, agent: null })
    expect(tape.settings.tools).toContainEqual({ toolName: "system__ping", capability: "system.ping" })
    expect(tape.input.system).toContain("You are the assistant")
    expect(tape.modelCalls.map((call) => call.kind)).toEqual(["stream", "stream"])
    expect(tape.toolCalls).toEqual([{ toolCallId: expect.stringMatching(/^call_\d+$/), toolName: "system__ping", input: {}, outcome: { output: { pong: true } } }])
    // the reasoning's start and end
    expect(tape.clock).toHaveLength(2)
  })

  it("costs a few kilobytes for a turn with a tool call (docs/performance.md)", async () => {
    const recorded = await pingTurn()
    const tapeBytes = Buffer.byteLength(JSON.stringify(recorded.tape))
    const streamBytes = Buffer.byteLength(JSON.stringify(recorded.streamed))
    if (process.env.TAPE_BYTES === "1") console.log(`tape ${tapeBytes} bytes, stream ${streamBytes} bytes, system prompt ${recorded.tape.input.system.length} chars`)
    expect(tapeBytes).toBeLessThan(16 * 1024)
  })
})

describe("replaying a turn", () => {
  it("under the same code: identical, and the model server sees no request", async () => {
    const recorded = await pingTurn()
    const { verdict, requests } = await replay(recorded)
    expect(verdict).toMatchObject({ identical: true, modelCalls: 2, toolCalls: 1 })
    expect(requests).toBe(0)
  })

  it("a turn that asks a question, has it answered, and parks a call for approval: identical, with no request", async () => {
    const recorded = await askAndParkTurn()
    expect(recorded.tape.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([
      ["ask_user", { output: { answer: "a" } }],
      ["node__delete", { output: expect.objectContaining({ parked: true }) }]
    ])
    const { verdict, requests } = await replay(recorded)
    expect(verdict).toMatchObject({ identical: true, modelCalls: 3, toolCalls: 2 })
    expect(requests).toBe(0)
  })

  it("a turn with a goal not met after its first round: its second round too replays identical, the goal's check answered from the tape", async () => {
    server.script(
      { kind: "text", text: "A first draft." },
      { kind: "text", text: '{"met": false, "reason": "the plan has no steps"}' },
      { kind: "text", text: "The plan, with its steps." }
    )
    const turn = await streamChat(node, { content: "write the plan", goal: { statement: "the plan has steps", maxRounds: 2 } })
    expect(turn.done).toMatchObject({ reply: "A first draft.The plan, with its steps." })
    const recorded = await recordedTurn(turn.done.runId)
    if ("_tag" in recorded) throw new Error(recorded._tag)
    expect(recorded.tape.settings.goal).toEqual({ statement: "the plan has steps", maxRounds: 2 })
    expect(recorded.tape.modelCalls.map((call) => call.kind)).toEqual(["stream", "generate", "stream"])
    const { verdict, requests } = await replay(recorded)
    expect(verdict).toMatchObject({ identical: true, modelCalls: 3, toolCalls: 0 })
    expect(requests).toBe(0)
  })

  it("after node.delete's decider stops parking its calls for approval: the divergence at step 1, that call, outcome.parked", async () => {
    const recorded = await askAndParkTurn()
    const deletion = recorded.tape.toolCalls[1]
    const { verdict, requests } = await replay(recorded, withApproval("node.delete", false))
    expect(verdict).toEqual({ identical: false, divergence: { step: 1, toolCallId: deletion.toolCallId, field: "outcome.parked", recorded: true, replayed: false } })
    expect(requests).toBe(0)
  })

  it("after system.ping's decider starts parking its calls for approval: the first divergence, at step 0, that call, outcome.parked", async () => {
    const recorded = await pingTurn()
    const [call] = recorded.tape.toolCalls
    const { verdict, requests } = await replay(recorded, withApproval("system.ping", true))
    expect(verdict).toEqual({ identical: false, divergence: { step: 0, toolCallId: call.toolCallId, field: "outcome.parked", recorded: false, replayed: true } })
    expect(requests).toBe(0)
  })

  it("a call whose input the SDK refused live (never run, so not on the tape) replays identical: the refusal is made again", async () => {
    server.script({ kind: "tool", name: "system__ping", arguments: "{not json" }, { kind: "text", text: "The ping could not be made." })
    const turn = await streamChat(node, { content: "ping it" })
    const recorded = await recordedTurn(turn.done.runId)
    if ("_tag" in recorded) throw new Error(recorded._tag)
    expect(recorded.tape.toolCalls).toEqual([])
    const { verdict, requests } = await replay(recorded)
    expect(verdict).toMatchObject({ identical: true, modelCalls: 2, toolCalls: 0 })
    expect(requests).toBe(0)
  })

  it("a tape that lost a tool's result: the call is reported as not on the tape, never made", async () => {
    const recorded = await pingTurn()
    const { verdict, requests } = await replay({ ...recorded, tape: { ...recorded.tape, toolCalls: [] } })
    expect(verdict).toMatchObject({ identical: false, divergence: { step: 0, field: "tool call not on the tape", replayed: { toolName: "system__ping", input: {} } } })
    expect(requests).toBe(0)
  })

  it("a recorded stream the code no longer produces: the first event that differs, in the step it lies in", async () => {
    const recorded = await pingTurn()
    // as if the turn had streamed another reply: the code, replayed, streams the tape's
    const streamed = recorded.streamed.map((s) => ((s.event as any).type === "text" ? { ...s, event: { ...(s.event as object), text: "other" } } : s))
    const { verdict } = await replay({ ...recorded, streamed })
    expect(verdict).toMatchObject({ identical: false, divergence: { step: 1, field: expect.stringMatching(/^event \d+\.text$/), recorded: { type: "text", text: "other" } } })
  })
})

describe("run.replay", () => {
  it("answers the verdict to an Owner over the API, and run_not_found for a run of no turn of the organization; a member is refused", async () => {
    const recorded = await pingTurn()
    const owner = await signIn(node.baseUrl, await addPerson(node, "auditor", { org: "owner" }))
    const asOwner = (input: unknown) => callWithCookie(node.baseUrl, owner.cookie, "/v1/acme/main/run/replay", input)
    expect((await call(node, "run.replay", { runId: recorded.runId })).status).toBe(403)
    const before = server.requests.length
    const replayed = await asOwner({ runId: recorded.runId })
    expect(replayed.status).toBe(200)
    expect(replayed.body).toEqual({ identical: true, modelCalls: 2, toolCalls: 1, events: expect.any(Number), divergence: null })
    expect(server.requests.length).toBe(before)
    const unknown = await asOwner({ runId: "tse_00000000000000000000000000000000" })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toMatchObject({ code: "not_found", reason: "run_not_found" })
  })
})

describe("svc turn replay", () => {
  const svc = (...args: ReadonlyArray<string>) => runCli(node, args)

  it("prints identical for a recorded turn, and refuses an unknown run with a non-zero exit", async () => {
    const recorded = await pingTurn()
    const before = server.requests.length
    const replayed = await svc("turn", "replay", recorded.runId)
    expect(replayed.stderr).toBe("")
    expect(replayed.stdout).toContain(`run ${recorded.runId}: identical (2 model calls, 1 tool calls`)
    expect(replayed.code).toBe(0)
    expect(server.requests.length).toBe(before)
    const unknown = await svc("turn", "replay", "run_00000000000000000000000000000000")
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain("no turn run_00000000000000000000000000000000")
  }, 60_000)

  it("--all --since replays every ended turn of the window and prints a summary; a time without its offset is refused", async () => {
    const since = new Date().toISOString()
    const first = await pingTurn()
    const second = await askAndParkTurn()
    const before = server.requests.length
    const replayed = await svc("turn", "replay", "--all", "--since", since)
    expect(replayed.stderr).toBe("")
    expect(replayed.stdout).toContain(`run ${first.runId}: identical`)
    expect(replayed.stdout).toContain(`run ${second.runId}: identical (3 model calls, 2 tool calls`)
    expect(replayed.stdout).toContain(`2 turns replayed since ${since}: 2 identical, 0 diverged or not replayable`)
    expect(replayed.code).toBe(0)
    expect(server.requests.length).toBe(before)
    const without = await svc("turn", "replay", "--all", "--since", "2026-11-28")
    expect(without.code).not.toBe(0)
    expect(without.stderr).toContain("--all --since <RFC 3339 time with its offset>")
  }, 60_000)
})
