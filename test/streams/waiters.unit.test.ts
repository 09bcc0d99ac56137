import { describe, expect, it } from "vitest"
import { databaseUnreachable } from "../../streams/Backoff.ts"
import { DbError } from "../../streams/Db.ts"
import { OffsetWaiters } from "../../streams/host/Waiters.ts"

const failedWith = (code: string) => new DbError({ message: "apply batch failed", cause: Object.assign(new Error(code), { code }) })

describe("a partition's projection waiters", () => {
  it("let the reads go when the projection cannot reach its database; a partition catching up waits on", async () => {
    const waiters = new OffsetWaiters()
    const read = waiters.wait(5, 60_000)
    const catchingUp = waiters.wait(5)
    let caughtUp: boolean | undefined
    void catchingUp.then((passed) => (caughtUp = passed))
    waiters.letReadsGo()
    expect(await read).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(caughtUp).toBe(undefined)
    waiters.advance(6)
    expect(await catchingUp).toBe(true)
    expect(await waiters.wait(5, 60_000)).toBe(true)
  })

  it.each([
    ["a refused connect", "ECONNREFUSED", true],
    ["a connect timed out", "CONNECT_TIMEOUT", true],
    ["a connection closed", "CONNECTION_CLOSED", true],
    ["a backend terminated", "57P01", true],
    ["a server starting", "57P03", true],
    ["a unique violation", "23505", false],
    ["a serialization failure", "40001", false]
  ])("%s (%s): the database out of reach, %s", (_, code, unreachable) => {
    expect(databaseUnreachable(failedWith(code))).toBe(unreachable)
  })
})
