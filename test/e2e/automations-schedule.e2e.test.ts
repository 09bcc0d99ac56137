/**
 * Schedule triggers on a real node whose clock the test moves (spec 2.8, issue 12): a per-minute
 * schedule fires once per minute; a tick while the previous run waits for a person is skipped and
 * recorded; disabling stops the ticks and enabling again replays none; a node down across several
 * ticks fires one catch-up run when it comes back on the same data; a schedule in a zone fires at
 * that zone's local time. Each fires its stable offset into the minute after the tick (the test moves
 * the clock past it). The node sees the test's clock everywhere, its timers included: moving
 * the clock past a tick wakes the schedule waiting for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fireOffsetMs } from "../../src/automations/Schedule.ts"
import { steppedClock } from "../support/clock.ts"
import { addPerson, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

// the node's own zone is not UTC here (this file runs in a process of its own): a schedule given
// no zone that ran at the node's local time would fire at another hour
process.env.TZ = "Pacific/Auckland"

const MINUTE = 60_000
/** How long the test gives the node to show that nothing (more) happens. */
const QUIET_MS = 1_500

const time = steppedClock({ wakeSleepers: true })
let node: TestNode
let owner: Person
let cookie: string

const start = (overrides: Parameters<typeof startTestNode>[0] = {}) => startTestNode(overrides, { clock: time.clock })

beforeAll(async () => {
  node = await start()
  owner = await addPerson(node, "scheduler", { org: "owner" })
  cookie = (await signIn(node.baseUrl, owner)).cookie
}, 120_000)
afterAll(async () => node?.stop())

const asOwner = async (capability: string, input: unknown) => {
  const reply = await callWithCookie(node.baseUrl, cookie, `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`, input)
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

/** Created by a person with `enabled: true`: live at once (spec 3.4). */
const scheduled = async (name: string, cronExpression: string, options: { timezone?: string; steps?: ReadonlyArray<unknown> } = {}) => {
  const created = await asOwner("automation.create", {
    name,
    trigger: { type: "schedule", cronExpression, ...(options.timezone === undefined ? {} : { timezone: options.timezone }) },
    steps: options.steps ?? [],
    enabled: true
  })
  expect(created.enabled).toBe(true)
  return created.automationId as string
}

interface RunRow {
  readonly runId: string
  readonly tick: string
  readonly status: string
  readonly error: { code: string } | null
}

/** The automation's runs (skipped ticks included), by tick. */
const runsOf = async (automationId: string): Promise<ReadonlyArray<RunRow>> =>
  (await node.db.sql`
    select run_id, trigger->>'tick' as tick, status, error from ${node.db.sql(node.db.schema)}.automation_runs
    where automation_id = ${automationId} order by trigger->>'tick'`).map((r) => ({ runId: r.run_id, tick: r.tick, status: r.status, error: r.error }))

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Waits (real time) until the runs satisfy `done`; fails with what they were. */
const untilRuns = async (automationId: string, done: (runs: ReadonlyArray<RunRow>) => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const runs = await runsOf(automationId)
    if (done(runs)) return runs
    if (Date.now() > deadline) throw new Error(`runs of ${automationId} never got there: ${JSON.stringify(runs)}`)
    await sleep(100)
  }
}

const succeeded = (runs: ReadonlyArray<RunRow>) => runs.every((r) => r.status === "succeeded")
const isoOf = (ms: number) => new Date(ms).toISOString()
/** The first whole minute after `ms`. */
const nextMinute = (ms: number) => Math.floor(ms / MINUTE) * MINUTE + MINUTE
/** Moves the test's clock forward to `ms`. */
const advanceTo = (ms: number) => time.advance(Math.max(0, ms - time.now()))
/** A second past the moment the automation's `tick` fires: its stable offset into the minute after it. */
const firing = (automationId: string, tick: number) => tick + fireOffsetMs(automationId) + 1_000

describe("schedule triggers, with the clock moved by the test", () => {
  it("fires a per-minute schedule once per minute; disabled, it stops; enabled again, it replays none of the ticks missed", async () => {
    const automationId = await scheduled("every minute", "* * * * *")
    const first = nextMinute(time.now())
    const ticks: string[] = []
    for (let i = 0; i < 3; i++) {
      advanceTo(firing(automationId, first + i * MINUTE))
      ticks.push(isoOf(first + i * MINUTE))
      const runs = await untilRuns(automationId, (runs) => runs.length === i + 1 && succeeded(runs))
      expect(runs.map((r) => [r.tick, r.status])).toEqual(ticks.map((t) => [t, "succeeded"]))
    }
    await sleep(QUIET_MS)
    expect(await runsOf(automationId)).toHaveLength(3)

    expect((await asOwner("automation.disable", { automationId })).enabled).toBe(false)
    advanceTo(first + 5 * MINUTE + 1_000)
    await sleep(QUIET_MS)
    expect(await runsOf(automationId)).toHaveLength(3)

    // enabled mid-minute: the ticks while disabled are not caught up; the next one fires
    advanceTo(first + 5 * MINUTE + 30_000)
    expect((await asOwner("automation.enable", { automationId })).enabled).toBe(true)
    await sleep(QUIET_MS)
    expect(await runsOf(automationId)).toHaveLength(3)
    advanceTo(firing(automationId, first + 6 * MINUTE))
    const runs = await untilRuns(automationId, (runs) => runs.length === 4 && succeeded(runs))
    expect(runs.at(-1)).toMatchObject({ tick: isoOf(first + 6 * MINUTE), status: "succeeded" })
    await asOwner("automation.disable", { automationId })
  })

  it("skips a tick while the previous run waits for a person, and records it; the next tick after the run ended runs", async () => {
    const automationId = await scheduled("needs approval", "* * * * *", { steps: [{ name: "approve", stepType: "human_input", config: { prompt: "Go ahead?" } }] })
    const first = nextMinute(time.now())
    advanceTo(firing(automationId, first))
    const [waiting] = await untilRuns(automationId, (runs) => runs.length === 1 && runs[0].status === "waiting")
    expect(waiting.tick).toBe(isoOf(first))

    advanceTo(firing(automationId, first + MINUTE))
    const withSkip = await untilRuns(automationId, (runs) => runs.length === 2)
    expect(withSkip[1]).toMatchObject({ tick: isoOf(first + MINUTE), status: "skipped", error: { code: "previous_run_active" } })
    expect(withSkip[0]).toMatchObject({ runId: waiting.runId, status: "waiting" })
    // the detail shows the skipped tick among the recent runs
    const detail = await asOwner("automation.get", { automationId })
    expect(detail.recentRuns.map((r: { status: string }) => r.status).sort()).toEqual(["skipped", "waiting"])

    expect((await asOwner("automation.respond", { runId: waiting.runId, response: { approved: true } })).runId).toBe(waiting.runId)
    await untilRuns(automationId, (runs) => runs[0].status === "succeeded")
    advanceTo(firing(automationId, first + 2 * MINUTE))
    const after = await untilRuns(automationId, (runs) => runs.length === 3 && runs[2].status === "waiting")
    expect(after[2].tick).toBe(isoOf(first + 2 * MINUTE))
    await asOwner("automation.disable", { automationId })
  })

  it("fires one catch-up run, for the latest tick missed, when a node down across several ticks starts again on its data", async () => {
    const automationId = await scheduled("through a restart", "* * * * *")
    const first = nextMinute(time.now())
    advanceTo(firing(automationId, first))
    await untilRuns(automationId, (runs) => runs.length === 1 && succeeded(runs))

    await node.stop()
    // down for five ticks, back once the fifth has fired
    advanceTo(firing(automationId, first + 5 * MINUTE))
    node = await start({ dataDir: node.config.dataDir, dbSchema: node.config.dbSchema })
    const caughtUp = await untilRuns(automationId, (runs) => runs.length === 2 && succeeded(runs))
    expect(caughtUp.map((r) => r.tick)).toEqual([isoOf(first), isoOf(first + 5 * MINUTE)])
    await sleep(QUIET_MS)
    expect(await runsOf(automationId)).toHaveLength(2)

    // and on with its rhythm
    advanceTo(firing(automationId, first + 6 * MINUTE))
    const next = await untilRuns(automationId, (runs) => runs.length === 3 && succeeded(runs))
    expect(next[2].tick).toBe(isoOf(first + 6 * MINUTE))
    await asOwner("automation.disable", { automationId })
  })

  it("fires a schedule at its zone's local time", async () => {
    // 04:00 UTC is 09:30 in Kolkata (UTC+5:30) and 23:00 the day before in Bogotá (UTC-5); neither has daylight saving
    const DAY = 24 * 60 * MINUTE
    const fourUtc = Math.floor((time.now() + 2 * MINUTE) / DAY) * DAY + 4 * 60 * MINUTE
    const target = fourUtc > time.now() + 2 * MINUTE ? fourUtc : fourUtc + DAY
    advanceTo(target - 30_000)
    // the jump may outlast the session (12 h)
    cookie = (await signIn(node.baseUrl, owner)).cookie
    const kolkata = await scheduled("09:30 in Kolkata", "30 9 * * *", { timezone: "Asia/Kolkata" })
    const bogota = await scheduled("23:00 in Bogotá", "0 23 * * *", { timezone: "America/Bogota" })
    const utc = await scheduled("09:30 UTC", "30 9 * * *")
    await sleep(QUIET_MS)
    for (const id of [kolkata, bogota, utc]) expect(await runsOf(id)).toHaveLength(0)

    advanceTo(Math.max(firing(kolkata, target), firing(bogota, target)))
    for (const id of [kolkata, bogota]) {
      const runs = await untilRuns(id, (runs) => runs.length === 1 && succeeded(runs))
      expect(runs[0].tick).toBe(isoOf(target))
    }
    await sleep(QUIET_MS)
    expect(await runsOf(utc)).toHaveLength(0)

    // the schedule given no zone runs in UTC, and says so: at 09:30 UTC, five and a half hours on
    expect((await asOwner("automation.get", { automationId: utc })).trigger).toMatchObject({ cronExpression: "30 9 * * *", timezone: "UTC" })
    const nineThirtyUtc = target + (5 * 60 + 30) * MINUTE
    advanceTo(firing(utc, nineThirtyUtc))
    const utcRuns = await untilRuns(utc, (runs) => runs.length === 1 && succeeded(runs))
    expect(utcRuns[0].tick).toBe(isoOf(nineThirtyUtc))
    for (const id of [kolkata, bogota]) expect(await runsOf(id)).toHaveLength(1)
  })
})
