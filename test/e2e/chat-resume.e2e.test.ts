/**
 * Resuming a chat stream over real HTTP with the built-in offline model (docs/chat.md, "Resuming
 * a stream"): every event carries `id:`, its place in the turn's stream; a client that drops its
 * stream mid-turn and comes back with `Last-Event-ID` gets every event it missed exactly once, in
 * order, then the rest as the turn goes on, to the same `done`; after the turn ended the same
 * route replays it to `done`. Another person's turn, or none, is 204.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postJson, resumeChat, type StreamedTurn, streamChat } from "../support/chat.ts"
import { addPerson, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

let node: TestNode

beforeAll(async () => {
  node = await startTestNode()
})
afterAll(async () => {
  await node?.stop()
})

/** A turn long and slow enough to drop mid-way: 60 words in 20 text chunks, 60 ms apart. */
const SLOW_TURN = "/long 60\n/slow 60"

/** The stream's events and `done`, each with its id, comments left out. */
const framed = (turn: StreamedTurn) =>
  turn.sequence.flatMap((item) => (item.kind === "comment" ? [] : [{ id: item.id, item: item.kind === "data" ? item.data : { done: item.data === "[DONE]" ? item.data : JSON.parse(item.data) } }]))

const textOf = (items: ReadonlyArray<{ readonly item: any }>) => items.map(({ item }) => (item.type === "text" ? item.text : "")).join("")

const chunkRows = async (runId: string) =>
  node.db.sql`select first_seq, last_seq from ${node.db.sql(node.db.schema)}.run_stream_chunks where run_id = ${runId} order by first_seq`

/** Streams a slow turn and drops it once `texts` text events arrived: what the client saw, by id. */
const dropMidTurn = async (texts: number) => {
  const seen: Array<{ id: string | undefined; item: any }> = []
  const abort = new AbortController()
  const streaming = streamChat(node, { content: SLOW_TURN }, {
    signal: abort.signal,
    onEvent: (event, id) => {
      seen.push({ id, item: event })
      if (seen.filter((s) => s.item.type === "text").length === texts) abort.abort()
    }
  })
  // the reader ends as the client drops the stream
  await streaming
  expect(abort.signal.aborted).toBe(true)
  return { seen: [...seen], runId: seen[0].item.runId as string }
}

/** What a client that saw `before` and then the resumed stream saw: one sequence, ids 1..n. */
const expectWhole = (before: ReadonlyArray<{ id: string | undefined; item: any }>, resumed: StreamedTurn) => {
  const whole = [...before, ...framed(resumed)]
  expect(whole.map((s) => s.id)).toEqual(whole.map((_, i) => String(i + 1)))
  const result = whole.at(-1)!.item.done
  expect(result).toBeDefined()
  expect(textOf(whole)).toBe(result.reply)
  expect(result.reply.split(" ")).toHaveLength(60)
  return result
}

describe("ids on the stream", () => {
  it("numbers every event, done included, 1..n in order", async () => {
    const turn = await streamChat(node, { content: "hello there" })
    const items = framed(turn)
    expect(items.map((s) => s.id)).toEqual(items.map((_, i) => String(i + 1)))
    expect(items[0].item.type).toBe("run")
    expect(items.at(-1)!.item.done).toBeDefined()
  })
})

describe("a stream dropped mid-turn", () => {
  it("resumes on the same node with Last-Event-ID: what was missed once, in order, then live to the same done", async () => {
    const { seen, runId } = await dropMidTurn(4)
    // still running as the client comes back: the resumed stream follows it live
    expect((await postJson(node, "assistant/reply", { runId })).body.runStatus).toBe("running")
    const resumed = await resumeChat(node, runId, seen.at(-1)!.id)
    expect(resumed.status).toBe(200)
    expect(resumed.headers.get("content-type")).toBe("text/event-stream")
    expect(resumed.events.filter((e) => e.type === "text").length).toBeGreaterThan(0)
    const result = expectWhole(seen, resumed)
    expect(result.runId).toBe(runId)
    const reply = await postJson(node, "assistant/reply", { runId })
    expect(reply.body).toEqual({ runStatus: "finished", reply: { text: result.reply } })
    // the turn's stream was recorded in a few chunks, not one event per delta
    const rows = await chunkRows(runId)
    const events = Number(framed(resumed).at(-1)!.id) - 1
    expect(rows.length).toBeGreaterThan(1)
    expect(rows.length).toBeLessThan(events / 3)
    expect(rows.at(-1)!.last_seq).toBe(events)
  })

  it("resumes after the turn ended: replays to done, from the id given or from the start", async () => {
    const { seen, runId } = await dropMidTurn(2)
    const reply = await postJson(node, "assistant/reply", { runId })
    // wait for the end, then resume
    for (let i = 0; i < 100 && (await postJson(node, "assistant/reply", { runId })).body.runStatus === "running"; i++) await new Promise((r) => setTimeout(r, 50))
    expect(reply.status).toBe(200)
    const resumed = await resumeChat(node, runId, seen.at(-1)!.id)
    expectWhole(seen, resumed)
    // from the start (no Last-Event-ID): the whole stream, as it was sent
    const replay = await resumeChat(node, runId, undefined)
    expect(framed(replay)).toEqual([...seen, ...framed(resumed)])
    // the query parameter does what the header does
    const fromQuery = await fetch(`${node.baseUrl}/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/chat/turns/${runId}/stream?lastEventId=${seen.at(-1)!.id}`, {
      headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}` }
    })
    expect(await fromQuery.text()).toContain(`id: ${Number(seen.at(-1)!.id) + 1}\n`)
  })

  it("replays a finished turn exactly as its stream sent it, by its turnId too; a failed one to its error and [DONE]", async () => {
    const turnId = randomUUID()
    const turn = await streamChat(node, { content: "hello there", turnId })
    expect(framed(await resumeChat(node, turnId, undefined))).toEqual(framed(turn))
    expect(framed(await resumeChat(node, turn.done.runId, "2"))).toEqual(framed(turn).slice(2))
    // the POST form, the turn and the id in the body
    const posted = await fetch(`${node.baseUrl}/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/chat/turns/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}`, "content-type": "application/json" },
      body: JSON.stringify({ turnId, lastEventId: framed(turn).length - 1 })
    })
    expect(posted.headers.get("content-type")).toBe("text/event-stream")
    expect(await posted.text()).toMatch(new RegExp(`^id: ${framed(turn).length}\nevent: done\n`))
    // a client that saw done is sent nothing more
    expect(framed(await resumeChat(node, turn.done.runId, framed(turn).at(-1)!.id))).toEqual([])

    const failed = await streamChat(node, { content: "/fail" })
    expect(failed.done).toBe("[DONE]")
    expect(framed(await resumeChat(node, failed.events[0].runId, "1"))).toEqual(framed(failed).slice(1))
  })
})

describe("who may resume", () => {
  it("answers 204 for a turn that does not exist and for another person's turn", async () => {
    expect((await resumeChat(node, `tse_${"0".repeat(32)}`, undefined)).status).toBe(204)
    const turn = await streamChat(node, { content: "mine" })
    const colleague = await addPerson(node, "resume-colleague", { org: "member", workspace: "member" })
    const { cookie } = await signIn(node.baseUrl, colleague)
    const foreign = await resumeChat(node, turn.done.runId, undefined, { cookie })
    expect(foreign.status).toBe(204)
    expect(foreign.events).toEqual([])
    // its person still can
    expect((await resumeChat(node, turn.done.runId, undefined)).status).toBe(200)
  })

  it("refuses a Last-Event-ID that is not an id of the stream", async () => {
    const turn = await streamChat(node, { content: "hi" })
    const refused = await resumeChat(node, turn.done.runId, "abc")
    expect(refused.status).toBe(400)
    expect(refused.body.error.reason).toBe("invalid_last_event_id")
  })
})
