/**
 * A chat stream resumed through the other process of a two-process Kafka cluster (docs/chat.md,
 * "Resuming a stream"): two real processes (`bin/main.ts`) on one Kafka cluster and one Postgres.
 * A slow turn runs on one process; its client drops the stream mid-turn and comes back to the
 * other with `Last-Event-ID`. That process reads what the turn recorded of its stream from the
 * log and follows the rest on its tail: every event once, in order, to the same `done`, and the
 * text is the turn's reply. After the turn ended, the same route there replays it whole. A turn
 * whose process was killed ends there as soon as that process counts as gone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postJson, resumeChat, type StreamedTurn, streamChat } from "../support/chat.ts"
import { type ClusterProcess, startTwoProcessCluster, type TwoProcessCluster, until } from "../support/cluster.ts"
import { kafkaBrokers } from "../support/env.ts"
import type { TestNode } from "../support/platform.ts"

const PARTITIONS = 6

/** The stream's events and `done`, each with its id, comments left out. */
const framed = (turn: StreamedTurn) =>
  turn.sequence.flatMap((item) => (item.kind === "comment" ? [] : [{ id: item.id, item: item.kind === "data" ? item.data : { done: item.data === "[DONE]" ? item.data : JSON.parse(item.data) } }]))

describe.skipIf(kafkaBrokers.length === 0)("resuming a chat stream on a two-process Kafka cluster", () => {
  let cluster: TwoProcessCluster | undefined
  // a process's report every second: one killed counts as gone after 3 s
  beforeAll(async () => {
    cluster = await startTwoProcessCluster({ partitions: PARTITIONS, dirPrefix: "svc-resume-cluster-", env: { CLUSTER_SAMPLE_MS: "1000" } })
  })
  afterAll(() => cluster?.stop())
  // what the chat client needs of a node: its address and the bootstrap's place and key
  const nodeOf = (p: ClusterProcess) => ({ baseUrl: p.baseUrl, bootstrap: cluster!.bootstrap }) as unknown as TestNode

  /** The events a client saw of a turn on `p` before it dropped the stream after the third text chunk. */
  const droppedAfterThreeChunks = async (p: ClusterProcess, content: string) => {
    const seen: Array<{ id: string | undefined; item: any }> = []
    const abort = new AbortController()
    await streamChat(nodeOf(p), { content }, {
      signal: abort.signal,
      onEvent: (event, id) => {
        seen.push({ id, item: event })
        if (seen.filter((s) => s.item.type === "text").length === 3) abort.abort()
      }
    })
    expect(abort.signal.aborted).toBe(true)
    return seen
  }

  it("a stream dropped mid-turn on one process resumes on the other, live and after the end", { timeout: 180_000 }, async () => {
    const { a, b } = cluster!
    // a slow turn on a: 90 words, 3 a chunk, 100 ms apart, take 3 s
    const seen = await droppedAfterThreeChunks(a, "/long 90\n/slow 100")
    const runId: string = seen[0].item.runId
    expect((await postJson(nodeOf(a), "assistant/reply", { runId })).body.runStatus).toBe("running")

    // b follows it from where the client left off, while it runs on a
    const resumed = await resumeChat(nodeOf(b), runId, seen.at(-1)!.id)
    expect(resumed.status).toBe(200)
    const after = framed(resumed)
    expect(after.filter(({ item }) => item.type === "text").length).toBeGreaterThan(3)
    const whole = [...seen, ...after]
    expect(whole.map((s) => s.id)).toEqual(whole.map((_, i) => String(i + 1)))
    const result = whole.at(-1)!.item.done
    expect(result).toMatchObject({ runId, stopped: false })
    expect(whole.map(({ item }) => (item.type === "text" ? item.text : "")).join("")).toBe(result.reply)
    expect(result.reply.split(" ")).toHaveLength(90)
    const reply = await until("the reply on a", async () => {
      const body = (await postJson(nodeOf(a), "assistant/reply", { runId })).body
      return body.runStatus === "finished" ? body : undefined
    }, 10_000)
    expect(reply.reply.text).toBe(result.reply)

    // after the end, b replays the whole stream as a sent it
    expect(framed(await resumeChat(nodeOf(b), runId, undefined))).toEqual(whole)
    // and a, from the id b's stream started after
    expect(framed(await resumeChat(nodeOf(a), runId, seen.at(-1)!.id))).toEqual(after)
    expect((await resumeChat(nodeOf(b), `tse_${"0".repeat(32)}`, undefined)).status).toBe(204)
  })

  it("a stream whose process was killed mid-turn ends on the other with engine_aborted once that process is gone", { timeout: 120_000 }, async () => {
    const { a, b } = cluster!
    // a turn of 60 s on a, its stream dropped after three chunks, then a killed
    const seen = await droppedAfterThreeChunks(a, "/long 1800\n/slow 100")
    const runId: string = seen[0].item.runId
    a.child.kill("SIGKILL")
    const killed = Date.now()
    const resumed = await resumeChat(nodeOf(b), runId, seen.at(-1)!.id)
    // a's report missed for 3 periods of CLUSTER_SAMPLE_MS, then b's sweep (every 5 s): long before the turn's minute
    console.log(`resume of a killed process's turn ended ${Date.now() - killed} ms after the kill`)
    expect(Date.now() - killed).toBeLessThan(30_000)
    // the end is not the turn's: it carries no id (a may have sent the client more than it recorded)
    expect(framed(resumed).slice(-2)).toEqual([
      { id: undefined, item: { type: "error", code: "engine_aborted", reason: "process_gone", message: "the process running this turn stopped before it ended" } },
      { id: undefined, item: { done: "[DONE]" } }
    ])
    const reply = (await postJson(nodeOf(b), "assistant/reply", { runId })).body
    expect(reply).toMatchObject({ runStatus: "failed" })
  })
})
