/**
 * `svc log repartition` on the embedded log (Postgres tables): a node's log of 12 partitions, after
 * real writes through its API, rewritten into 48 with the node stopped. Every key's events are
 * on its new partition, complete and in order; `svc audit verify` goes across the boundary (and
 * fails when the old log is cut after it); `svc replay --compare` finds every table the same; a
 * node started with the old count refuses, and one with 48 serves what was written and goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connect, type DbService, service } from "../../streams/Db.ts"
import { databaseUrl } from "../support/env.ts"
import { until } from "../support/cluster.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { comparedTables, runCli } from "../support/cli.ts"
import { eventsByKey, expectEveryKeyMoved, writeEverything } from "../support/repartition.ts"


describe("svc log repartition on the embedded log, 12 partitions into 48", () => {
  let node: TestNode
  let restarted: TestNode | undefined
  let db: DbService
  let automationId: string
  beforeAll(async () => {
    node = await startTestNode({ partitions: 12 })
    try {
      ;({ automationId } = await writeEverything(node, 3))
      await node.host.awaitProjected(node.host.unprojected(), 10_000)
    } finally {
      await node.stop()
    }
    db = service(connect({ url: databaseUrl, schema: node.config.dbSchema }), node.config.dbSchema)
  }, 120_000)
  afterAll(async () => {
    await restarted?.stop()
    await db?.sql.end()
  })

  it("puts every key's events on its new partition, complete, in order, with their seq, each partition starting with a genesis record", async () => {
    const schema = node.config.dbSchema
    const before = await eventsByKey(node, db, { name: `${schema}_log`, partitions: 12 })
    const run = await runCli(node, ["log", "repartition", "--partitions", "48"], { partitions: 12, timeoutMs: 180_000 })
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" })
    const copied = Number(/^copied (\d+) events in \d+ ms \(\d+ events\/s\)/m.exec(run.stdout)?.[1])
    expect(run.stdout).toContain("start every node with LOG_PARTITIONS=48")
    expect(run.stdout).toContain(`drop table ${schema}_log.log_events, ${schema}_log.log_heads`)

    const after = await eventsByKey(node, db, { name: `${schema}_log_g2`, partitions: 48 })
    const events = expectEveryKeyMoved(before, after, 48)
    expect(events).toBeGreaterThan(150)
    expect(copied).toBe(events)
    // the old log was not written
    expect((await eventsByKey(node, db, { name: `${schema}_log`, partitions: 12 })).ends).toEqual(before.ends)
  }, 240_000)

  it("verifies across the boundary: the old chains, the genesis records naming their heads, the new chains", async () => {
    const { code, stdout, stderr } = await runCli(node, ["audit", "verify"], { partitions: 48, timeoutMs: 180_000 })
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    expect(stdout).toContain("log generation 1 (12 partitions")
    expect(stdout).toContain("log generation 2 (48 partitions")
    expect(stdout).toContain("every partition's genesis record names the 12 final heads of generation 1, signed")
    expect(stdout.split("\n").filter((line) => /^partition \d+: .*intact/.test(line))).toHaveLength(60)
  }, 120_000)

  it("replays the new log into read models the same as the live ones", async () => {
    const { code, stdout, stderr } = await runCli(node, ["replay", "--compare"], { partitions: 48, timeoutMs: 180_000 })
    // the tables first: a failure names the one that differs
    const tables = comparedTables(stdout)
    expect(tables.filter((line) => !line.startsWith("same"))).toEqual([])
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    expect(stdout).toContain("the live read models hold the whole log")
    expect(tables).toEqual(expect.arrayContaining(["same  nodes (24 rows)", "same  a2a_tasks (1 rows)", "same  projection_checkpoints (48 rows)"]))
  }, 180_000)

  it("refuses a node started with the old count; one started with 48 serves what was written and reacts to new writes", async () => {
    const same = { dbSchema: node.config.dbSchema, dataDir: node.config.dataDir }
    await expect(startTestNode({ ...same, partitions: 12 })).rejects.toThrow(/repartitioned into 48 partitions.*LOG_PARTITIONS=48/)
    restarted = await startTestNode({ ...same, partitions: 48 })
    expect(restarted.log.partitions).toBe(48)
    const { baseUrl, bootstrap: b } = restarted
    const listed = await fetch(`${baseUrl}/v1/${b.orgSlug}/${b.workspaceSlug}/node/list`, {
      method: "POST",
      headers: { authorization: `Bearer ${b.workspaceKey}`, "content-type": "application/json" },
      body: JSON.stringify({ label: "Ticket", limit: 100 })
    }).then((r) => r.json() as Promise<any>)
    expect(listed.nodes ?? listed.items).toHaveLength(24)
    const created = await fetch(`${baseUrl}/v1/${b.orgSlug}/${b.workspaceSlug}/node/create`, {
      method: "POST",
      headers: { authorization: `Bearer ${b.workspaceKey}`, "content-type": "application/json" },
      body: JSON.stringify({ label: "Ticket", properties: { title: "after the repartition" } })
    })
    expect(created.status).toBe(200)
    // each ticket fires the automation once: none lost across the boundary, none twice
    await until("a run for every ticket", async () => {
      const [{ runs }] = await db.sql`select count(*)::int as runs from ${db.table("automation_runs")} where automation_id = ${automationId}`
      return runs === 25 ? runs : undefined
    }, 30_000)
    const [{ runs }] = await db.sql`select count(*)::int as runs from ${db.table("automation_runs")} where automation_id = ${automationId}`
    expect(runs).toBe(25)
  }, 120_000)

  it("fails verification when the old log is cut short after the repartition, even with its chain and head kept consistent", async () => {
    await restarted?.stop()
    restarted = undefined
    const log = `${node.config.dbSchema}_log`
    // the last event of the fullest old partition removed, and its head moved back to the one before: the old chain alone still verifies
    const [{ partition }] = await db.sql.unsafe(`select partition from ${log}.log_heads order by next_offset desc limit 1`)
    const [last] = await db.sql.unsafe(`delete from ${log}.log_events where partition = $1 and "offset" = (select max("offset") from ${log}.log_events where partition = $1) returning prev_hash`, [partition])
    await db.sql.unsafe(`update ${log}.log_heads set next_offset = next_offset - 1, head_hash = $2 where partition = $1`, [partition, last.prev_hash])
    const { code, stdout, stderr } = await runCli(node, ["audit", "verify"], { partitions: 48, timeoutMs: 180_000 })
    expect(code).toBe(1)
    expect(stdout).toMatch(new RegExp(`^partition ${partition}: .*intact`, "m"))
    expect(stdout).toMatch(/BROKEN at offset 0 \(genesis_mismatch\)/)
    expect(stderr).toContain("the old log was altered or extended after the repartition")
  }, 120_000)
})
