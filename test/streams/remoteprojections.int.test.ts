/**
 * A wait for a position another node projects is settled by that node's projector: its commit
 * announces the checkpoint, and the waiting node, which listens, hears it. The waiting node reads
 * the checkpoint once when the wait begins (and once more after it had to listen again, again
 * only while Postgres cannot be reached), never in a loop.
 */
import { Effect, Exit, Scope } from "effect"
import postgres from "postgres"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { kindRegistry } from "../../actors/kernel.ts"
import { connect, type DbService, migrate, service } from "../../streams/Db.ts"
import * as RemoteProjections from "../../streams/host/RemoteProjections.ts"
import { applyBatch } from "../../streams/Projector.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("waits for a partition projected on another node", () => {
  const schema = uniqueName("t")
  const application = `remote-wait ${schema}`
  /** Every statement the waiting node sends, its LISTEN included. */
  const statements: Array<string> = []
  const checkpointReads = () => statements.filter((s) => s.includes("projection_checkpoints")).length
  const projectorSql = connect({ url: databaseUrl, schema, max: 2 })
  const projector: DbService = service(projectorSql, schema)
  const waitingSql = postgres(databaseUrl, {
    max: 2,
    onnotice: () => {},
    connection: { application_name: application },
    types: { bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) } },
    debug: (_connection, query) => void statements.push(query)
  })
  const scope = Effect.runSync(Scope.make())
  let remote: RemoteProjections.RemoteProjections

  /** Another node's projector commits `partition` up to `next`. */
  const projectTo = (partition: number, next: number) => applyBatch(projector, kindRegistry([]), [{ partition, events: [], next }], undefined, true)

  beforeAll(async () => {
    await Effect.runPromise(migrate(projectorSql, schema))
    remote = await Effect.runPromise(Scope.extend(RemoteProjections.make(service(waitingSql, schema), { listen: true }), scope))
  })
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await waitingSql.end({ timeout: 5 })
    await projectorSql.end({ timeout: 5 })
  })

  it("completes when the projection commits, after one read of the checkpoint and no loop", async () => {
    const waited = remote.wait(0, 5, 10_000)
    await sleep(300)
    const before = [...statements]
    expect(before.filter((s) => /^listen /i.test(s))).toHaveLength(1)
    expect(checkpointReads()).toBe(1)
    // a read every 10 ms would have read some 50 times by now
    await sleep(500)
    expect(statements).toEqual(before)

    await projectTo(0, 3)
    await sleep(100)
    // not there yet: it goes on waiting, still without a query
    expect(await Promise.race([waited, sleep(0).then(() => "waiting")])).toBe("waiting")
    const committed = Date.now()
    await projectTo(0, 6)
    expect(await waited).toBe(true)
    expect(Date.now() - committed).toBeLessThan(1_000)
    expect(statements).toEqual(before)
    expect(remote.applied(0)).toBe(6)
    // a position already heard of is answered at once, without a query
    expect(await remote.wait(0, 5, 1_000)).toBe(true)
    expect(statements).toEqual(before)
  })

  it("gives up at its bound when nothing is projected, with one read", async () => {
    const reads = checkpointReads()
    const started = Date.now()
    expect(await remote.wait(1, 100, 400)).toBe(false)
    expect(Date.now() - started).toBeGreaterThanOrEqual(390)
    expect(checkpointReads()).toBe(reads + 1)
  })

  it("listens again after its connection is lost, reading the awaited checkpoints once more", async () => {
    const waited = remote.wait(2, 3, 15_000)
    await sleep(200)
    const reads = checkpointReads()
    const listens = statements.filter((s) => /^listen /i.test(s)).length
    // what a Postgres restart does to the waiting node's connections
    await projectorSql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${application}`
    // committed while the waiting node may not listen: the read after it listens again finds it
    await projectTo(2, 2)
    for (let i = 0; i < 50 && statements.filter((s) => /^listen /i.test(s)).length === listens; i++) await sleep(100)
    expect(statements.filter((s) => /^listen /i.test(s))).toHaveLength(listens + 1)
    // the read may meet a connection the termination took too, and try again
    for (let i = 0; i < 50 && remote.applied(2) !== 2; i++) await sleep(100)
    expect(remote.applied(2)).toBe(2)
    const reread = checkpointReads()
    expect(reread).toBeGreaterThan(reads)
    // once found, no more reads: the rest is heard
    await sleep(300)
    expect(checkpointReads()).toBe(reread)
    const committed = Date.now()
    await projectTo(2, 4)
    expect(await waited).toBe(true)
    expect(Date.now() - committed).toBeLessThan(1_000)
  })
})
