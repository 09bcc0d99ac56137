/**
 * Two real processes (`bin/main.ts`, as `npm start` runs it) on one Kafka cluster and one
 * Postgres: partitions split between them, any process serves any request, and `kill -9` of one
 * moves its partitions to the other, which catches up and goes on. Afterwards, per key, the log
 * and the read models agree: nothing lost, nothing applied twice.
 */
import { Chunk, Effect, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { connect, service } from "../../streams/Db.ts"
import { allPartitions, readUpTo } from "../../streams/EventLog.ts"
import * as KafkaLog from "../../streams/KafkaLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { type ClusterProcess as Proc, health, startTwoProcessCluster, type TwoProcessCluster, until } from "../support/cluster.ts"
import { auditVerify } from "../support/cli.ts"
import { databaseUrl, kafkaBrokers } from "../support/env.ts"
import { call, writePositions } from "../support/http.ts"

const PARTITIONS = 6

describe.skipIf(kafkaBrokers.length === 0)("two processes on one Kafka cluster", () => {
  let cluster: TwoProcessCluster | undefined
  afterAll(() => cluster?.stop())

  it("routes to owners, survives kill -9, and keeps log and read models in agreement", { timeout: 240_000 }, async () => {
    cluster = await startTwoProcessCluster({ partitions: PARTITIONS, dirPrefix: "svc-cluster-" })
    const { a, b, schema, prefix, bootstrap: { orgSlug, workspaceSlug, workspaceKey } } = cluster
    // the client sends back where its writes are, so any process reads them
    const positions = writePositions()
    const invoke = async (p: Proc, name: string, input: unknown, idempotencyKey?: string) =>
      positions.note(await call(p.baseUrl, workspaceKey, `/v1/${orgSlug}/${workspaceSlug}/${name.replaceAll(".", "/")}`, input, {
        ...positions.headers(),
        ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {})
      }))

    // each process owns some partitions, together all of them
    const [ha, hb] = cluster.split
    expect([...ha.partitions.owned, ...hb.partitions.owned].sort()).toEqual(allPartitions(PARTITIONS))

    expect((await invoke(a, "schema.define_label", { label: "Item", properties: { n: { type: "number", required: true } } })).status).toBe(200)

    // requests alternate between the processes; node keys land on both processes' partitions
    const nodes: Array<{ nodeId: string; n: number }> = []
    for (let i = 0; i < 24; i++) {
      const created = await invoke(i % 2 === 0 ? a : b, "node.create", { label: "Item", properties: { n: 0 } })
      expect(created.status).toBe(200)
      nodes.push({ nodeId: created.body.nodeId, n: 0 })
    }
    // read-your-writes: a create is read at once, with no header through the process that took it,
    // and through the other process with the position the create's answer named
    const raw = (p: Proc, name: string, input: unknown, headers: Record<string, string> = {}) =>
      call(p.baseUrl, workspaceKey, `/v1/${orgSlug}/${workspaceSlug}/${name.replaceAll(".", "/")}`, input, headers)
    for (const [writer, reader] of [[a, a], [a, b], [b, a]] as const) {
      for (let i = 0; i < 5; i++) {
        const created = positions.note(await raw(writer, "node.create", { label: "Item", properties: { n: 100 + i } }, positions.headers()))
        expect(created.status).toBe(200)
        expect(created.position).toMatch(/^\d+:\d+(,\d+:\d+)*$/)
        const headers: Record<string, string> = writer === reader ? {} : { "svc-position": created.position! }
        const got = await raw(reader, "node.get", { nodeId: created.body.nodeId }, headers)
        expect(got).toMatchObject({ status: 200, body: { nodeId: created.body.nodeId, version: 1 } })
        const listed = await raw(reader, "node.list", { label: "Item", limit: 100 }, headers)
        expect(listed.status).toBe(200)
        expect(listed.body.nodes.map((x: { nodeId: string }) => x.nodeId)).toContain(created.body.nodeId)
        nodes.push({ nodeId: created.body.nodeId, n: 100 + i })
      }
    }
    expect((await raw(b, "node.list", { label: "Item" }, { "svc-position": "x:1" })).body).toMatchObject({ error: { reason: "invalid_position" } })

    const ownerOf = (nodeId: string) => partitionFor(`node:${nodeId}`, PARTITIONS)
    const onB = nodes.filter((x) => hb.partitions.owned.includes(ownerOf(x.nodeId)))
    const onA = nodes.filter((x) => ha.partitions.owned.includes(ownerOf(x.nodeId)))
    expect(onA.length).toBeGreaterThan(0)
    expect(onB.length).toBeGreaterThan(0)
    // a request to the process that does not own the key reaches the owner
    for (const x of [...onA.slice(0, 3)]) expect((await invoke(b, "node.update", { nodeId: x.nodeId, properties: { n: ++x.n } })).body.version).toBe(x.n + 1)
    for (const x of [...onB.slice(0, 3)]) expect((await invoke(a, "node.update", { nodeId: x.nodeId, properties: { n: ++x.n } })).body.version).toBe(x.n + 1)

    // an Idempotency-Key is bound to its first request whichever process takes the retry
    const keyed = { label: "Item", properties: { n: 7 } }
    const first = await invoke(a, "node.create", keyed, "keyed-create")
    expect(first.status).toBe(200)
    expect((await invoke(b, "node.create", { ...keyed, properties: { n: 8 } }, "keyed-create")).body).toMatchObject({ error: { reason: "idempotency_key_reused" } })
    expect(await invoke(b, "node.create", keyed, "keyed-create")).toMatchObject({ status: 200, body: first.body })
    nodes.push({ nodeId: first.body.nodeId, n: 7 })

    b.child.kill("SIGKILL")

    // a takes over b's partitions, catches up and goes on; requests keep their idempotency keys across retries
    const retrying = async (nodeId: string, n: number) =>
      until(`update of ${nodeId}`, async () => {
        const reply = await invoke(a, "node.update", { nodeId, properties: { n } }, `update-${nodeId}-${n}`)
        return reply.status === 200 ? reply : undefined
      })
    for (const x of nodes) {
      x.n += 1
      expect((await retrying(x.nodeId, x.n)).body.properties.n).toBe(x.n)
    }
    const after = await until("a to own every partition", async () => {
      const h = await health(a)
      return h.partitions.ready.length === PARTITIONS ? h : undefined
    })
    expect(after.partitions.owned).toEqual(allPartitions(PARTITIONS))
    // and after b's partitions moved to a
    expect((await invoke(a, "node.create", { ...keyed, properties: { n: 8 } }, "keyed-create")).status).toBe(422)

    // per key: the log's events (seq 1..n, each once) agree with the projected rows
    const log = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const kafka = yield* KafkaLog.make({ brokers: kafkaBrokers, prefix, partitions: PARTITIONS, clientId: "verify" })
          const ends = yield* kafka.endOffsets(allPartitions(PARTITIONS))
          return yield* readUpTo(kafka, new Map(allPartitions(PARTITIONS).map((p) => [p, 0])), ends).pipe(
            Stream.mapConcat((chunk) => chunk.events),
            Stream.runCollect,
            Effect.map(Chunk.toReadonlyArray)
          )
        })
      )
    )
    const db = service(connect({ url: databaseUrl, schema, max: 2 }), schema)
    try {
      const rows = await until("projections to catch up", async () => {
        const r = await db.sql`select node_id, version, properties from ${db.table("nodes")} order by node_id`
        const audits = await db.sql`select count(*)::int as n from ${db.table("audit_log")} where kind = 'capability'`
        const auditEvents = log.filter((e) => e.type === "capability.invoked").length
        return r.length === nodes.length && audits[0].n === auditEvents && r.every((row) => nodes.find((x) => x.nodeId === row.node_id)!.n === row.properties.n) ? r : undefined
      })
      const states = new Map((await db.sql`select key, seq from ${db.table("actor_state")} where kind = 'node'`).map((s) => [s.key, s.seq]))
      for (const x of nodes) {
        const key = `node:${x.nodeId}`
        const events = log.filter((e) => e.key === key)
        // what every reader applies: seq = last seq + 1; a stale owner's duplicate is ignored
        const applied: number[] = []
        for (const e of events) if (e.seq === applied.length + 1) applied.push(e.seq)
        const updates = events.filter((e) => e.type === "node.updated" && applied.includes(e.seq)).length
        const row = rows.find((r) => r.node_id === x.nodeId)!
        expect(row.version).toBe(1 + updates)
        expect(states.get(key)).toBe(applied.length)
        expect(row.properties.n).toBe(x.n)
        // every committed update of the test is in the log exactly once
        expect(new Set(events.filter((e) => e.type === "node.updated").map((e) => e.commandId)).size).toBe(updates)
      }
    } finally {
      await db.sql.end()
    }

    // the chain holds across the kill: the new owner went on from the last committed event's hash
    const audit = await auditVerify({ schema, prefix, partitions: PARTITIONS })
    expect(audit.code, audit.stdout + audit.stderr).toBe(0)
    expect(audit.stdout).not.toMatch(/from before the chain/)
  })
})
