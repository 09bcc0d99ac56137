/**
 * Spec 3.3 and 4.2 end to end, on a node whose clock the test moves: rotation with its 24-hour
 * grace, acknowledgement, revocation, each `api_key.revoked` recorded once; two-factor at sign-in;
 * replays (same `Idempotency-Key`) that never show a secret again; and, after all of it, no raw
 * key, password, TOTP secret or cookie in the database or the output.
 */
import { Effect, Runtime } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { newTotp } from "../../src/identity/Sessions.ts"
import { call } from "../support/http.ts"
import { steppedClock } from "../support/clock.ts"
import { addPerson, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { caughtUp } from "../support/projection.ts"

const HOUR = 3600_000
const time = steppedClock()
let node: TestNode
let owner: Person
/** Every secret the platform handed out or was handed during the run. */
const secrets: Array<string> = []
const output: Array<string> = []

const settle = () => Runtime.runPromise(node.runtime)(caughtUp(node.db) as Effect.Effect<void>)

const ownerSession = async () => {
  const session = await signIn(node.baseUrl, owner)
  expect(session.status).toBe(200)
  secrets.push(session.cookie.split("=")[1])
  return (path: string, input: unknown, method = "POST") => callWithCookie(node.baseUrl, session.cookie, `/v1/acme/main/${path}`, input, method)
}

/** A POST under a session with an `Idempotency-Key`, as a client that retries it sends it again. */
const callWithKey = async (cookie: string, path: string, input: unknown, idempotencyKey: string) => {
  const response = await fetch(`${node.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie, "idempotency-key": idempotencyKey },
    body: JSON.stringify(input)
  })
  return { status: response.status, body: (await response.json()) as any }
}

const whoamiStatus = async (rawKey: string) => (await call(node.baseUrl, rawKey, "/v1/auth/whoami")).status

const revocationsOf = async (keyId: string) => {
  await settle()
  const as = await ownerSession()
  const reply = await as("audit/list", { event: "api_key.revoked", limit: 200 })
  expect(reply.status).toBe(200)
  return reply.body.entries.filter((e: any) => e.detail.keyId === keyId)
}

beforeAll(async () => {
  // capture everything the node prints, to search it for secrets at the end
  for (const stream of ["log", "info", "warn", "error"] as const) {
    const original = console[stream]
    vi.spyOn(console, stream).mockImplementation((...args: Array<unknown>) => {
      output.push(args.map(String).join(" "))
      original(...args)
    })
  }
  // and every line the node logs, down to debug
  node = await startTestNode({ logging: { level: "debug", format: "json" } }, { clock: time.clock, logSink: (line) => output.push(line) })
  secrets.push(node.bootstrap.workspaceKey, node.bootstrap.orgKey)
  owner = await addPerson(node, "olive", { org: "owner" })
  secrets.push(owner.password)
}, 60_000)

afterAll(() => node?.stop())

describe("creation (spec 3.3)", () => {
  it("a replayed creation (same Idempotency-Key) makes no second key and answers 409 idempotent_replay_secret: the raw key went to the first answer, and works", async () => {
    const session = await signIn(node.baseUrl, owner)
    secrets.push(session.cookie.split("=")[1])
    const create = () => callWithKey(session.cookie, "/v1/acme/main/create_api_key", { name: "created once" }, "create-once")
    const first = await create()
    expect(first.status).toBe(200)
    expect(first.body.rawKey).toMatch(/^svc_/)
    secrets.push(first.body.rawKey)
    const replayed = await create()
    expect([replayed.status, replayed.body.error.code, replayed.body.error.reason]).toEqual([409, "conflict", "idempotent_replay_secret"])
    expect(replayed.body.error.message).toContain(first.body.publicId)
    expect(JSON.stringify(replayed.body)).not.toContain("svc_")
    expect(await whoamiStatus(first.body.rawKey)).toBe(200)
    const listed = await callWithCookie(node.baseUrl, session.cookie, "/v1/acme/main/api_key/list", {})
    expect(listed.body.keys.filter((k: any) => k.name === "created once").map((k: any) => [k.publicId, k.status])).toEqual([[first.body.publicId, "active"]])
  })
})

describe("rotation (spec 3.3)", () => {
  it("the old key works for 24 hours after a rotation, then stops; the new key works throughout", async () => {
    const as = await ownerSession()
    const created = await as("create_api_key", { name: "deploy bot" })
    expect(created.status).toBe(200)
    expect(created.body.rawKey).toMatch(/^svc_/)
    secrets.push(created.body.rawKey)
    const rotatedAt = time.now()
    const rotated = await as("api-keys/rotate", { keyPublicId: created.body.publicId })
    expect(rotated.status).toBe(200)
    secrets.push(rotated.body.rawKey)
    expect(rotated.body.superseded.publicId).toBe(created.body.publicId)
    expect(Date.parse(rotated.body.superseded.expiresAt) - rotatedAt).toBeGreaterThanOrEqual(24 * HOUR - 1000)
    expect(Date.parse(rotated.body.superseded.expiresAt) - rotatedAt).toBeLessThanOrEqual(24 * HOUR + 1000)

    expect(await whoamiStatus(created.body.rawKey)).toBe(200)
    time.advance(23 * HOUR)
    expect(await whoamiStatus(created.body.rawKey)).toBe(200)
    time.advance(HOUR + 5_000)
    const expired = await call(node.baseUrl, created.body.rawKey, "/v1/auth/whoami")
    expect([expired.status, expired.body.error.reason]).toEqual([401, "expired_credential"])
    expect(await whoamiStatus(rotated.body.rawKey)).toBe(200)

    // acknowledging after the grace ran out revokes nothing: the old key had already stopped
    const late = await (await ownerSession())("api-keys/rotate/acknowledge", { keyPublicId: rotated.body.publicId })
    expect(late.status).toBe(200)
    expect(await revocationsOf(created.body.publicId)).toEqual([])
  })

  it("a replayed rotation (same Idempotency-Key) issues no second successor and answers 409 idempotent_replay_secret: the new key's secret went to the first answer", async () => {
    const session = await signIn(node.baseUrl, owner)
    secrets.push(session.cookie.split("=")[1])
    const as = await ownerSession()
    const created = await as("create_api_key", { name: "replayed" })
    secrets.push(created.body.rawKey)
    const rotate = () => callWithKey(session.cookie, "/v1/acme/main/api-keys/rotate", { keyPublicId: created.body.publicId }, `rotate-${created.body.publicId}`)
    const first = await rotate()
    expect(first.status).toBe(200)
    secrets.push(first.body.rawKey)
    const replayed = await rotate()
    expect([replayed.status, replayed.body.error.code, replayed.body.error.reason]).toEqual([409, "conflict", "idempotent_replay_secret"])
    expect(replayed.body.error.message).toContain(first.body.publicId)
    expect(JSON.stringify(replayed.body)).not.toContain("svc_")
    expect(await whoamiStatus(first.body.rawKey)).toBe(200)
    const listed = await as("api_key/list", {})
    expect(listed.body.keys.filter((k: any) => k.supersedes === created.body.publicId).map((k: any) => k.publicId)).toEqual([first.body.publicId])
  })

  it("acknowledging with the new key's id stops the old key at once, and records api_key.revoked once", async () => {
    const as = await ownerSession()
    const created = await as("create_api_key", { name: "ci" })
    const rotated = await as("api-keys/rotate", { keyPublicId: created.body.publicId })
    secrets.push(created.body.rawKey, rotated.body.rawKey)
    expect(await whoamiStatus(created.body.rawKey)).toBe(200)

    // the OLD key's id is not an acknowledgement
    const wrong = await as("api-keys/rotate/acknowledge", { keyPublicId: created.body.publicId })
    expect([wrong.status, wrong.body.error.reason]).toEqual([400, "not_a_rotation"])

    const ack = await as("api-keys/rotate/acknowledge", { keyPublicId: rotated.body.publicId })
    expect(ack.status).toBe(200)
    expect(ack.body).toEqual({ acknowledged: true, keyPublicId: rotated.body.publicId, revokedKeyPublicId: created.body.publicId })
    const stopped = await call(node.baseUrl, created.body.rawKey, "/v1/auth/whoami")
    expect([stopped.status, stopped.body.error.reason]).toEqual([401, "invalid_credential"])
    expect(await whoamiStatus(rotated.body.rawKey)).toBe(200)

    // a second acknowledgement changes nothing
    expect((await as("api-keys/rotate/acknowledge", { keyPublicId: rotated.body.publicId })).status).toBe(200)
    const records = await revocationsOf(created.body.publicId)
    expect(records.map((r: any) => [r.kind, r.event, r.detail.reason, r.userId])).toEqual([["security", "api_key.revoked", "rotation_acknowledged", owner.userId]])
  })

  it("revoking (DELETE with a JSON body) stops a key at once and records api_key.revoked once", async () => {
    const as = await ownerSession()
    const created = await as("create_api_key", { name: "temporary" })
    secrets.push(created.body.rawKey)
    expect(await whoamiStatus(created.body.rawKey)).toBe(200)
    const revoked = await as("api-keys/revoke", { keyPublicId: created.body.publicId }, "DELETE")
    expect(revoked.status).toBe(200)
    expect(await whoamiStatus(created.body.rawKey)).toBe(401)
    expect((await as("api-keys/revoke", { keyPublicId: created.body.publicId }, "DELETE")).status).toBe(200)
    expect(await revocationsOf(created.body.publicId)).toHaveLength(1)
    const listed = await as("api_key/list", {})
    expect(listed.body.keys.find((k: any) => k.publicId === created.body.publicId).status).toBe("revoked")
  })

  it("an ordinary key cannot rotate, acknowledge or revoke, and a bad id changes nothing", async () => {
    const as = await ownerSession()
    const created = await as("create_api_key", { name: "untouchable" })
    secrets.push(created.body.rawKey)
    for (const [path, method] of [["api-keys/rotate", "POST"], ["api-keys/rotate/acknowledge", "POST"], ["api-keys/revoke", "DELETE"]] as const) {
      const response = await fetch(`${node.baseUrl}/v1/acme/main/${path}`, {
        method,
        headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}`, "content-type": "application/json" },
        body: JSON.stringify({ keyPublicId: created.body.publicId })
      })
      const body: any = await response.json()
      expect([response.status, body.error.code, body.error.reason]).toEqual([403, "forbidden", "session_required"])
    }
    const bad = await as("api-keys/revoke", { keyPublicId: "not-a-key" }, "DELETE")
    expect([bad.status, bad.body.error.reason]).toEqual([400, "invalid_input"])
    const unknown = await as("api-keys/revoke", { keyPublicId: `aky_${"0".repeat(32)}` }, "DELETE")
    expect([unknown.status, unknown.body.error.reason]).toEqual([404, "api_key_not_found"])
    expect(await whoamiStatus(created.body.rawKey)).toBe(200)
  })
})

describe("two-factor at sign-in", () => {
  it("enrols with a TOTP secret, then asks for a code at every sign-in", async () => {
    const person = await addPerson(node, "tess", { org: "member", workspace: "member" })
    secrets.push(person.password)
    const session = await signIn(node.baseUrl, person)
    secrets.push(session.cookie.split("=")[1])
    const enrol = await callWithCookie(node.baseUrl, session.cookie, "/v1/auth/mfa/enroll", {})
    expect(enrol.status).toBe(200)
    secrets.push(enrol.body.secret)
    expect(enrol.body.otpauthUri).toMatch(/^otpauth:\/\/totp\//)
    const wrong = await callWithCookie(node.baseUrl, session.cookie, "/v1/auth/mfa/confirm", { code: "000000" })
    expect([wrong.status, wrong.body.error.reason]).toEqual([400, "invalid_mfa_code"])
    const code = () => newTotp(enrol.body.secret).generate({ timestamp: time.now() })
    expect((await callWithCookie(node.baseUrl, session.cookie, "/v1/auth/mfa/confirm", { code: code() })).status).toBe(200)

    const withoutCode = await signIn(node.baseUrl, person)
    expect([withoutCode.status, withoutCode.body.error.reason]).toEqual([401, "mfa_code_required"])
    expect(withoutCode.setCookie).toBe("")
    const badCode = await signIn(node.baseUrl, person, "123456" === code() ? "654321" : "123456")
    expect([badCode.status, badCode.body.error.reason]).toEqual([401, "invalid_credential"])
    const withCode = await signIn(node.baseUrl, person, code())
    expect(withCode.status).toBe(200)
    secrets.push(withCode.cookie.split("=")[1])
  })

  it("a replayed enrolment (same Idempotency-Key) answers 409 idempotent_replay_secret: the first answer's secret is the one that confirms", async () => {
    const person = await addPerson(node, "vera", { org: "member" })
    secrets.push(person.password)
    const session = await signIn(node.baseUrl, person)
    secrets.push(session.cookie.split("=")[1])
    const enrol = () => callWithKey(session.cookie, "/v1/auth/mfa/enroll", {}, "enrol-once")
    const first = await enrol()
    expect(first.status).toBe(200)
    secrets.push(first.body.secret)
    const replayed = await enrol()
    expect([replayed.status, replayed.body.error.code, replayed.body.error.reason]).toEqual([409, "conflict", "idempotent_replay_secret"])
    expect(replayed.body).not.toHaveProperty("secret")
    const code = newTotp(first.body.secret).generate({ timestamp: time.now() })
    expect((await callWithCookie(node.baseUrl, session.cookie, "/v1/auth/mfa/confirm", { code })).status).toBe(200)
    expect((await signIn(node.baseUrl, person, code)).status).toBe(200)
  })

  it("records sign-ins and failed sign-ins in the organization's audit log, never the password", async () => {
    const person = await addPerson(node, "uma", { org: "member" })
    secrets.push(person.password)
    expect((await signIn(node.baseUrl, { ...person, password: "wrong horse battery" })).status).toBe(401)
    expect((await signIn(node.baseUrl, person)).status).toBe(200)
    await settle()
    const as = await ownerSession()
    const entries = (await as("audit/list", { kind: "security", userId: person.userId })).body.entries
    expect(entries.map((e: any) => e.event).sort()).toEqual(["auth.sign_in_failed", "session.started"])
    expect(JSON.stringify(entries)).not.toContain("wrong horse battery")
  })
})

describe("no secret is stored or printed", () => {
  it("the database and the node's output hold no raw key, password, TOTP secret or cookie", async () => {
    await settle()
    expect(secrets.length).toBeGreaterThan(10)
    const tables = await node.db.sql`
      select table_schema, table_name from information_schema.tables
      where table_schema in (${node.db.schema}, ${`${node.db.schema}_log`}) and table_type = 'BASE TABLE'`
    expect(tables.length).toBeGreaterThan(10)
    let dump = ""
    for (const t of tables) {
      const rows = await node.db.sql`select * from ${node.db.sql(t.table_schema)}.${node.db.sql(t.table_name)}`
      dump += JSON.stringify(rows)
    }
    expect(dump.length).toBeGreaterThan(1000)
    const printed = output.join("\n")
    for (const secret of secrets) {
      expect(dump.includes(secret), `a secret is stored: ${secret.slice(0, 6)}...`).toBe(false)
      expect(printed.includes(secret), `a secret was printed: ${secret.slice(0, 6)}...`).toBe(false)
    }
  })
})
