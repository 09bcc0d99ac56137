/**
 * Brute-force protection end to end over HTTP (src/identity/Lockout.ts): wrong passwords, wrong TOTP codes
 * and wrong CLI user codes lock the account after five in a row; every attempt while locked is 429
 * `rate_limited` with `Retry-After`, the right secret included; the lock ends when it was set to,
 * however many guesses come meanwhile, then the right secret works; a lock is a security record
 * in the organization's audit log. A client address locks too, after more failures, whichever
 * accounts they were at. The nodes run on a clock the suite moves past the locks.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newUserCode } from "../../src/identity/DeviceLogin.ts"
import { newTotp } from "../../src/identity/Sessions.ts"
import { steppedClock } from "../support/clock.ts"
import { addPerson, bootstrapPlace, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { caughtUp } from "../support/projection.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { eventsOf, expectError, type Reply, send } from "./client.ts"

const LOCK_MS = 60_000

/** An answer with its `Retry-After`. */
type Answer = Reply & { readonly retryAfter: string | null }

const answer = async (response: Response): Promise<Answer> => ({
  status: response.status,
  body: await response.json(),
  retryAfter: response.headers.get("retry-after")
})

const post = (node: TestNode, path: string, body: unknown, cookie?: string) =>
  fetch(`${node.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(cookie === undefined ? {} : { cookie }) },
    body: JSON.stringify(body)
  }).then(answer)

const signInAs = (node: TestNode, email: string, password: string, code?: string) =>
  post(node, "/v1/auth/sign-in", { email, password, ...(code === undefined ? {} : { code }) })

/** 429 `rate_limited`, reason `too_many_attempts`, with a `Retry-After` of whole seconds within `maxSeconds`. */
const expectLocked = (reply: Answer, maxSeconds = LOCK_MS / 1000) => {
  expectError(reply, 429, "rate_limited", "too_many_attempts")
  expect(reply.retryAfter).toMatch(/^[1-9]\d*$/)
  expect(Number(reply.retryAfter)).toBeLessThanOrEqual(maxSeconds)
}

/** Until the projections hold the whole log: audit records are appended beside the node's acknowledged writes. */
const auditCaughtUp = (node: TestNode) => Effect.runPromise(caughtUp(node.db).pipe(Effect.provideService(EventLog, node.log)))

const securityRecords = async (node: TestNode, event: string, userId: string) => {
  await auditCaughtUp(node)
  return node.db.sql`select org_id, user_id, detail from ${node.db.table("audit_log")}
    where kind = 'security' and event = ${event} and user_id = ${userId} order by at`
}

describe("accounts: passwords, TOTP codes and CLI user codes", () => {
  let node: TestNode
  const time = steppedClock()
  let orgId: string

  beforeAll(async () => {
    // the address guard (tested below) would otherwise count this suite's failures, all from one address
    node = await startTestNode({ lockout: { accountFailures: 5, addressFailures: 1000, lockMs: LOCK_MS, maxLockMs: 15 * LOCK_MS } }, { clock: time.clock })
    ;({ orgId } = await bootstrapPlace(node))
  })

  afterAll(() => node?.stop())

  it("the Owner's password: four wrong are 401, the fifth is 429 with Retry-After; the right one while locked is 429; after the lock it signs in", async () => {
    const { ownerEmail } = node.bootstrap
    const ownerPassword = node.bootstrap.ownerPassword!
    for (let i = 0; i < 4; i++) expectError(await signInAs(node, ownerEmail, `wrong-${i}`), 401, "unauthorized", "invalid_credential")
    const fifth = await signInAs(node, ownerEmail, "wrong-4")
    expectLocked(fifth)
    expect(fifth.retryAfter).toBe("60")
    // right or wrong, the same answer: the lock tells nothing about the password
    const right = await signInAs(node, ownerEmail, ownerPassword)
    expectLocked(right)
    time.advance(LOCK_MS + 1_000)
    expect((await signInAs(node, ownerEmail, ownerPassword)).status).toBe(200)
  })

  it("wrong passwords during a lock do not extend it; the next failure after it locks twice as long; a sign-in clears the count", async () => {
    const person = await addPerson(node, "lena", { org: "member" })
    for (let i = 0; i < 5; i++) await signInAs(node, person.email, "wrong")
    for (let i = 0; i < 5; i++) {
      time.advance(10_000)
      expectLocked(await signInAs(node, person.email, "still wrong"))
    }
    // locked for 60 s; 50 s of wrong guesses later, 11 s more end it
    time.advance(11_000)
    expectLocked(await signInAs(node, person.email, "wrong again"), 120)
    expect((await signInAs(node, person.email, "wrong again")).retryAfter).toBe("120")
    time.advance(121_000)
    expect((await signInAs(node, person.email, person.password)).status).toBe(200)
    // counted from zero again: four wrong are 401s
    for (let i = 0; i < 4; i++) expectError(await signInAs(node, person.email, "wrong"), 401, "unauthorized", "invalid_credential")
    expect((await signInAs(node, person.email, person.password)).status).toBe(200)
  })

  it("records the lock as a security event in the account's organization, with the failed sign-ins", async () => {
    const person = await addPerson(node, "mona", { org: "member" })
    for (let i = 0; i < 6; i++) await signInAs(node, person.email, "wrong")
    const [lock, ...more] = await securityRecords(node, "guard.locked", person.userId)
    expect(more).toEqual([])
    expect(lock).toEqual({
      org_id: orgId,
      user_id: person.userId,
      detail: { flow: "sign_in", scope: "account", email: person.email, address: "127.0.0.1", failures: 5, lockSeconds: 60, lockedUntil: expect.any(String) }
    })
    const failed = await securityRecords(node, "auth.sign_in_failed", person.userId)
    expect(failed.map((row) => row.detail.reason)).toEqual([...Array(5).fill("invalid_credential"), "locked"])
    expect(JSON.stringify([lock, failed])).not.toContain("wrong")
    time.advance(LOCK_MS)
  })

  it("an email nobody holds locks the same way: a lock does not tell which accounts exist", async () => {
    const nobody = `nobody-${randomUUID().slice(0, 8)}@example.test`
    for (let i = 0; i < 4; i++) expectError(await signInAs(node, nobody, "guess"), 401, "unauthorized", "invalid_credential")
    expectLocked(await signInAs(node, nobody, "guess"))
    expectLocked(await signInAs(node, nobody.toUpperCase(), "guess"))
    time.advance(LOCK_MS)
  })

  it("guesses sent all at once are counted exactly: four 401s, then 429s", async () => {
    const person = await addPerson(node, "nina", { org: "member" })
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => signInAs(node, person.email, `burst-${i}`)))
    expect(replies.map((r) => r.status).sort()).toEqual([...Array(4).fill(401), ...Array(8).fill(429)])
    expectLocked(await signInAs(node, person.email, person.password))
    time.advance(LOCK_MS)
  })

  it("TOTP codes: four wrong are 401, the fifth 429; while locked the right code, and no code at all, are 429; after the lock it signs in", async () => {
    const person = await addPerson(node, "olga", { org: "member" })
    const session = await signIn(node.baseUrl, person)
    const enrolled = await callWithCookie(node.baseUrl, session.cookie, "/v1/auth/mfa/enroll", {})
    const code = () => newTotp(enrolled.body.secret).generate({ timestamp: time.now() })
    expect((await callWithCookie(node.baseUrl, session.cookie, "/v1/auth/mfa/confirm", { code: code() })).status).toBe(200)
    const wrong = () => (code() === "123456" ? "654321" : "123456")

    for (let i = 0; i < 4; i++) expectError(await signInAs(node, person.email, person.password, wrong()), 401, "unauthorized", "invalid_credential")
    expectLocked(await signInAs(node, person.email, person.password, wrong()))
    expectLocked(await signInAs(node, person.email, person.password, code()))
    // asking for the code would say the password is right
    expectLocked(await signInAs(node, person.email, person.password))
    time.advance(LOCK_MS + 1_000)
    expect((await signInAs(node, person.email, person.password, code())).status).toBe(200)
    const [lock] = await securityRecords(node, "guard.locked", person.userId)
    expect(lock.detail).toMatchObject({ flow: "sign_in", scope: "account", failures: 5 })
    const failed = await securityRecords(node, "auth.sign_in_failed", person.userId)
    expect(failed.map((row) => row.detail.reason)).toEqual([...Array(5).fill("mfa_code_invalid"), "locked", "locked"])
  })

  describe("CLI user codes", () => {
    let dora: Person
    let cookie: string

    const place = (path: string) => `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${path}`
    const approve = (userCode: string) => post(node, place("auth/device/approve"), { userCode }, cookie)
    const deny = (userCode: string) => post(node, place("auth/device/deny"), { userCode }, cookie)
    const requestCode = async () => {
      const reply = await send(node, "/v1/auth/device/code", { method: "POST" })
      expect(reply.status).toBe(200)
      return reply.body as { device_code: string; user_code: string }
    }
    /** A well-formed user code that no login shows. */
    const unknownCode = (shown: string) => {
      for (;;) {
        const code = newUserCode()
        if (code !== shown) return code
      }
    }

    beforeAll(async () => {
      dora = await addPerson(node, "dora", { org: "member", workspace: "member" })
      cookie = (await signIn(node.baseUrl, dora)).cookie
    })

    it("four unknown codes are 404, the fifth 429; the right code while locked is 429, to approve or deny; after the lock it approves", async () => {
      const { device_code, user_code } = await requestCode()
      // a code of the wrong shape is no guess at any code: refused, not counted
      for (const malformed of ["AEIO-U123", "nothing", ""]) expectError(await approve(malformed), 404, "not_found", "device_code_not_found")
      expectError(await approve(unknownCode(user_code)), 404, "not_found", "device_code_not_found")
      expectError(await deny(unknownCode(user_code)), 404, "not_found", "device_code_not_found")
      for (let i = 0; i < 2; i++) expectError(await approve(unknownCode(user_code)), 404, "not_found", "device_code_not_found")
      expectLocked(await approve(unknownCode(user_code)))
      expectLocked(await approve(user_code))
      expectLocked(await deny(user_code))
      time.advance(LOCK_MS + 1_000)
      const device = await requestCode()
      expect((await approve(device.user_code)).status).toBe(200)
      const token = await send(node, "/v1/auth/device/token", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ device_code: device.device_code }) })
      expect(token.status).toBe(200)
      // the first login's code expired during the lock, unapproved
      expect((await send(node, "/v1/auth/device/token", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ device_code }) })).body.error).toBe("authorization_pending")
    })

    it("records the lock as a security event, and the refused calls as failed invocations", async () => {
      const [lock] = await securityRecords(node, "guard.locked", dora.userId)
      expect(lock).toEqual({
        org_id: orgId,
        user_id: dora.userId,
        detail: { flow: "device_code", scope: "account", email: null, address: "127.0.0.1", failures: 5, lockSeconds: 60, lockedUntil: expect.any(String) }
      })
      await auditCaughtUp(node)
      const refused = await node.db.sql`select error_tag from ${node.db.table("audit_log")}
        where capability in ('auth.device.approve', 'auth.device.deny') and user_id = ${dora.userId} and outcome = 'failed' order by at`
      // three malformed codes, four unknown ones, then the lock
      expect(refused.map((row) => row.error_tag)).toEqual([...Array(7).fill("NotFound"), ...Array(3).fill("TooManyAttempts")])
    })
  })
})

describe("a client address", () => {
  let node: TestNode
  const time = steppedClock()

  beforeAll(async () => {
    node = await startTestNode({ lockout: { accountFailures: 5, addressFailures: 8, lockMs: LOCK_MS, maxLockMs: 15 * LOCK_MS } }, { clock: time.clock })
  })

  afterAll(() => node?.stop())

  it("locks after its own count of failures at any accounts, for every account; a sign-in does not clear it", async () => {
    const [person, other] = await Promise.all([addPerson(node, "pia", { org: "member" }), addPerson(node, "quinn", { org: "member" })])
    // one wrong password at each of seven accounts: no account is near its own lock
    for (let i = 0; i < 7; i++) expectError(await signInAs(node, `spray-${i}-${randomUUID().slice(0, 8)}@example.test`, "guess"), 401, "unauthorized", "invalid_credential")
    expect((await signInAs(node, person.email, person.password)).status).toBe(200)
    expectLocked(await signInAs(node, `spray-7-${randomUUID().slice(0, 8)}@example.test`, "guess"))
    expectLocked(await signInAs(node, other.email, other.password))
    time.advance(LOCK_MS + 1_000)
    expect((await signInAs(node, other.email, other.password)).status).toBe(200)
    // still its ninth failure in a row: locked again at once, twice as long
    expectLocked(await signInAs(node, `spray-8-${randomUUID().slice(0, 8)}@example.test`, "guess"), 120)
    // reached at emails nobody holds, the locks name no organization to record them in; they are on the log
    const locks = (await eventsOf(node, "guard:sign_in:address:127.0.0.1")).filter((e) => e.type === "guard.locked")
    expect(locks.map((e) => [e.payload.failures, e.payload.lockMs, e.payload.orgIds])).toEqual([[8, LOCK_MS, []], [9, 2 * LOCK_MS, []]])
  })
})
