/**
 * Schedule triggers on their own (src/automations/Schedule.ts): which tick is due and which comes
 * next, read in the automation's zone, across daylight-saving changes (Berlin and New York, 2025);
 * the catch-up policy (ticks missed while no node kept the schedule collapse into one, the latest);
 * each automation's ticks firing at a stable offset into their minute, spread over it; and what a
 * caller may give (400 `invalid_cron`, `invalid_timezone`).
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { checkSchedule, dueTick, fireOffsetMs, nextFiring, nextTick } from "../../src/automations/Schedule.ts"

const at = (iso: string) => new Date(iso)
const iso = (date: Date | undefined) => date?.toISOString()

/** The `count` ticks after `after`, one after another. */
const ticksAfter = (expression: string, timezone: string, after: string, count: number) => {
  const ticks: Array<string | undefined> = []
  let from = at(after)
  for (let i = 0; i < count; i++) {
    const next = nextTick(expression, timezone, from)
    ticks.push(iso(next))
    if (next === undefined) break
    from = next
  }
  return ticks
}

describe("nextTick: the zone's local time", () => {
  it.each([
    // [case, expression, zone, after, the next tick (UTC)]
    ["UTC, every minute", "* * * * *", "UTC", "2025-01-01T10:00:30Z", "2025-01-01T10:01:00.000Z"],
    ["UTC, after a tick exactly: the following one", "* * * * *", "UTC", "2025-01-01T10:01:00Z", "2025-01-01T10:02:00.000Z"],
    ["Berlin 09:00 in winter is 08:00 UTC", "0 9 * * *", "Europe/Berlin", "2025-01-15T00:00:00Z", "2025-01-15T08:00:00.000Z"],
    ["Berlin 09:00 in summer is 07:00 UTC", "0 9 * * *", "Europe/Berlin", "2025-07-15T00:00:00Z", "2025-07-15T07:00:00.000Z"],
    ["New York 09:00 in winter is 14:00 UTC", "0 9 * * *", "America/New_York", "2025-01-15T00:00:00Z", "2025-01-15T14:00:00.000Z"],
    ["New York 09:00 in summer is 13:00 UTC", "0 9 * * *", "America/New_York", "2025-07-15T00:00:00Z", "2025-07-15T13:00:00.000Z"],
    ["Kolkata's half-hour offset", "30 9 * * *", "Asia/Kolkata", "2025-01-15T00:00:00Z", "2025-01-15T04:00:00.000Z"],
    ["weekdays in the zone: Friday 23:00 UTC is Saturday in Tokyo", "0 8 * * MON-FRI", "Asia/Tokyo", "2025-01-17T23:30:00Z", "2025-01-19T23:00:00.000Z"],
    ["the day of month in the zone", "0 0 1 * *", "America/New_York", "2025-01-15T00:00:00Z", "2025-02-01T05:00:00.000Z"]
  ])("%s", (_, expression, zone, after, expected) => {
    expect(iso(nextTick(expression, zone, at(after)))).toBe(expected)
  })
})

describe("daylight saving: each tick once, none in a gap lost", () => {
  it.each([
    // Berlin springs forward on 2025-03-30 at 02:00 CET (01:00 UTC) to 03:00 CEST
    ["Berlin spring, hourly: every real hour, 02:00 local skipped", "0 * * * *", "Europe/Berlin", "2025-03-29T23:30:00Z",
      ["2025-03-30T00:00:00.000Z", "2025-03-30T01:00:00.000Z", "2025-03-30T02:00:00.000Z"]],
    ["Berlin spring, 02:30 daily: a time in the gap fires as it ends (03:00 CEST), then at 02:30 again", "30 2 * * *", "Europe/Berlin", "2025-03-29T12:00:00Z",
      ["2025-03-30T01:00:00.000Z", "2025-03-31T00:30:00.000Z"]],
    ["Berlin spring, every minute: no gap, no repeat in UTC", "* * * * *", "Europe/Berlin", "2025-03-30T00:58:00Z",
      ["2025-03-30T00:59:00.000Z", "2025-03-30T01:00:00.000Z", "2025-03-30T01:01:00.000Z"]],
    // Berlin falls back on 2025-10-26 at 03:00 CEST (01:00 UTC) to 02:00 CET: 02:xx happens twice
    ["Berlin fall, 02:30 daily: once, at the first 02:30 (CEST)", "30 2 * * *", "Europe/Berlin", "2025-10-25T12:00:00Z",
      ["2025-10-26T00:30:00.000Z", "2025-10-27T01:30:00.000Z"]],
    ["Berlin fall, every minute: no gap, no repeat in UTC", "* * * * *", "Europe/Berlin", "2025-10-26T00:58:00Z",
      ["2025-10-26T00:59:00.000Z", "2025-10-26T01:00:00.000Z", "2025-10-26T01:01:00.000Z"]],
    // New York springs forward on 2025-03-09 at 02:00 EST (07:00 UTC) to 03:00 EDT
    ["New York spring, 02:30 daily: fires as the gap ends (03:00 EDT)", "30 2 * * *", "America/New_York", "2025-03-08T12:00:00Z",
      ["2025-03-09T07:00:00.000Z", "2025-03-10T06:30:00.000Z"]],
    ["New York spring, 09:00 daily: an hour earlier in UTC from that day", "0 9 * * *", "America/New_York", "2025-03-08T00:00:00Z",
      ["2025-03-08T14:00:00.000Z", "2025-03-09T13:00:00.000Z", "2025-03-10T13:00:00.000Z"]],
    // New York falls back on 2025-11-02 at 02:00 EDT (06:00 UTC) to 01:00 EST: 01:xx happens twice
    ["New York fall, 01:30 daily: once, at the first 01:30 (EDT)", "30 1 * * *", "America/New_York", "2025-11-01T12:00:00Z",
      ["2025-11-02T05:30:00.000Z", "2025-11-03T06:30:00.000Z"]],
    ["New York fall, hourly: every real hour, the repeated 01:00 included", "0 * * * *", "America/New_York", "2025-11-02T03:30:00Z",
      ["2025-11-02T04:00:00.000Z", "2025-11-02T05:00:00.000Z", "2025-11-02T06:00:00.000Z", "2025-11-02T07:00:00.000Z"]]
  ])("%s", (_, expression, zone, after, expected) => {
    expect(ticksAfter(expression, zone, after, expected.length)).toEqual(expected)
  })

  it("dueTick agrees with nextTick in the repeated hour: the second 01:30 in New York is not due", () => {
    expect(iso(dueTick("30 1 * * *", "America/New_York", at("2025-11-02T05:30:00Z"), at("2025-11-02T06:45:00Z")))).toBeUndefined()
    expect(iso(dueTick("30 2 * * *", "Europe/Berlin", at("2025-10-26T00:30:00Z"), at("2025-10-26T01:45:00Z")))).toBeUndefined()
  })

  it("dueTick in the spring gap: 02:30 Berlin is due at 03:00 CEST, not before", () => {
    expect(iso(dueTick("30 2 * * *", "Europe/Berlin", at("2025-03-29T12:00:00Z"), at("2025-03-30T00:59:59Z")))).toBeUndefined()
    expect(iso(dueTick("30 2 * * *", "Europe/Berlin", at("2025-03-29T12:00:00Z"), at("2025-03-30T01:00:00Z")))).toBe("2025-03-30T01:00:00.000Z")
  })
})

describe("dueTick: the tick to fire now, and the catch-up policy", () => {
  it.each([
    // [case, expression, zone, last decided (or live since), now, the tick due]
    ["nothing due before the next tick", "* * * * *", "UTC", "2025-01-01T10:00:00Z", "2025-01-01T10:00:59.999Z", undefined],
    ["a tick is due at its very time", "* * * * *", "UTC", "2025-01-01T10:00:00Z", "2025-01-01T10:01:00Z", "2025-01-01T10:01:00.000Z"],
    ["and after it", "* * * * *", "UTC", "2025-01-01T10:00:00Z", "2025-01-01T10:01:30Z", "2025-01-01T10:01:00.000Z"],
    ["a tick decided already is not due again", "* * * * *", "UTC", "2025-01-01T10:01:00Z", "2025-01-01T10:01:30Z", undefined],
    ["live since mid-minute: that minute's tick came before, not due", "* * * * *", "UTC", "2025-01-01T10:00:00.500Z", "2025-01-01T10:00:59Z", undefined],
    ["live since mid-minute: the next one is", "* * * * *", "UTC", "2025-01-01T10:00:00.500Z", "2025-01-01T10:01:00Z", "2025-01-01T10:01:00.000Z"],
    ["five minutes down: one catch-up, the latest tick missed", "* * * * *", "UTC", "2025-01-01T10:00:00Z", "2025-01-01T10:05:30Z", "2025-01-01T10:05:00.000Z"],
    ["days down on a daily schedule: one, today's", "0 9 * * *", "Europe/Berlin", "2025-01-01T08:00:00Z", "2025-01-05T12:00:00Z", "2025-01-05T08:00:00.000Z"],
    ["days down, before today's tick: yesterday's", "0 9 * * *", "Europe/Berlin", "2025-01-01T08:00:00Z", "2025-01-05T07:00:00Z", "2025-01-04T08:00:00.000Z"],
    ["an hourly schedule live since minute five: nothing until the hour", "0 * * * *", "UTC", "2025-01-01T00:05:00Z", "2025-01-01T00:59:00Z", undefined],
    ["in the zone: New York 09:00 is not due at 09:00 UTC", "0 9 * * *", "America/New_York", "2025-01-15T00:00:00Z", "2025-01-15T09:00:00Z", undefined],
    ["in the zone: due at 14:00 UTC", "0 9 * * *", "America/New_York", "2025-01-15T00:00:00Z", "2025-01-15T14:00:00Z", "2025-01-15T14:00:00.000Z"]
  ])("%s", (_, expression, zone, after, now, expected) => {
    expect(iso(dueTick(expression, zone, at(after), at(now)))).toBe(expected)
  })

  it("a schedule kept again after missing ticks fires once, then keeps its rhythm", () => {
    const last = at("2025-01-01T10:00:00Z")
    const restartedAt = at("2025-01-01T10:07:20Z")
    const caughtUp = dueTick("* * * * *", "UTC", last, restartedAt)!
    expect(iso(caughtUp)).toBe("2025-01-01T10:07:00.000Z")
    // having fired it, nothing more is due at that moment: the six earlier ticks are gone
    expect(dueTick("* * * * *", "UTC", caughtUp, restartedAt)).toBeUndefined()
    expect(iso(nextTick("* * * * *", "UTC", restartedAt))).toBe("2025-01-01T10:08:00.000Z")
  })
})

describe("checkSchedule: what a caller may give", () => {
  const reasonOf = (expression: string, zone: string) => {
    const checked = checkSchedule(expression, zone)
    return Either.isLeft(checked) ? checked.left.reason : "ok"
  }

  it.each([
    ["* * * * *", "UTC", "ok"],
    ["*/5 9-17 * * MON-FRI", "Europe/Berlin", "ok"],
    ["0 9 1,15 * *", "America/New_York", "ok"],
    ["30 9 * * *", "Asia/Kolkata", "ok"],
    // POSIX cron has five fields: four, six (seconds) and seven are refused
    ["* * * *", "UTC", "invalid_cron"],
    ["0 * * * * *", "UTC", "invalid_cron"],
    ["0 0 * * * * 2030", "UTC", "invalid_cron"],
    ["60 * * * *", "UTC", "invalid_cron"],
    ["* 24 * * *", "UTC", "invalid_cron"],
    ["* * 32 * *", "UTC", "invalid_cron"],
    ["* * * 13 *", "UTC", "invalid_cron"],
    ["every minute", "UTC", "invalid_cron"],
    ["", "UTC", "invalid_cron"],
    // a valid expression that never fires
    ["0 0 30 2 *", "UTC", "invalid_cron"],
    // zones are IANA names
    ["* * * * *", "Mars/Olympus_Mons", "invalid_timezone"],
    ["* * * * *", "+02:00", "invalid_timezone"],
    ["* * * * *", "", "invalid_timezone"],
    // the zone is checked first: both wrong names the zone
    ["not cron", "Nowhere/Land", "invalid_timezone"]
  ])("%j in %j: %s", (expression, zone, expected) => {
    expect(reasonOf(expression, zone)).toBe(expected)
  })
})

describe("fireOffsetMs: schedules fire spread over their minute, not all at second 0", () => {
  const ids = Array.from({ length: 500 }, (_, i) => `aut_${i.toString(16).padStart(32, "0")}`)

  it("is stable per automation and within the minute", () => {
    for (const id of ids) {
      expect(fireOffsetMs(id)).toBe(fireOffsetMs(id))
      expect(fireOffsetMs(id)).toBeGreaterThanOrEqual(0)
      expect(fireOffsetMs(id)).toBeLessThan(60_000)
    }
  })

  it("500 every-minute schedules: a few fire in each second of the minute, each at its offset, the tick itself on the minute", () => {
    const tick = at("2025-01-01T10:01:00Z")
    const last = at("2025-01-01T10:00:00Z")
    const perSecond = new Array<number>(60).fill(0)
    for (const id of ids) {
      const offset = fireOffsetMs(id)
      // not due just before its firing, due (the minute's tick) from it on
      expect(dueTick("* * * * *", "UTC", last, new Date(tick.getTime() + offset - 1), offset)).toBeUndefined()
      expect(iso(dueTick("* * * * *", "UTC", last, new Date(tick.getTime() + offset), offset))).toBe(tick.toISOString())
      expect(nextFiring("* * * * *", "UTC", last, new Date(tick.getTime() + offset - 1), offset)).toBe(tick.getTime() + offset)
      perSecond[Math.floor(offset / 1000)]++
    }
    // about 8 a second; all at once was the starvation of issue 22
    expect(Math.max(...perSecond)).toBeLessThanOrEqual(25)
    expect(perSecond.filter((n) => n > 0).length).toBeGreaterThanOrEqual(55)
  })
})
