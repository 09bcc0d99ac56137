/**
 * The node's log, as `npm start` writes it: a real process (`bin/main.ts`, embedded log, at
 * `LOG_LEVEL=debug`) with its output in a file. Secrets go in and out of it (sign-in, keys created,
 * rotated and presented, a TOTP secret, a device login), requests fail (401, 400, 404, 413, and a
 * 503), and then: every line of the output is a JSON object, every request has exactly one line
 * with the id its answer's `X-Request-Id` carried, and no secret, cookie or token is anywhere in it.
 */
import { randomBytes } from "node:crypto"
import { mkdtemp, readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ClusterProcess, killClusterProcesses, startClusterProcess, until } from "../support/cluster.ts"
import { uniqueName } from "../support/env.ts"

interface Answered {
  readonly requestId: string
  readonly status: number
  readonly body: any
  readonly setCookie: string | null
}

let proc: ClusterProcess
let logFile: string
let bootstrap: { orgSlug: string; workspaceSlug: string; ownerEmail: string; ownerPassword: string; workspaceKey: string; orgKey: string }
/** Every request the test made, by the id its answer carried. */
const answered: Array<Answered> = []
/** Every secret the node handed out or was handed. */
const secrets: Array<string> = []

const send = async (route: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answered> => {
  const response = await fetch(`${proc.baseUrl}${route}`, { method: init.method ?? "POST", headers: { "content-type": "application/json", ...init.headers }, body: init.body })
  const text = await response.text()
  const reply = {
    requestId: response.headers.get("x-request-id") ?? "",
    status: response.status,
    body: text.startsWith("{") ? JSON.parse(text) : text,
    setCookie: response.headers.get("set-cookie")
  }
  answered.push(reply)
  return reply
}

const place = (route: string) => `/v1/${bootstrap.orgSlug}/${bootstrap.workspaceSlug}/${route}`

const linesOf = async () => (await readFile(logFile, "utf8")).split("\n").filter((line) => line !== "")

beforeAll(async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), "svc-logs-"))
  const schema = uniqueName("t")
  proc = await startClusterProcess({ name: "node", dataDir, schema, prefix: schema, partitions: 4, env: { KAFKA_BROKERS: "", LOG_LEVEL: "debug" } })
  logFile = path.join(dataDir, "node.log")
  bootstrap = JSON.parse(await readFile(path.join(dataDir, "bootstrap.json"), "utf8"))
  secrets.push(bootstrap.ownerPassword, bootstrap.workspaceKey, bootstrap.orgKey)

  const signedIn = await send("/v1/auth/sign-in", { body: JSON.stringify({ email: bootstrap.ownerEmail, password: bootstrap.ownerPassword }) })
  expect(signedIn.status).toBe(200)
  const cookie = signedIn.setCookie!.split(";")[0]
  secrets.push(cookie.split("=")[1])
  const asOwner = (route: string, input: unknown, headers: Record<string, string> = {}) => send(place(route), { headers: { cookie, ...headers }, body: JSON.stringify(input) })

  const created = await asOwner("create_api_key", { name: "deploy bot" }, { "idempotency-key": "logs-create" })
  expect(created.status).toBe(200)
  secrets.push(created.body.rawKey)
  const rotated = await asOwner("api-keys/rotate", { keyPublicId: created.body.publicId })
  expect(rotated.status).toBe(200)
  secrets.push(rotated.body.rawKey)
  for (const key of [created.body.rawKey, rotated.body.rawKey, bootstrap.workspaceKey]) {
    expect((await send("/v1/auth/whoami", { method: "GET", headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
  }
  expect((await asOwner("api-keys/rotate/acknowledge", { keyPublicId: rotated.body.publicId })).status).toBe(200)
  expect((await send("/v1/auth/whoami", { method: "GET", headers: { authorization: `Bearer ${created.body.rawKey}` } })).status).toBe(401)

  const enrolled = await send("/v1/auth/mfa/enroll", { headers: { cookie }, body: "{}" })
  expect(enrolled.status).toBe(200)
  secrets.push(enrolled.body.secret)
  const device = await send("/v1/auth/device/code", { body: JSON.stringify({ clientName: "laptop" }) })
  expect(device.status).toBe(200)
  secrets.push(device.body.device_code, device.body.user_code)
  expect((await send("/v1/auth/device/token", { body: JSON.stringify({ device_code: device.body.device_code }) })).status).toBe(400)

  // failures: a wrong password, an unknown key, a key in the query string, a body that is no JSON,
  // one too large, an unknown route, and a read whose read models cannot catch up (503)
  const wrongPassword = `wrong-${randomBytes(8).toString("hex")}`
  secrets.push(wrongPassword)
  expect((await send("/v1/auth/sign-in", { body: JSON.stringify({ email: bootstrap.ownerEmail, password: wrongPassword }) })).status).toBe(401)
  const unknownKey = `svc_${randomBytes(48).toString("base64url")}`
  secrets.push(unknownKey)
  expect((await send("/v1/auth/whoami", { method: "GET", headers: { authorization: `Bearer ${unknownKey}` } })).status).toBe(401)
  expect((await send(`/v1/auth/whoami?access_token=${unknownKey}`, { method: "GET" })).status).toBe(401)
  expect((await asOwner("api_key/list", undefined, {})).status).toBe(400)
  expect((await send(place("node/create"), { headers: { authorization: `Bearer ${bootstrap.workspaceKey}` }, body: `{"password":"${wrongPassword}"` })).status).toBe(400)
  expect((await send(place("node/create"), { headers: { authorization: `Bearer ${bootstrap.workspaceKey}` }, body: "x".repeat(2 * 1024 * 1024) })).status).toBe(413)
  expect((await send("/v1/nowhere/at/all", { headers: { cookie } })).status).toBe(404)
  const behind = await asOwner("api_key/list", {}, { "svc-position": "0:999999999", "x-request-id": "client-chosen.id-1" })
  expect([behind.status, behind.body.error.reason]).toEqual([503, "read_model_behind"])
  expect(behind.requestId).toBe("client-chosen.id-1")
}, 120_000)

afterAll(() => killClusterProcesses(proc === undefined ? [] : [proc]))

describe("the node's log", () => {
  it("is one JSON object per line, each with a time, a level, a message and the node", async () => {
    // the last request's line is written as it is answered; the file follows the process's stdout
    await until("every request's line", async () => ((await linesOf()).some((line) => line.includes("client-chosen.id-1")) ? true : undefined), 10_000)
    const lines = await linesOf()
    expect(lines.length).toBeGreaterThan(answered.length)
    for (const line of lines) {
      let parsed: any
      expect(() => (parsed = JSON.parse(line)), line).not.toThrow()
      expect(parsed, line).toMatchObject({ time: expect.any(String), level: expect.stringMatching(/^(trace|debug|info|warn|error|fatal)$/), message: expect.any(String), node: "node" })
    }
  })

  it("has exactly one line per request, under the id its answer carried, with its route pattern, status, duration and bytes", async () => {
    const requests = (await linesOf()).map((line) => JSON.parse(line)).filter((line) => line.message === "request")
    expect(new Set(answered.map((a) => a.requestId)).size).toBe(answered.length)
    for (const { requestId, status } of answered) {
      const mine = requests.filter((line) => line.requestId === requestId)
      expect(mine.map((line) => line.status), requestId).toEqual([status])
      expect(mine[0]).toMatchObject({ method: expect.any(String), route: expect.stringMatching(/^\//), durationMs: expect.any(Number), bytes: expect.any(Number) })
      expect(mine[0].level).toBe(status >= 500 ? "error" : "info")
    }
    // a capability call names its capability and invocation; the query string is never logged
    expect(requests.find((line) => line.capability === "api_key.rotate")).toMatchObject({
      route: "/v1/:orgSlug/:workspaceSlug/api-keys/rotate",
      invocationId: expect.stringMatching(/^inv_/)
    })
    expect(requests.some((line) => String(line.route).includes("?"))).toBe(false)
    // the 503 says what failed, by tag and message
    expect(requests.find((line) => line.requestId === "client-chosen.id-1")).toMatchObject({
      level: "error",
      status: 503,
      error: { tag: "DbError", message: expect.stringContaining("read model") }
    })
  })

  it("holds no raw key, password, TOTP secret, device code, session cookie or token", async () => {
    const log = (await readFile(logFile, "utf8"))
    expect(secrets.length).toBeGreaterThan(10)
    for (const secret of secrets) expect(log.includes(secret), `a secret was logged: ${secret.slice(0, 6)}...`).toBe(false)
    expect(log).not.toMatch(/(svc|ses|dvc)_[A-Za-z0-9_-]{16,}/)
    expect(log).not.toMatch(/bearer\s+[A-Za-z0-9._~+/-]/i)
  })
})
