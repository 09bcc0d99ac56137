/**
 * Spec 5, as one table: every credential kind against every route class, with the status and
 * reason a caller sees. Credentials are made the way the platform makes them (sign-in over HTTP,
 * the actors' commands, the operator's issuing path); only the unknown-purpose key is appended to
 * the log directly, since nothing in this version can issue one.
 */
import { Effect, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { ApiKeyCreated } from "../../actors/apikey/events.ts"
import { IssueCredential, RevokeApiKey, RotateApiKey } from "../../actors/apikey/protocol.ts"
import { encodeEvent, keyOf } from "../../actors/kernel.ts"
import { mintApiKey, newPublicId } from "../../src/identity/ApiKeyToken.ts"
import { issueCredential } from "../../src/identity/IssueCredential.ts"
import { sessionCookie, startSession } from "../../src/identity/Sessions.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { call } from "../support/http.ts"
import { addPerson, bootstrapPlace, type Person, signIn } from "../support/people.ts"
import { addKey, addWorkspace } from "../support/places.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { caughtUp } from "../support/projection.ts"

type Credential = { readonly bearer: string } | { readonly cookie: string }

let node: TestNode
let run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
let place: { orgId: string; workspaceId: string }
let admin: Person
let cliKeyId: string
const credentials = new Map<string, Credential>()

const meta = () => ({ commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })

/** An ordinary key of the `main` workspace, created by the admin, through the actor. */
const ordinaryKey = (overrides: Parameters<typeof addKey>[4] = {}) => addKey(node, place, admin.userId, "table key", overrides)

const cookieOf = (token: string) => sessionCookie({ sessionId: "", userId: "", token, expiresAt: new Date(Date.now() + 3600_000).toISOString() }, false).split(";")[0]

beforeAll(async () => {
  node = await startTestNode()
  run = (effect) => Runtime.runPromise(node.runtime)(effect as Effect.Effect<any, any, never>)
  place = await bootstrapPlace(node)
  await addWorkspace(node)

  admin = await addPerson(node, "admin", { org: "member", workspace: "admin" })
  const owner = await addPerson(node, "owner", { org: "owner" })
  const member = await addPerson(node, "member", { org: "member", workspace: "member" })
  credentials.set("owner session", { cookie: (await signIn(node.baseUrl, owner)).cookie })
  credentials.set("session", { cookie: (await signIn(node.baseUrl, admin)).cookie })
  // an SSO session is a session whose sign-in went through the organization's provider
  const sso = await run(startSession({ userId: member.userId, method: "sso", sso: { orgId: place.orgId, providerId: "sso_table" }, mfa: false }))
  credentials.set("SSO session", { cookie: cookieOf(sso.token) })

  // the CLI login's credential, as the device flow issues it: it acts as the admin
  const cli = mintApiKey()
  const cliId = newPublicId("aky")
  await run(node.host.send(ApiKeyActor, cliId, new IssueCredential({
    keyId: cliId,
    orgId: place.orgId,
    workspaceId: place.workspaceId,
    createdBy: admin.userId,
    name: "CLI login (table)",
    lookupId: cli.lookupId,
    secretHash: cli.secretHash,
    scopes: { purpose: "cli_session_v1" },
    expiresAt: null,
    customRole: null,
    machineId: null,
    supersedes: null
  }), meta()))
  credentials.set("CLI login", { bearer: cli.raw })
  cliKeyId = cliId
  credentials.set("workspace key", { bearer: node.bootstrap.workspaceKey })
  credentials.set("organization key", { bearer: node.bootstrap.orgKey })

  const org = node.bootstrap.orgSlug
  const ws = node.bootstrap.workspaceSlug
  credentials.set("host", { bearer: (await run(issueCredential({ orgSlug: org, workspaceSlug: ws, purpose: "svc_host_v1", machineId: "build-01" }))).rawKey })
  credentials.set("gateway", { bearer: (await run(issueCredential({ orgSlug: org, workspaceSlug: ws, purpose: "svc_gateway_v1" }))).rawKey })
  credentials.set("telemetry", { bearer: (await run(issueCredential({ orgSlug: org, purpose: "svc_telemetry_v1" }))).rawKey })

  // a credential with a purpose this version does not know (say, issued by a newer one)
  const unknown = mintApiKey()
  const unknownId = newPublicId("aky")
  await run(Effect.gen(function* () {
    const log = yield* EventLog
    const key = keyOf(ApiKeyActor, unknownId)
    const { type, payload } = encodeEvent(ApiKeyActor, new ApiKeyCreated({
      keyId: unknownId,
      orgId: place.orgId,
      workspaceId: place.workspaceId,
      createdBy: admin.userId,
      name: "from the future",
      lookupId: unknown.lookupId,
      secretHash: unknown.secretHash,
      scopes: { purpose: "svc_future_v9" },
      expiresAt: null,
      createdAt: new Date().toISOString(),
      customRole: null,
      machineId: null,
      supersedes: null
    }))
    yield* log.append(key, [{ key, seq: 1, firstSeq: 1, type, payload, at: new Date().toISOString(), commandId: randomUUID(), actor: "system" }])
  }))
  credentials.set("unknown purpose", { bearer: unknown.raw })

  const revoked = await ordinaryKey()
  await run(node.host.send(ApiKeyActor, revoked.keyId, new RevokeApiKey({ keyId: revoked.keyId }), meta()))
  credentials.set("revoked key", { bearer: revoked.raw })
  credentials.set("expired key", { bearer: (await ordinaryKey({ expiresAt: new Date(Date.now() - 1000).toISOString() })).raw })
  const rotated = await ordinaryKey()
  const successor = mintApiKey()
  await run(node.host.send(ApiKeyActor, rotated.keyId, new RotateApiKey({
    keyId: rotated.keyId,
    newKeyId: newPublicId("aky"),
    graceEndsAt: new Date(Date.now() + 3600_000).toISOString(),
    successor: { lookupId: successor.lookupId, secretHash: successor.secretHash, createdBy: admin.userId }
  }), meta()))
  credentials.set("in-grace old key", { bearer: rotated.raw })
  await run(caughtUp(node.db))
}, 120_000)

afterAll(() => node?.stop())

interface RouteClass {
  readonly method: "GET" | "POST" | "DELETE"
  readonly path: string
  readonly input: () => Promise<unknown> | unknown
}

const routes: Record<string, RouteClass> = {
  whoami: { method: "GET", path: "/v1/auth/whoami", input: () => undefined },
  "workspace data": { method: "POST", path: "/v1/acme/main/node/list", input: () => ({}) },
  "another workspace": { method: "POST", path: "/v1/acme/other/node/list", input: () => ({}) },
  "create key": { method: "POST", path: "/v1/acme/main/create_api_key", input: () => ({ name: "made in the table" }) },
  "rotate key": { method: "POST", path: "/v1/acme/main/api-keys/rotate", input: async () => ({ keyPublicId: (await ordinaryKey()).keyId }) },
  "audit log": { method: "POST", path: "/v1/acme/main/audit/list", input: () => ({ limit: 1 }) },
  "host call": { method: "POST", path: "/v1/acme/main/host/policy/get", input: () => ({}) },
  telemetry: { method: "POST", path: "/v1/acme/main/telemetry/ingest", input: () => ({ points: [{ name: "cpu", value: 0.5 }] }) }
}

// status and reason; "403" alone is `forbidden` with no reason (a role that does not allow it)
const expected: Record<string, Record<keyof typeof routes, string>> = {
  "owner session": { whoami: "401 missing_credential", "workspace data": "200", "another workspace": "200", "create key": "200", "rotate key": "200", "audit log": "200", "host call": "403", telemetry: "403" },
  session: { whoami: "401 missing_credential", "workspace data": "200", "another workspace": "403", "create key": "200", "rotate key": "200", "audit log": "403", "host call": "403", telemetry: "403" },
  "SSO session": { whoami: "401 missing_credential", "workspace data": "200", "another workspace": "403", "create key": "403", "rotate key": "403", "audit log": "403", "host call": "403", telemetry: "403" },
  "CLI login": { whoami: "200", "workspace data": "200", "another workspace": "403 key_scope_mismatch", "create key": "200", "rotate key": "200", "audit log": "403", "host call": "403", telemetry: "403" },
  "workspace key": { whoami: "200", "workspace data": "200", "another workspace": "403 key_scope_mismatch", "create key": "403", "rotate key": "403 session_required", "audit log": "403", "host call": "403", telemetry: "403" },
  "organization key": { whoami: "200", "workspace data": "403", "another workspace": "403", "create key": "403", "rotate key": "403 session_required", "audit log": "403", "host call": "403", telemetry: "403" },
  host: { whoami: "403 purpose_not_allowed", "workspace data": "403 purpose_not_allowed", "another workspace": "403 purpose_not_allowed", "create key": "403 purpose_not_allowed", "rotate key": "403 purpose_not_allowed", "audit log": "403 purpose_not_allowed", "host call": "200", telemetry: "403 purpose_not_allowed" },
  gateway: { whoami: "200", "workspace data": "200", "another workspace": "403 key_scope_mismatch", "create key": "403 purpose_not_allowed", "rotate key": "403 purpose_not_allowed", "audit log": "403 purpose_not_allowed", "host call": "403 purpose_not_allowed", telemetry: "403 purpose_not_allowed" },
  telemetry: { whoami: "403 purpose_not_allowed", "workspace data": "403 purpose_not_allowed", "another workspace": "403 purpose_not_allowed", "create key": "403 purpose_not_allowed", "rotate key": "403 purpose_not_allowed", "audit log": "403 purpose_not_allowed", "host call": "403 purpose_not_allowed", telemetry: "200" },
  "unknown purpose": { whoami: "403 unknown_purpose", "workspace data": "403 unknown_purpose", "another workspace": "403 unknown_purpose", "create key": "403 unknown_purpose", "rotate key": "403 unknown_purpose", "audit log": "403 unknown_purpose", "host call": "403 unknown_purpose", telemetry: "403 unknown_purpose" },
  "revoked key": { whoami: "401 invalid_credential", "workspace data": "401 invalid_credential", "another workspace": "401 invalid_credential", "create key": "401 invalid_credential", "rotate key": "401 invalid_credential", "audit log": "401 invalid_credential", "host call": "401 invalid_credential", telemetry: "401 invalid_credential" },
  "expired key": { whoami: "401 expired_credential", "workspace data": "401 expired_credential", "another workspace": "401 expired_credential", "create key": "401 expired_credential", "rotate key": "401 expired_credential", "audit log": "401 expired_credential", "host call": "401 expired_credential", telemetry: "401 expired_credential" },
  "in-grace old key": { whoami: "200", "workspace data": "200", "another workspace": "403 key_scope_mismatch", "create key": "403", "rotate key": "403 session_required", "audit log": "403", "host call": "403", telemetry: "403" }
}

const send = async (credential: Credential, route: RouteClass) => {
  const input = await route.input()
  const headers: Record<string, string> = { "content-type": "application/json" }
  if ("bearer" in credential) headers.authorization = `Bearer ${credential.bearer}`
  else headers.cookie = credential.cookie
  const response = await fetch(`${node.baseUrl}${route.path}`, {
    method: route.method,
    headers,
    body: input === undefined ? undefined : JSON.stringify(input)
  })
  const body: any = await response.json()
  return { status: response.status, body }
}

describe("credential kind x route class (spec 5)", () => {
  const cases = Object.entries(expected).flatMap(([kind, row]) =>
    Object.entries(row).map(([routeClass, outcome]) => [kind, routeClass, outcome] as const)
  )
  it.each(cases)("%s on %s: %s", async (kind, routeClass, outcome) => {
    const reply = await send(credentials.get(kind)!, routes[routeClass])
    const [status, reason] = outcome.split(" ")
    const seen = reply.status === 200 ? "200" : [String(reply.status), reply.body?.error?.reason].filter((x) => x !== undefined).join(" ")
    expect(seen, JSON.stringify(reply.body)).toBe(reason === undefined ? status : `${status} ${reason}`)
    if (reply.status === 403) expect(reply.body.error.code).toBe("forbidden")
    if (reply.status === 401) expect(reply.body.error.code).toBe("unauthorized")
  })

  it("a CLI login and a key's calls are attributed to the person behind them", async () => {
    await send(credentials.get("CLI login")!, routes["workspace data"])
    const whoami = await send(credentials.get("workspace key")!, routes.whoami)
    await send(credentials.get("workspace key")!, routes["workspace data"])
    await run(caughtUp(node.db))
    const attributed = async (apiKeyId: string) => {
      const rows = await node.db.sql`
        select distinct principal_kind, user_id from ${node.db.sql(node.db.schema)}.audit_log
        where capability = 'node.list' and api_key_id = ${apiKeyId} and outcome = 'succeeded'`
      return rows.map((r) => [r.principal_kind, r.user_id])
    }
    expect(await attributed(cliKeyId)).toEqual([["cli_login", admin.userId]])
    // the bootstrap key was created by the bootstrap Owner, and acts as itself on their behalf
    const [[kind, creator]] = await attributed(whoami.body.apiKeyId)
    expect(kind).toBe("api_key")
    expect(creator).toMatch(/^usr_/)
    expect(creator).not.toBe(admin.userId)
  })

  it("a refused call changes nothing: no key is created by a key", async () => {
    const before = await node.db.sql`select count(*)::int as n from ${node.db.sql(node.db.schema)}.api_keys`
    const reply = await call(node.baseUrl, node.bootstrap.workspaceKey, "/v1/acme/main/create_api_key", { name: "not allowed" })
    expect(reply.status).toBe(403)
    await run(caughtUp(node.db))
    const after = await node.db.sql`select count(*)::int as n from ${node.db.sql(node.db.schema)}.api_keys`
    expect(after[0].n).toBe(before[0].n)
  })
})
