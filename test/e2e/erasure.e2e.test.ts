/**
 * Erasure by crypto-shredding (docs/audit.md): a person's messages, replies and streamed turns, the
 * calls their turns parked for approval and what an approved one answered, the questions their turns asked them and their answers,
 * their notes on approvals, their automation steps' failures, their A2A task's messages, response and failure, and their automation run's payload, step outputs, the
 * question a step asked them, the call it parked for their approval and their answer go to the log
 * sealed under their own data key; `person.erase` destroys the key and records the erasure.
 * Afterwards their words read as erased, no table, log event, log line or export holds them in
 * clear, the log still verifies and a replay rebuilds every read model the same, and another
 * person's conversation reads as before.
 */
import type { Message, Task } from "@a2a-js/sdk"
import { A2AClient } from "@a2a-js/sdk/client"
import { execFile } from "node:child_process"
import { randomBytes, randomUUID } from "node:crypto"
import { writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { personalValues } from "../../actors/personal.ts"
import { inputSha256 } from "../../src/audit/ApprovalReceipts.ts"
import { sealedKeyRef, sealedWithin } from "../../src/audit/PersonalData.ts"
import { resumeChat, streamChat, waitForEvent } from "../support/chat.ts"
import { comparedTables, runCli } from "../support/cli.ts"
import { addPerson, callWithCookie, cliLogin, type SignedInPerson, signedInPlace, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { findPlaintext } from "../support/secretScan.ts"
import { eventually, expectError, type Reply, send } from "./client.ts"

let node: TestNode
const lines: Array<string> = []
let alice: SignedInPerson
let bob: SignedInPerson
let carol: SignedInPerson
let ownerCookie: string
let as: (cookie: string, capability: string, input?: unknown) => Promise<Reply>

beforeAll(async () => {
  node = await startTestNode(
    { authTokenEncryptionKey: randomBytes(32), logging: { level: "debug", format: "json" } },
    { logSink: (line) => lines.push(line) }
  )
  const place = await signedInPlace(node, ["alice", "bob", "carol"])
  ;({ alice, bob, carol } = place.people)
  ownerCookie = place.ownerCookie
  as = place.as
}, 60_000)
afterAll(async () => node?.stop())

const ok = (reply: Reply) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

/** A turn read to its end; the offline model answers `You said: <content>`. */
const chat = async (cookie: string, content: string, conversationId?: string) => {
  const turn = await streamChat(node, { content, ...(conversationId === undefined ? {} : { conversationId }) }, { cookie })
  expect(turn.status).toBe(200)
  return turn.done as { readonly conversationPublicId: string; readonly runId: string; readonly reply: string }
}

const logEvents = async () =>
  node.db.sql`select key, type, payload from ${node.db.sql(`${node.config.dbSchema}_log`)}.log_events order by partition, "offset"`

/** An A2A client of the person's own key: the official SDK, speaking JSON-RPC to the card's URL. */
const a2aClientOf = async (key: string) =>
  A2AClient.fromCardUrl(`${node.baseUrl}/.well-known/agent-card.json`, {
    fetchImpl: (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set("authorization", `Bearer ${key}`)
      return fetch(input, { ...init, headers })
    }
  })

const textOf = (message: { readonly parts: ReadonlyArray<unknown> } | undefined) =>
  (message?.parts ?? []).map((part: any) => (part.kind === "text" ? part.text : "")).join("")

/** The person's automation, fired over the API with `text`: a prompt step asks the assistant it. */
const automationRun = async (person: SignedInPerson, text: string) => {
  const automation = ok(await as(person.cookie, "automation.create", {
    name: `ask for ${person.email}`,
    trigger: { type: "api" },
    steps: [{ name: "ask", stepType: "prompt", config: { prompt: "{{trigger.payload.text}}" } }],
    enabled: true
  }))
  const { runId } = ok(await as(person.cookie, "automation.trigger", { automationId: automation.automationId, payload: { text } }))
  const run = await eventually(() => as(person.cookie, "automation.get_run", { runId }), (r) => r.status === 200 && (r.body.status === "succeeded" || r.body.status === "failed"), 30_000)
  expect(run.body.status, JSON.stringify(run.body)).toBe("succeeded")
  return { automationId: automation.automationId as string, runId: runId as string }
}

/** The person's automation of one step that waits for them, fired over the API with `{ text }`; once it waits. */
const waitingRun = async (person: SignedInPerson, step: { readonly name: string; readonly stepType: string; readonly config: unknown }, text: string) => {
  const automation = ok(await as(person.cookie, "automation.create", { name: `${step.name} for ${person.email}`, trigger: { type: "api" }, steps: [step], enabled: true }))
  const { runId } = ok(await as(person.cookie, "automation.trigger", { automationId: automation.automationId, payload: { text } }))
  await eventually(() => as(person.cookie, "automation.get_run", { runId }), (r) => r.status === 200 && r.body.status === "waiting", 30_000)
  return runId as string
}

describe("person.erase", () => {
  it("leaves the person's words sealed and then unreadable, the log verifiable and replayable, and others' words as they were", async () => {
    const aliceWords = `alice-private-${randomUUID()}`
    const bobWords = `bob-private-${randomUUID()}`
    const first = await chat(alice.cookie, `first ${aliceWords}`)
    expect(first.reply).toContain(aliceWords)
    const second = await chat(alice.cookie, `again ${aliceWords}`, first.conversationPublicId)
    const bobs = await chat(bob.cookie, `hello ${bobWords}`)
    // an A2A task of hers, through the official client with her own key
    const a2a = await a2aClientOf(await cliLogin(node, alice))
    const sent = await a2a.sendMessage({ message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text: `task ${aliceWords}` }] } })
    expect("error" in sent ? sent.error : undefined).toBeUndefined()
    const task = (sent as { result: Task }).result
    expect(task.status.state).toBe("completed")
    expect(textOf(task.artifacts?.[0])).toBe(`You said: task ${aliceWords}`)
    const taskRead = async () => {
      const got = await a2a.getTask({ id: task.id })
      expect("error" in got ? got.error : undefined).toBeUndefined()
      return (got as { result: Task }).result
    }
    expect((await taskRead()).history?.map((m: Message) => [m.role, textOf(m)])).toEqual([["user", `task ${aliceWords}`], ["agent", `You said: task ${aliceWords}`]])
    // and an automation run of hers: its payload, and the reply its prompt step got
    const automated = await automationRun(alice, `automated ${aliceWords}`)
    const runBefore = ok(await as(alice.cookie, "automation.get_run", { runId: automated.runId }))
    expect(runBefore.trigger.payload).toEqual({ text: `automated ${aliceWords}` })
    expect(runBefore.steps[0].output.reply).toBe(`You said: automated ${aliceWords}`)

    // a run of hers that asked her a question quoting her words (in the run and in her notice), and her answer
    const askedRunId = await waitingRun(alice, { name: "confirm", stepType: "human_input", config: { prompt: "Is {{trigger.payload.text}} right?" } }, `confirm ${aliceWords}`)
    const question = `Is confirm ${aliceWords} right?`
    expect(ok(await as(alice.cookie, "automation.get_run", { runId: askedRunId })).steps[0].input.prompt).toBe(question)
    const notice = async () => (ok(await as(alice.cookie, "notifications.list", { all: true })).notifications as Array<any>).find((n) => n.subject?.runId === askedRunId)
    expect((await notice()).body).toBe(question)
    ok(await as(alice.cookie, "automation.respond", { runId: askedRunId, response: { note: `yes ${aliceWords}` } }))
    const answered = await eventually(() => as(alice.cookie, "automation.get_run", { runId: askedRunId }), (r) => r.status === 200 && r.body.status === "succeeded", 30_000)
    expect(answered.body.steps[0].output).toEqual({ response: { note: `yes ${aliceWords}` }, respondent: alice.userId })
    // a run of hers that parked a call, rendered from her words, for her approval; she denies it
    const parkedRunId = await waitingRun(alice, { name: "scrap", stepType: "tool", config: { capability: "node.delete", input: { nodeId: "{{trigger.payload.text}}" } } }, `scrap ${aliceWords}`)
    const parkedInput = { nodeId: `scrap ${aliceWords}` }
    expect(ok(await as(alice.cookie, "automation.get_run", { runId: parkedRunId })).steps[0].approval.input).toEqual(parkedInput)
    const parkedNotice = async () => (ok(await as(alice.cookie, "notifications.list", { all: true })).notifications as Array<any>).find((n) => n.subject?.runId === parkedRunId)
    expect((await parkedNotice()).body).toBe(`node.delete ${JSON.stringify(parkedInput)}`)
    // the receipt is over the input she saw, not its sealed form; her note says why, and the step's failure quotes it
    const runNote = `not ${aliceWords}`
    const denied = ok(await as(alice.cookie, "automation.resolve_approval", { runId: parkedRunId, decision: "denied", note: runNote }))
    expect(denied.receipt.inputSha256).toBe(inputSha256(parkedInput))
    const deniedRun = ok(await as(alice.cookie, "automation.get_run", { runId: parkedRunId }))
    expect(deniedRun.steps[0].approval.note).toBe(runNote)
    expect(deniedRun.steps[0].error.message).toBe(`node.delete was denied by the person the run acts for: ${runNote}`)
    expect(deniedRun.error.message).toBe(`node.delete was denied by the person the run acts for: ${runNote}`)
    // a run of hers whose step failed, its message quoting the input rendered from her words
    const failingRunId = await (async () => {
      const automation = ok(await as(alice.cookie, "automation.create", { name: "look up", trigger: { type: "api" }, steps: [{ name: "look", stepType: "tool", config: { capability: "node.get", input: { nodeId: "{{trigger.payload.text}}" } } }], enabled: true }))
      const { runId } = ok(await as(alice.cookie, "automation.trigger", { automationId: automation.automationId, payload: { text: `lost ${aliceWords}` } }))
      return runId as string
    })()
    const failedRun = await eventually(() => as(alice.cookie, "automation.get_run", { runId: failingRunId }), (r) => r.status === 200 && r.body.status === "failed", 30_000)
    expect(failedRun.body.steps.at(-1).error.message).toContain(`lost ${aliceWords}`)
    expect(failedRun.body.error.message).toContain(`lost ${aliceWords}`)
    // the organization's audit log shows the failure as the run does
    const failureEntry = async () =>
      (ok(await as(ownerCookie, "audit.list", { event: "automation_run.step_failed" })).entries as Array<any>).find((e) => e.detail?.runId === failingRunId)
    expect((await failureEntry()).detail.error.message).toContain(`lost ${aliceWords}`)
    // one she approves runs with the input she approved, opened from its sealed form
    ok(await as(ownerCookie, "schema.define_label", { label: "Scrap", properties: { title: { type: "string" } } }))
    const scrapped = ok(await as(alice.cookie, "node.create", { label: "Scrap", properties: { title: "to scrap" } })).nodeId as string
    const approvedRunId = await waitingRun(alice, { name: "scrap", stepType: "tool", config: { capability: "node.delete", input: { nodeId: "{{trigger.payload.text}}" } } }, scrapped)
    ok(await as(alice.cookie, "automation.resolve_approval", { runId: approvedRunId, decision: "approved" }))
    const approvedRun = await eventually(() => as(alice.cookie, "automation.get_run", { runId: approvedRunId }), (r) => r.status === 200 && (r.body.status === "succeeded" || r.body.status === "failed"), 30_000)
    expect(approvedRun.body.steps[0], JSON.stringify(approvedRun.body)).toMatchObject({ status: "succeeded", output: { nodeId: scrapped, deleted: true }, approval: { note: null } })
    // a turn of hers that parked a call quoting her words, which she denies, and one on a note of hers, which she approves
    const parkedCall = { nodeId: `nod ${aliceWords}` }
    const parkingTurn = await chat(alice.cookie, `/tool node__delete ${JSON.stringify(parkedCall)}`)
    const callEntry = async () => ok(await as(alice.cookie, "conversation.get", { conversationId: parkingTurn.conversationPublicId })).runs[0].approvals[0]
    const { approvalId: callId, inputPreview: callPreview } = await callEntry()
    expect(callPreview).toContain(aliceWords)
    expect((ok(await as(alice.cookie, "approval.list")).approvals as Array<any>).find((a) => a.approvalId === callId)?.inputPreview).toBe(callPreview)
    const callNote = `keep ${aliceWords}`
    const callDenied = ok(await as(alice.cookie, "agent.approvals.resolve", { approvalId: callId, decision: "denied", note: callNote }))
    expect(callDenied.receipt.inputSha256).toBe(inputSha256(parkedCall))
    expect(await callEntry()).toMatchObject({ status: "denied", note: callNote })
    const note = ok(await as(alice.cookie, "node.create", { label: "Scrap", properties: { title: "to scrap too" } })).nodeId as string
    const approvingTurn = await chat(alice.cookie, `/tool node__delete {"nodeId":"${note}"}`)
    const approvingId = ok(await as(alice.cookie, "conversation.get", { conversationId: approvingTurn.conversationPublicId })).runs[0].approvals[0].approvalId
    const approvedCall = ok(await as(alice.cookie, "agent.approvals.resolve", { approvalId: approvingId, decision: "approved" })).execution
    expect(approvedCall).toMatchObject({ status: "succeeded" })
    expectError(await as(alice.cookie, "node.get", { nodeId: note }), 404, "not_found", "node_not_found")
    // what the call answered, sealed in its run's end, reads opened
    const callOutput = async () => ok(await as(alice.cookie, "run.get", { runId: approvedCall.runId })).output
    expect(await callOutput()).toEqual({ nodeId: note, deleted: true })
    // a turn of hers that asks her a question quoting her words, which she answers in hers
    const asking: Array<any> = []
    const askingTurn = streamChat(node, { content: `/ask Which ${aliceWords}? | red ${aliceWords} | blue` }, { cookie: alice.cookie, onEvent: (e) => asking.push(e) })
    const asked = await waitForEvent(asking, (e) => e.type === "question")
    expect(asked).toMatchObject({ question: `Which ${aliceWords}?`, options: [`red ${aliceWords}`, "blue"] })
    expect(ok(await as(alice.cookie, "assistant.question.answer", { questionId: asked.id, answer: `mine ${aliceWords}` }))).toEqual({ found: true })
    const askedTurn = await askingTurn
    // the turn goes on with her answer opened
    expect(askedTurn.done.reply).toContain(`Tool ask_user returned: {"answer":"mine ${aliceWords}"}`)
    const askedQuestions = async () => ok(await as(alice.cookie, "run.get", { runId: askedTurn.done.runId })).questions
    expect(await askedQuestions()).toEqual([expect.objectContaining({ question: `Which ${aliceWords}?`, options: [`red ${aliceWords}`, "blue"], status: "answered", answer: `mine ${aliceWords}` })])
    // and an A2A task of hers whose turn failed: its status message says why
    const failing = await a2a.sendMessage({ message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text: `/fail\nfailing ${aliceWords}` }] } })
    expect("error" in failing ? failing.error : undefined).toBeUndefined()
    const failedTaskId = (failing as { result: Task }).result.id
    const failedRead = async () => {
      const got = await a2a.getTask({ id: failedTaskId })
      expect("error" in got ? got.error : undefined).toBeUndefined()
      return (got as { result: Task }).result
    }
    const failed = await failedRead()
    expect(failed.status.state).toBe("failed")
    expect(textOf(failed.status.message)).not.toBe("")

    // before the erasure: sealed in the log, opened on reading
    const before = ok(await as(alice.cookie, "conversation.get", { conversationId: first.conversationPublicId }))
    expect(before.messages.map((m: any) => [m.role, m.content, m.erased])).toEqual([
      ["user", `first ${aliceWords}`, false],
      ["assistant", `You said: first ${aliceWords}`, false],
      ["user", `again ${aliceWords}`, false],
      ["assistant", `You said: again ${aliceWords}`, false]
    ])
    expect(before.title).toBe(`first ${aliceWords}`)
    expect(ok(await as(alice.cookie, "assistant.reply", { runId: second.runId })).reply.text).toBe(`You said: again ${aliceWords}`)
    // the recorded stream, replayed from its start, opens too
    const replayedStream = await resumeChat(node, second.runId, undefined, { cookie: alice.cookie })
    expect(replayedStream.status).toBe(200)
    expect(JSON.stringify(replayedStream.events)).toContain(aliceWords)
    expect(replayedStream.done.reply).toBe(`You said: again ${aliceWords}`)
    // every declared personal value written by these turns is sealed (actors/personal.ts)
    const declared = (await logEvents()).flatMap((e) => personalValues(e.type, e.payload))
    expect(declared.length).toBeGreaterThan(8)
    // (an empty text holds no words: an approved call's run ends with the reply ""; a decision without a note has none;
    // a denial's failure, which the decider writes, quotes her sealed note among its words)
    const inClear = (value: unknown) => value !== "" && value !== null && sealedKeyRef(value) === undefined && !(typeof value === "string" && sealedWithin(value).length > 0)
    expect(declared.filter(inClear)).toEqual([])
    expect(await findPlaintext(node, [aliceWords, bobWords], lines)).toEqual([])

    // sealed as it left the log: the export carries the ciphertext
    const from = new Date(Date.now() - 10 * 60_000).toISOString()
    const exportNow = async () => ok(await as(ownerCookie, "audit.export", { from, to: new Date(Date.now() + 60_000).toISOString() })).jsonl as string
    expect(await exportNow()).toContain(`"pd1.`)

    // only an Owner erases someone else; a person erases themself
    expectError(await as(bob.cookie, "person.erase", { userId: alice.userId }), 403, "forbidden", "not_owner")
    expect(ok(await as(carol.cookie, "person.erase", { userId: carol.userId }))).toMatchObject({ userId: carol.userId, keysDestroyed: 0 })
    const erase = async (cookie: string, userId: string) => ok(await as(cookie, "person.erase", { userId }))
    const erased = await erase(ownerCookie, alice.userId)
    expect(erased).toMatchObject({ erasureId: expect.stringMatching(/^era_/), userId: alice.userId, keysDestroyed: 1 })

    // her words read as erased, on every read of them
    const after = ok(await as(alice.cookie, "conversation.get", { conversationId: first.conversationPublicId }))
    expect(after.messages.map((m: any) => [m.role, m.content, m.erased])).toEqual([
      ["user", "", true],
      ["assistant", "", true],
      ["user", "", true],
      ["assistant", "", true]
    ])
    expect(after.title).toBe("")
    const transcript = ok(await as(alice.cookie, "run.get", { runId: second.runId }))
    expect(transcript.userMessage).toMatchObject({ content: "", erased: true })
    expect(transcript.reply).toBe("")
    const reply = ok(await as(alice.cookie, "assistant.reply", { runId: second.runId }))
    expect(reply.reply.text).toBe("")
    const erasedStream = await resumeChat(node, second.runId, undefined, { cookie: alice.cookie })
    expect(erasedStream.status).toBe(200)
    expect(JSON.stringify(erasedStream.events)).not.toContain(aliceWords)
    expect(erasedStream.events.filter((e) => e.type === "text")).toEqual([])
    expect(erasedStream.done.reply).toBe("")
    // as of a moment before the erasure, too: the key is gone for every moment
    const asOf = ok(await as(alice.cookie, "conversation.get", { conversationId: first.conversationPublicId, asOf: new Date().toISOString() }))
    expect(asOf.messages.every((m: any) => m.erased && m.content === "")).toBe(true)

    // her task's messages and response, and her run's payload and output, read as erased
    const erasedTask = await taskRead()
    expect(erasedTask.status.state).toBe("completed")
    expect(erasedTask.history?.flatMap((m: Message) => m.parts)).toEqual([
      { kind: "text", text: "", metadata: { erased: true } },
      { kind: "text", text: "", metadata: { erased: true } }
    ])
    expect(erasedTask.artifacts?.[0].parts).toEqual([{ kind: "text", text: "", metadata: { erased: true } }])
    const runAfter = ok(await as(alice.cookie, "automation.get_run", { runId: automated.runId }))
    expect(runAfter).toMatchObject({ status: "succeeded", trigger: { type: "api", payload: null, erased: true } })
    expect(runAfter.steps[0]).toMatchObject({ name: "ask", status: "succeeded", output: null, erased: true })
    const listed = ok(await as(alice.cookie, "automation.get", { automationId: automated.automationId })).recentRuns
    expect(listed[0].steps[0]).toMatchObject({ output: null, erased: true })
    // the question her run asked, her notice of it and her answer; her failed task's reason
    const askedAfter = ok(await as(alice.cookie, "automation.get_run", { runId: askedRunId }))
    expect(askedAfter.steps[0]).toMatchObject({ status: "succeeded", input: { prompt: "" }, output: { response: null, respondent: alice.userId }, erased: true })
    expect((await notice()).body).toBe("")
    const deniedAfter = ok(await as(alice.cookie, "automation.get_run", { runId: parkedRunId }))
    expect(deniedAfter.steps[0]).toMatchObject({ approval: { input: null, decision: "denied", note: "" }, erased: true })
    // the denial's failure without her note
    expect(deniedAfter.steps[0].error.message).toBe("node.delete was denied by the person the run acts for:")
    expect(deniedAfter.error.message).toBe("node.delete was denied by the person the run acts for:")
    // her failed step's message, on the run and in the audit log
    const failedAfterErasure = ok(await as(alice.cookie, "automation.get_run", { runId: failingRunId }))
    expect(failedAfterErasure.steps.at(-1)).toMatchObject({ status: "failed", error: { message: "" }, erased: true })
    expect(failedAfterErasure.error.message).toBe("")
    expect((await failureEntry()).detail.error.message).toBe("")
    expect((await parkedNotice()).body).toBe("node.delete")
    expect(await callEntry()).toMatchObject({ inputPreview: "", status: "denied", note: "" })
    expect(await callOutput()).toBeNull()
    // the question her turn asked her, and her answer
    expect(await askedQuestions()).toEqual([expect.objectContaining({ question: "", options: [], status: "answered", answer: "" })])
    const failedAfter = await failedRead()
    expect(failedAfter.status.state).toBe("failed")
    expect(failedAfter.status.message?.parts).toEqual([{ kind: "text", text: "", metadata: { erased: true } }])

    // she may go on: a new key for what she writes next, the old words stay erased
    const later = await chat(alice.cookie, `later ${aliceWords}`)
    expect(ok(await as(alice.cookie, "conversation.get", { conversationId: later.conversationPublicId })).messages[0]).toMatchObject({ content: `later ${aliceWords}`, erased: false })
    expect(ok(await as(alice.cookie, "conversation.get", { conversationId: first.conversationPublicId })).messages[0]).toMatchObject({ content: "", erased: true })
    expectError(await as(ownerCookie, "person.erase", { userId: "usr_nobody" }), 404, "not_found", "person_not_found")
    await erase(ownerCookie, alice.userId)

    // Bob's conversation reads as before
    const bobThread = ok(await as(bob.cookie, "conversation.get", { conversationId: bobs.conversationPublicId }))
    expect(bobThread.messages.map((m: any) => [m.content, m.erased])).toEqual([[`hello ${bobWords}`, false], [`You said: hello ${bobWords}`, false]])

    // the erasure is on the log and in the organization's audit log
    const entries = ok(await as(ownerCookie, "audit.list", { event: "person.erased" })).entries
    expect(entries.map((e: any) => [e.userId, e.detail])).toContainEqual([alice.userId, { erasureId: erased.erasureId, keysDestroyed: 1 }])

    // no table, log event, log line or export holds her words (nor Bob's, sealed too); the export carries the erasure
    const exported = await exportNow()
    expect(exported).toContain(`"type":"person.erased"`)
    expect(await findPlaintext(node, [aliceWords, bobWords], lines, { export: exported })).toEqual([])

    // the chain covers the ciphertext: it still verifies
    const served = await send(node, "/.well-known/svc-audit-key")
    expect(served.status).toBe(200)
    const keyFile = path.join(node.config.dataDir, "erasure-audit-key.json")
    await writeFile(keyFile, JSON.stringify(served.body))
    const verified = await runCli(node, ["audit", "verify", "--key", keyFile])
    expect(verified.code, verified.stdout + verified.stderr).toBe(0)
    expect(verified.stdout).not.toContain("BROKEN")
    // and her approvals' receipts, exported with her calls' inputs sealed, verify offline (the signature; a sealed input's hash cannot be recomputed)
    const exportFile = path.join(node.config.dataDir, "erasure-export.jsonl")
    await writeFile(exportFile, exported)
    const receipts = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(process.execPath, ["scripts/verify-receipt.mjs", exportFile, keyFile], (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, out: stdout + stderr })))
    expect(receipts.code, receipts.out).toBe(0)
    expect(receipts.out).toContain(`verified: ${callId} denied by ${alice.userId}`)

    // a replay rebuilds every read model as the live ones stand
    const replayed = await runCli(node, ["replay", "--compare"], { timeoutMs: 120_000 })
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0)
    const tables = comparedTables(replayed.stdout)
    expect(tables.length).toBeGreaterThan(10)
    expect(tables.filter((line) => !line.startsWith("same"))).toEqual([])
  }, 180_000)

  it("is refused without a master key: nothing was sealed, so nothing can be shredded", async () => {
    const bare = await startTestNode()
    try {
      const owner = (await signIn(bare.baseUrl, { email: bare.bootstrap.ownerEmail!, password: bare.bootstrap.ownerPassword! })).cookie
      const person = await addPerson(bare, "dave", { org: "member", workspace: "member" })
      const path = `/v1/${bare.bootstrap.orgSlug}/${bare.bootstrap.workspaceSlug}/person/erase`
      const refused = await callWithCookie(bare.baseUrl, owner, path, { userId: person.userId })
      expectError(refused, 409, "conflict", "encryption_not_configured")
    } finally {
      await bare.stop()
    }
  }, 60_000)
})
