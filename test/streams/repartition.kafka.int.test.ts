/**
 * `svc log repartition` on Kafka: a cluster's topics of 12 partitions, after real writes through a
 * node's API, rewritten into topics of 48 with every node stopped. Every key's events are on its
 * new partition, complete and in order; `svc audit verify` goes across the boundary; `svc replay
 * --compare` finds every table the same; a node started with the old count refuses, and three
 * nodes started with 48 split the partitions, serve what was written and go on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connect, type DbService, service } from "../../streams/Db.ts"
import { until } from "../support/cluster.ts"
import { databaseUrl, kafkaBrokers, uniqueName } from "../support/env.ts"
import { capability } from "../support/http.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { comparedTables, runCli } from "../support/cli.ts"
import { eventsByKey, expectEveryKeyMoved, writeEverything } from "../support/repartition.ts"


describe.skipIf(kafkaBrokers.length === 0)("svc log repartition on Kafka, 12 partitions into 48", () => {
  const shared = { dbSchema: uniqueName("t"), kafkaBrokers, topicPrefix: uniqueName("t"), kafkaSessionTimeoutMs: 3_000 }
  let node: TestNode
  const nodes: Array<TestNode> = []
  let db: DbService
  let automationId: string
  beforeAll(async () => {
    node = await startTestNode({ ...shared, partitions: 12, nodeId: "rp-a" })
    try {
      ;({ automationId } = await writeEverything(node, 2))
      await node.host.awaitProjected(node.host.unprojected(), 10_000)
    } finally {
      await node.stop()
    }
    db = service(connect({ url: databaseUrl, schema: shared.dbSchema }), shared.dbSchema)
  }, 180_000)
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()))
    await db?.sql.end()
  })

  it("puts every key's events on its new partition of the new topics, complete, in order, with their seq", async () => {
    const before = await eventsByKey(node, db, { name: shared.topicPrefix, partitions: 12 })
    const run = await runCli(node, ["log", "repartition", "--partitions", "48"], { partitions: 12, timeoutMs: 180_000 })
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" })
    const copied = Number(/^copied (\d+) events in \d+ ms \(\d+ events\/s\)/m.exec(run.stdout)?.[1])
    expect(run.stdout).toContain(`delete the topics ${shared.topicPrefix}.events and ${shared.topicPrefix}.commands`)

    const after = await eventsByKey(node, db, { name: `${shared.topicPrefix}.g2`, partitions: 48 })
    const events = expectEveryKeyMoved(before, after, 48)
    expect(events).toBeGreaterThan(100)
    expect(copied).toBe(events)
    expect((await eventsByKey(node, db, { name: shared.topicPrefix, partitions: 12 })).ends).toEqual(before.ends)
  }, 300_000)

  it("verifies across the boundary, and replays the new log into read models the same as the live ones", async () => {
    const verified = await runCli(node, ["audit", "verify"], { partitions: 48, timeoutMs: 180_000 })
    expect({ code: verified.code, stderr: verified.stderr }).toEqual({ code: 0, stderr: "" })
    expect(verified.stdout).toContain("every partition's genesis record names the 12 final heads of generation 1, signed")
    expect(verified.stdout.split("\n").filter((line) => /^partition \d+: .*intact/.test(line))).toHaveLength(60)

    const replayed = await runCli(node, ["replay", "--compare"], { partitions: 48, timeoutMs: 180_000 })
    // the tables first: a failure names the one that differs
    const tables = comparedTables(replayed.stdout)
    expect(tables.filter((line) => !line.startsWith("same"))).toEqual([])
    expect({ code: replayed.code, stderr: replayed.stderr }).toEqual({ code: 0, stderr: "" })
    expect(replayed.stdout).toContain("the live read models hold the whole log")
    expect(tables).toEqual(expect.arrayContaining(["same  nodes (16 rows)", "same  a2a_tasks (1 rows)", "same  projection_checkpoints (48 rows)"]))
  }, 300_000)

  it("refuses a node started with the old count; three nodes started with 48 split the partitions, serve what was written and react to new writes", async () => {
    const same = { ...shared, dataDir: node.config.dataDir }
    await expect(startTestNode({ ...same, partitions: 12, nodeId: "rp-old" })).rejects.toThrow(/repartitioned into 48 partitions.*LOG_PARTITIONS=48/)
    for (const name of ["rp-x", "rp-y", "rp-z"]) nodes.push(await startTestNode({ ...same, partitions: 48, nodeId: name }))
    await until("three nodes sharing the 48 partitions", async () => {
      const ready = nodes.map((n) => n.host.ownership().ready)
      const all = new Set(ready.flat())
      return ready.every((r) => r.length > 0) && all.size === 48 && ready.flat().length === 48 ? true : undefined
    }, 60_000)
    for (const [i, n] of nodes.entries()) {
      expect(n.log.partitions).toBe(48)
      const invoke = capability(n.baseUrl, n.bootstrap.workspaceKey, n.bootstrap.orgSlug, n.bootstrap.workspaceSlug)
      const listed = await invoke("node.list", { label: "Ticket", limit: 100 })
      expect(listed.status).toBe(200)
      expect(listed.body.nodes.length).toBeGreaterThanOrEqual(16)
      expect((await invoke("node.create", { label: "Ticket", properties: { title: `after the repartition, through ${i}` } })).status).toBe(200)
    }
    // each ticket fires the automation once: none lost across the boundary, none twice
    const runs = async () => (await db.sql`select count(*)::int as runs from ${db.table("automation_runs")} where automation_id = ${automationId}`)[0].runs as number
    await until("a run for every ticket", async () => ((await runs()) === 19 ? true : undefined), 60_000)
    expect(await runs()).toBe(19)
  }, 300_000)
})
