/**
 * What the repartition suites share: real writes through a node's API (keys, nodes, conversations,
 * A2A tasks, automations), every key's events of a log generation read back, and the operator CLI
 * run with the log's environment (test/support/cli.ts).
 */
import { Chunk, Effect, Layer, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { generationLogLayer } from "../../bin/App.ts"
import { isCheckpoint, isGenesis } from "../../streams/Checkpoints.ts"
import { Db, type DbService } from "../../streams/Db.ts"
import { allPartitions, EventLog, type LoggedEvent, readUpTo } from "../../streams/EventLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { streamChat } from "./chat.ts"
import { call, capability } from "./http.ts"
import { callWithCookie, signIn } from "./people.ts"
import type { TestNode } from "./platform.ts"

/** Writes of every kind through the node's API; the automation it creates watches new `Ticket` nodes. */
export const writeEverything = async (node: TestNode, rounds: number) => {
  const { baseUrl, bootstrap: b } = node
  const invoke = capability(baseUrl, b.workspaceKey, b.orgSlug, b.workspaceSlug)
  const ok = (reply: { status: number; body: unknown }) => {
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    return reply.body as any
  }
  ok(await invoke("schema.define_label", { label: "Ticket", properties: { title: { type: "string", required: true }, n: { type: "number" } } }))
  const session = await signIn(baseUrl, { email: b.ownerEmail, password: b.ownerPassword! })
  const asOwner = async (route: string, input: unknown) => ok(await callWithCookie(baseUrl, session.cookie, `/v1/${b.orgSlug}/${b.workspaceSlug}/${route}`, input))
  const automation = await asOwner("automation/create", {
    name: "on a new ticket",
    trigger: { type: "event", entityType: "Ticket", eventType: "node.created" },
    steps: [],
    enabled: true
  })
  for (let round = 0; round < rounds; round++) {
    const created = await Promise.all(Array.from({ length: 8 }, (_, i) => invoke("node.create", { label: "Ticket", properties: { title: `ticket ${round}.${i}`, n: i } })))
    await Promise.all(created.map((r, i) => invoke("node.update", { nodeId: ok(r).nodeId, properties: { n: i + 100 } })))
    await asOwner("create_api_key", { name: `key ${round}` })
  }
  for (const content of ["hello there", "remember the word teal"]) expect((await streamChat(node, { content })).done.reply).toContain(content)
  const parts = [{ kind: "text", text: "hello agent" }]
  const sent = await call(baseUrl, b.workspaceKey, "/a2a", { jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { kind: "message", role: "user", messageId: randomUUID(), parts } } })
  expect(sent.body.result.status.state).toBe("completed")
  return { automationId: automation.automationId as string, invoke, asOwner }
}

/** Every event of one generation of the node's log (read whole, to its end), by key in log order; and the records of no key (checkpoints, genesis). */
export const eventsByKey = (node: TestNode, db: DbService, generation: { readonly name: string; readonly partitions: number }) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const log = yield* EventLog
      const ends = yield* log.endOffsets(allPartitions(log.partitions))
      const events = yield* readUpTo(log, new Map(allPartitions(log.partitions).map((p) => [p, 0])), ends).pipe(
        Stream.mapConcat((chunk) => chunk.events),
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray)
      )
      const byKey = new Map<string, Array<LoggedEvent>>()
      const records: Array<LoggedEvent> = []
      for (const event of [...events].sort((a, b) => a.partition - b.partition || a.offset - b.offset)) {
        if (isCheckpoint(event) || isGenesis(event)) {
          records.push(event)
          continue
        }
        byKey.set(event.key, [...(byKey.get(event.key) ?? []), event])
      }
      return { byKey, records, ends }
    }).pipe(
      Effect.scoped,
      Effect.provide(generationLogLayer(node.config, generation).pipe(Layer.provide(Layer.succeed(Db, db)))),
      Effect.timeout("120 seconds")
    )
  )

/** What a key's event is, wherever it lies: what a reader of the key sees. */
const contentOf = ({ key, seq, firstSeq, type, payload, at, commandId, actor }: LoggedEvent) => ({ key, seq, firstSeq, type, payload, at, commandId, actor })

type Generation = Awaited<ReturnType<typeof eventsByKey>>

/**
 * The new generation holds every key's events of the old, complete, in order, as a reader of the
 * key sees them, each key wholly on its partition of `partitions`, and each partition opens with
 * its genesis record. Returns how many events were copied.
 */
export const expectEveryKeyMoved = (before: Generation, after: Generation, partitions: number) => {
  const events = [...before.byKey.values()].reduce((n, e) => n + e.length, 0)
  expect([...after.byKey.keys()].sort()).toEqual([...before.byKey.keys()].sort())
  for (const [key, old] of before.byKey) {
    const moved = after.byKey.get(key)!
    expect(moved.map(contentOf), key).toEqual(old.map(contentOf))
    expect(new Set(moved.map((e) => e.partition)), key).toEqual(new Set([partitionFor(key, partitions)]))
  }
  expect(after.records.filter(isGenesis).map((e) => [e.partition, e.offset])).toEqual(Array.from({ length: partitions }, (_, p) => [p, 0]))
  return events
}
