/**
 * The node's pool (streams/Db.ts `connect`, with its reconnect backoff) while Postgres terminates
 * its backends again and again: each query answers or fails once the terminations stop, within
 * seconds (a query whose connection is terminated as it opens tries again for as long as they go
 * on), and the pool serves again. postgres.js 3.4.9 left a closed connection's
 * write timer armed, so a connection reopened after a termination never sent its startup message
 * and every query queued on it waited 30 s for CONNECT_TIMEOUT (patched in patches/).
 */
import postgres from "postgres"
import { afterAll, describe, expect, it } from "vitest"
import { connect } from "../../streams/Db.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"

const QUERIERS = 20
const TERMINATIONS = 20
/** How soon after the terminations stop every query has settled: a reconnect waits at most a second (streams/Backoff.ts). */
const SETTLED_WITHIN_MS = 3_000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("the node's pool while its backends are terminated", () => {
  const node = uniqueName("pool")
  const pool = connect({ url: databaseUrl, schema: "public", max: 10, node })
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  afterAll(async () => {
    await pool.end({ timeout: 1 })
    await admin.end()
  })

  it("answers or fails every query within seconds, and serves again after", { timeout: 60_000 }, async () => {
    const slowest: number[] = []
    let over = false
    let answered = 0
    const querier = async () => {
      while (!over) {
        const started = performance.now()
        const ok = await pool`select pg_sleep(0.005), ${Math.random()}::float as x`.then(() => true, () => false)
        slowest.push(performance.now() - started)
        if (ok) answered++
      }
    }
    const queriers = Array.from({ length: QUERIERS }, querier)
    const began = performance.now()
    let terminated = 0
    for (let i = 0; i < TERMINATIONS; i++) {
      await sleep(200 + Math.random() * 300)
      terminated += (await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${`svc ${node}`}`).length
    }
    const terminating = performance.now() - began
    const answeredBefore = answered
    await sleep(1_000)
    over = true
    // a query stuck on a connection that never opens would hold this for the connect timeout (30 s), or for ever
    const settled = await Promise.race([Promise.all(queriers).then(() => true), sleep(SETTLED_WITHIN_MS).then(() => false)])
    expect(terminated).toBeGreaterThanOrEqual(TERMINATIONS)
    expect(settled).toBe(true)
    expect(Math.max(...slowest)).toBeLessThan(terminating + 1_000 + SETTLED_WITHIN_MS)
    expect(answered).toBeGreaterThan(answeredBefore)
  })
})

describe("a pool whose every backend is terminated at once", () => {
  /** Far longer than a reconnect takes: a pool that waits it out is seen to. */
  const BACKOFF_SECONDS = 5
  const name = uniqueName("pool-once")
  const pool = postgres(databaseUrl, { max: 10, backoff: () => BACKOFF_SECONDS, connection: { application_name: name }, onnotice: () => {} })
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  afterAll(async () => {
    await pool.end({ timeout: 1 })
    await admin.end()
  })

  // postgres.js counted each closed connection as a failure to connect in a row: ten terminated
  // together made the next connects wait the backoff of the tenth failure, with the server there
  it("reconnects at once: a close after the connection was ready is no failure to connect", { timeout: 30_000 }, async () => {
    await Promise.all(Array.from({ length: 10 }, () => pool`select pg_sleep(0.05)`))
    expect((await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`).length).toBe(10)
    await sleep(50)
    const began = performance.now()
    const served = await Promise.all(Array.from({ length: 10 }, async () => {
      for (;;) if (await pool`select 1`.then(() => true, () => false)) return performance.now() - began
    }))
    expect(Math.max(...served)).toBeLessThan(BACKOFF_SECONDS * 1_000 / 2)
  })
})
