/**
 * The CLI login (`cli_session_v1`, spec 5 rule 8) end to end over HTTP against a real node: the
 * RFC 8628 device flow (code, polls, approval by a person signed in with a browser session),
 * the credential it issues acting as that person with their live memberships, and every refusal
 * on the way. The node runs on a clock the suite can move forward, for `slow_down` and expiry.
 */
import { Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { IssueCredential } from "../../actors/apikey/protocol.ts"
import { DeviceActor } from "../../actors/device/actor.ts"
import { keyOf } from "../../actors/kernel.ts"
import { OrgActor } from "../../actors/org/actor.ts"
import { SetWorkspaceRole } from "../../actors/org/protocol.ts"
import { mintApiKey, newPublicId } from "../../src/identity/ApiKeyToken.ts"
import { steppedClock } from "../support/clock.ts"
import { addPerson, bootstrapPlace, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { eventsOf, eventually, expectError, type Reply, send } from "./client.ts"

let node: TestNode
const time = steppedClock()
let orgId: string
let workspaceId: string
let carol: Person
let carolCookie: string

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

const requestCode = async (clientName?: string) => {
  const reply = await send(node, "/v1/auth/device/code", json(clientName === undefined ? {} : { clientName }))
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number }
}

const poll = (deviceCode: string) => send(node, "/v1/auth/device/token", json({ device_code: deviceCode }))

/** Asserts an RFC 8628 error body. */
const expectOAuthError = (reply: Reply, error: string) => {
  expect({ status: reply.status, error: reply.body?.error }, JSON.stringify(reply.body)).toEqual({ status: 400, error })
  expect(Object.keys(reply.body).sort()).toEqual(["error", "error_description"])
}

const place = (path: string) => `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${path}`

const approve = (cookie: string, userCode: string, level?: "workspace" | "organization") =>
  callWithCookie(node.baseUrl, cookie, place("auth/device/approve"), level === undefined ? { userCode } : { userCode, level })

const deny = (cookie: string, userCode: string) => callWithCookie(node.baseUrl, cookie, place("auth/device/deny"), { userCode })

const withKey = (key: string, path: string, body?: unknown) =>
  send(node, path, body === undefined
    ? { headers: { authorization: `Bearer ${key}` } }
    : { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) })

const whoami = (key: string) => withKey(key, "/v1/auth/whoami")

/** A full login: code, approval by `cookie`, first poll. Returns the credential. */
const login = async (cookie: string, level?: "workspace" | "organization", clientName = "svc-cli") => {
  const code = await requestCode(clientName)
  const approved = await approve(cookie, code.user_code, level)
  expect(approved.status, JSON.stringify(approved.body)).toBe(200)
  const token = await poll(code.device_code)
  expect(token.status, JSON.stringify(token.body)).toBe(200)
  return token.body as { access_token: string; key_id: string }
}

const setWorkspaceRole = (userId: string, role: "admin" | "member" | "viewer") =>
  Runtime.runPromise(node.runtime)(
    node.host.send(OrgActor, orgId, new SetWorkspaceRole({ orgId, workspaceId, userId, role }), {
      commandId: randomUUID(),
      at: new Date(time.now()).toISOString(),
      actor: "system"
    })
  )

beforeAll(async () => {
  node = await startTestNode({}, { clock: time.clock })
  ;({ orgId, workspaceId } = await bootstrapPlace(node))
  carol = await addPerson(node, "carol", { org: "member", workspace: "member" })
  carolCookie = (await signIn(node.baseUrl, carol)).cookie
})

afterAll(async () => {
  await node?.stop()
})

describe("the code route", () => {
  it("returns a device code, a user code and where to enter it; stores only the device code's hash", async () => {
    const response = await fetch(`${node.baseUrl}/v1/auth/device/code`, json({ clientName: "  laptop cli  " }))
    expect(response.status).toBe(200)
    expect(response.headers.get("cache-control")).toBe("no-store")
    const code = (await response.json()) as any
    expect(code).toEqual({
      device_code: expect.stringMatching(/^dvc_[A-Za-z0-9_-]{64}$/),
      user_code: expect.stringMatching(USER_CODE),
      verification_uri: `${node.baseUrl}/device`,
      verification_uri_complete: `${node.baseUrl}/device?user_code=${code.user_code}`,
      expires_in: 600,
      interval: 5
    })
    const [row] = await node.db.sql`select * from ${node.db.table("device_authorizations")} where user_code = ${code.user_code}`
    expect(row).toMatchObject({ status: "pending", client_name: "laptop cli", user_id: null, key_id: null, org_id: null })
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(600_000)
    expect(JSON.stringify(row)).not.toContain(code.device_code)
    expect(JSON.stringify(await eventsOf(node, keyOf(DeviceActor, row.device_id)))).not.toContain(code.device_code)
  })

  it("takes no body at all, and names a nameless client CLI", async () => {
    const reply = await send(node, "/v1/auth/device/code", { method: "POST" })
    expect(reply.status).toBe(200)
    const [row] = await node.db.sql`select client_name from ${node.db.table("device_authorizations")} where user_code = ${reply.body.user_code}`
    expect(row.client_name).toBe("CLI")
  })

  it("refuses a client name that is empty, too long or not printable, in the platform's error shape", async () => {
    for (const clientName of ["   ", "x".repeat(101), "bad\u0007name", 42]) {
      expectError(await send(node, "/v1/auth/device/code", json({ clientName })), 400, "bad_request", "invalid_input")
    }
    expectError(await send(node, "/v1/auth/device/code", { method: "POST", headers: { "content-type": "application/json" }, body: "{" }), 400, "bad_request", "invalid_json")
  })
})

describe("the whole flow", () => {
  it("pending, slow_down, approval by a signed-in person, a token acting as that person, then invalid_grant", async () => {
    const code = await requestCode("svc-cli e2e")
    expectOAuthError(await poll(code.device_code), "authorization_pending")
    // polled again at once: slower, please (a pending device only)
    expectOAuthError(await poll(code.device_code), "slow_down")
    time.advance(5_000)
    expectOAuthError(await poll(code.device_code), "authorization_pending")

    // carol, signed in in a browser, enters the code (in any case, with or without the dash)
    const approved = await approve(carolCookie, code.user_code.toLowerCase().replace("-", ""))
    expect(approved).toEqual({
      status: 200,
      body: { userCode: code.user_code, clientName: "svc-cli e2e", status: "approved", level: "workspace", orgId, workspaceId }
    })

    // the next poll (however soon) collects the credential
    const response = await fetch(`${node.baseUrl}/v1/auth/device/token`, json({ device_code: code.device_code }))
    expect(response.status).toBe(200)
    expect(response.headers.get("cache-control")).toBe("no-store")
    const token = (await response.json()) as any
    expect(token).toEqual({
      access_token: expect.stringMatching(/^svc_/),
      token_type: "Bearer",
      key_id: expect.stringMatching(/^aky_/),
      expires_in: 30 * 24 * 60 * 60
    })

    // it is carol
    expect(await whoami(token.access_token)).toEqual({
      status: 200,
      body: { authenticated: true, apiKeyId: token.key_id, orgId, workspaceId, userId: carol.userId }
    })

    // a capability call works and is attributed to carol, as a CLI login
    const listed = await withKey(token.access_token, place("node/list"), {})
    expect(listed.status, JSON.stringify(listed.body)).toBe(200)
    const audit = await eventually(
      () => node.db.sql`select capability, user_id, principal_kind, outcome from ${node.db.table("audit_log")}
        where api_key_id = ${token.key_id} and kind = 'capability'`,
      (rows) => rows.length >= 2
    )
    expect(audit).toEqual(
      expect.arrayContaining([{ capability: "node.list", user_id: carol.userId, principal_kind: "cli_login", outcome: "succeeded" }])
    )

    // one credential per device code
    expectOAuthError(await poll(code.device_code), "invalid_grant")

    // the key: a cli_session_v1 credential made by carol for main, for 30 days, stored as a hash
    const [key] = await node.db.sql`select * from ${node.db.table("api_keys")} where key_id = ${token.key_id}`
    expect(key).toMatchObject({
      org_id: orgId,
      workspace_id: workspaceId,
      created_by: carol.userId,
      name: "CLI login (svc-cli e2e)",
      purpose: "cli_session_v1",
      scopes: { purpose: "cli_session_v1" },
      status: "active"
    })
    expect(key.expires_at.getTime() - key.created_at.getTime()).toBe(30 * 24 * 60 * 60 * 1000)
    const [device] = await node.db.sql`select * from ${node.db.table("device_authorizations")} where user_code = ${code.user_code}`
    expect(device).toMatchObject({ status: "redeemed", user_id: carol.userId, org_id: orgId, workspace_id: workspaceId, key_id: token.key_id })
    // the raw key is nowhere: not in the read models' rows, not in the log
    expect(JSON.stringify([key, device])).not.toContain(token.access_token)
    const logged = [...(await eventsOf(node, keyOf(ApiKeyActor, token.key_id))), ...(await eventsOf(node, keyOf(DeviceActor, device.device_id)))]
    expect(logged.map((e) => e.type)).toEqual(["api_key.created", "device.requested", "device.approved", "device.redeemed"])
    expect(JSON.stringify(logged)).not.toContain(token.access_token)
    // the key's creation is a security record of carol's in the organization's audit log
    const [created] = await node.db.sql`select user_id, principal_kind from ${node.db.table("audit_log")}
      where kind = 'security' and event = 'api_key.created' and detail->>'keyId' = ${token.key_id}`
    expect(created).toEqual({ user_id: carol.userId, principal_kind: "user" })
  })

  it("accepts an OAuth client's form-encoded poll with the device grant type", async () => {
    const code = await requestCode()
    const form = (body: string) =>
      send(node, "/v1/auth/device/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body })
    expectOAuthError(
      await form(`grant_type=${encodeURIComponent("urn:ietf:params:oauth:grant-type:device_code")}&device_code=${code.device_code}&client_id=svc-cli`),
      "authorization_pending"
    )
    expectOAuthError(await form(`grant_type=password&device_code=${code.device_code}`), "unsupported_grant_type")
  })

  it("answers a missing, malformed or unknown device code in RFC 8628's shape", async () => {
    expectOAuthError(await send(node, "/v1/auth/device/token", json({})), "invalid_request")
    expectOAuthError(await send(node, "/v1/auth/device/token", { method: "POST", headers: { "content-type": "application/json" }, body: "{" }), "invalid_request")
    expectOAuthError(await poll("not-a-code"), "invalid_grant")
    expectOAuthError(await poll(`dvc_${"A".repeat(64)}`), "invalid_grant")
    // the right lookup id with a wrong secret
    const code = await requestCode()
    expectOAuthError(await poll(`${code.device_code.slice(0, 20)}${"A".repeat(code.device_code.length - 20)}`), "invalid_grant")
  })
})

describe("who may approve", () => {
  it("not an ordinary API key: 403 session_required", async () => {
    const code = await requestCode()
    expectError(await withKey(node.bootstrap.workspaceKey, place("auth/device/approve"), { userCode: code.user_code }), 403, "forbidden", "session_required")
    expectError(await withKey(node.bootstrap.workspaceKey, place("auth/device/deny"), { userCode: code.user_code }), 403, "forbidden", "session_required")
    expectOAuthError(await poll(code.device_code), "authorization_pending")
  })

  it("not a CLI login: one CLI login cannot mint another", async () => {
    const cli = await login(carolCookie)
    const code = await requestCode()
    expectError(await withKey(cli.access_token, place("auth/device/approve"), { userCode: code.user_code }), 403, "forbidden", "session_required")
    expectError(await withKey(cli.access_token, place("auth/device/deny"), { userCode: code.user_code }), 403, "forbidden", "session_required")
    expectOAuthError(await poll(code.device_code), "authorization_pending")
    // refusals are audited as the CLI login's
    const audit = await eventually(
      () => node.db.sql`select outcome, error_tag from ${node.db.table("audit_log")}
        where api_key_id = ${cli.key_id} and capability = 'auth.device.approve'`,
      (rows) => rows.length >= 1
    )
    expect(audit).toEqual([{ outcome: "failed", error_tag: "Forbidden" }])
  })

  it("not a signed-in person outside the organization: 403 not_a_member", async () => {
    const stranger = await addPerson(node, "stranger")
    const cookie = (await signIn(node.baseUrl, stranger)).cookie
    const code = await requestCode()
    expectError(await approve(cookie, code.user_code), 403, "forbidden", "not_a_member")
  })

  it("an unknown or malformed user code: 404 device_code_not_found", async () => {
    expectError(await approve(carolCookie, "BCDF-GHJK"), 404, "not_found", "device_code_not_found")
    expectError(await approve(carolCookie, "AEIO-U123"), 404, "not_found", "device_code_not_found")
    expectError(await deny(carolCookie, "nothing"), 404, "not_found", "device_code_not_found")
    expectError(await approve(carolCookie, ""), 404, "not_found", "device_code_not_found")
  })

  it("without a session at all: 401", async () => {
    const code = await requestCode()
    expectError(await send(node, place("auth/device/approve"), json({ userCode: code.user_code })), 401, "unauthorized", "missing_credential")
  })

  it("approving twice is the same approval; someone else cannot approve it again", async () => {
    const code = await requestCode()
    expect((await approve(carolCookie, code.user_code)).status).toBe(200)
    expect((await approve(carolCookie, code.user_code)).body).toMatchObject({ status: "approved", level: "workspace" })
    const dave = await addPerson(node, "dave", { org: "member", workspace: "member" })
    const daveCookie = (await signIn(node.baseUrl, dave)).cookie
    expectError(await approve(daveCookie, code.user_code), 409, "conflict", "device_already_approved")
    expectError(await approve(carolCookie, code.user_code, "organization"), 409, "conflict", "device_already_approved")
    expectError(await deny(daveCookie, code.user_code), 409, "conflict", "device_already_approved")
    const token = await poll(code.device_code)
    expect(token.status).toBe(200)
    expect((await whoami(token.body.access_token)).body.userId).toBe(carol.userId)
  })
})

describe("denial", () => {
  it("the CLI is told access_denied, and the code cannot be approved after", async () => {
    const code = await requestCode()
    expect(await deny(carolCookie, code.user_code)).toEqual({
      status: 200,
      body: { userCode: code.user_code, clientName: "CLI", status: "denied" }
    })
    // denying twice is one denial
    expect((await deny(carolCookie, code.user_code)).status).toBe(200)
    expectOAuthError(await poll(code.device_code), "access_denied")
    expectError(await approve(carolCookie, code.user_code), 409, "conflict", "device_denied")
    expectOAuthError(await poll(code.device_code), "access_denied")
    const [row] = await node.db.sql`select status, user_id, key_id from ${node.db.table("device_authorizations")} where user_code = ${code.user_code}`
    expect(row).toEqual({ status: "denied", user_id: carol.userId, key_id: null })
  })
})

describe("the person's live memberships decide what a CLI login may do", () => {
  it("an organization-level login: no workspace role, no workspace data; granted a role, the same login reads it", async () => {
    const erin = await addPerson(node, "erin", { org: "member" })
    const cookie = (await signIn(node.baseUrl, erin)).cookie
    const orgLevel = await login(cookie, "organization")
    const workspaceLevel = await login(cookie, "workspace")
    expect((await whoami(orgLevel.access_token)).body).toEqual({ authenticated: true, apiKeyId: orgLevel.key_id, orgId, workspaceId: null, userId: erin.userId })
    expect((await whoami(workspaceLevel.access_token)).body).toMatchObject({ workspaceId, userId: erin.userId })
    // erin is an organization member with no role in main: both logins are refused its data
    expectError(await withKey(orgLevel.access_token, place("node/list"), {}), 403, "forbidden", undefined)
    expectError(await withKey(workspaceLevel.access_token, place("node/list"), {}), 403, "forbidden", undefined)
    // made a viewer of main, the same logins can read, but not write
    await setWorkspaceRole(erin.userId, "viewer")
    expect((await withKey(orgLevel.access_token, place("node/list"), {})).status).toBe(200)
    expect((await withKey(workspaceLevel.access_token, place("node/list"), {})).status).toBe(200)
    expectError(await withKey(workspaceLevel.access_token, place("node/create"), { label: "x", properties: {} }), 403, "forbidden", undefined)
  })

  it("a login whose person is not a member of the organization is refused: not_a_member", async () => {
    // The device flow cannot make one (approving needs membership, above), and there is no way
    // yet to leave an organization; so the credential is issued directly, as the token route does.
    const mallory = await addPerson(node, "mallory")
    const keyId = newPublicId("aky")
    const key = mintApiKey()
    await Runtime.runPromise(node.runtime)(
      node.host.send(ApiKeyActor, keyId, new IssueCredential({
        keyId,
        orgId,
        workspaceId,
        createdBy: mallory.userId,
        name: "CLI login (test)",
        lookupId: key.lookupId,
        secretHash: key.secretHash,
        scopes: { purpose: "cli_session_v1" },
        expiresAt: new Date(time.now() + 86_400_000).toISOString(),
        customRole: null,
        machineId: null,
        supersedes: null
      }), { commandId: randomUUID(), at: new Date(time.now()).toISOString(), actor: `user:${mallory.userId}` })
    )
    expectError(await withKey(key.raw, place("node/list"), {}), 403, "forbidden", "not_a_member")
    expectError(await whoami(key.raw), 403, "forbidden", "not_a_member")
  })
})

describe("expiry (the clock moves on for the rest of the suite)", () => {
  it("after ten minutes a code is expired_token, and can be neither approved nor denied", async () => {
    const pending = await requestCode()
    const approvedOnly = await requestCode()
    expect((await approve(carolCookie, approvedOnly.user_code)).status).toBe(200)
    time.advance(600_000)
    expectOAuthError(await poll(pending.device_code), "expired_token")
    expectOAuthError(await poll(approvedOnly.device_code), "expired_token")
    expectError(await approve(carolCookie, pending.user_code), 409, "conflict", "device_code_expired")
    expectError(await deny(carolCookie, pending.user_code), 409, "conflict", "device_code_expired")
    // no key was issued for the approved one
    const [row] = await node.db.sql`select status, key_id from ${node.db.table("device_authorizations")} where user_code = ${approvedOnly.user_code}`
    expect(row).toEqual({ status: "approved", key_id: null })
  })
})
