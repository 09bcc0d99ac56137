/**
 * Machine credentials end to end (spec 5 rules 8 and 9): host, gateway and telemetry keys issued
 * by the operator (`issueCredential`, and the real `svc issue-key` command line as a subprocess),
 * then used over HTTP against a real node. A host key makes only its machine's own calls, which
 * are recorded and audited; a telemetry key only ingests telemetry; a gateway key calls only
 * non-mutating MCP capabilities; an unknown purpose is denied.
 */
import { generateKeyPairSync, verify, X509Certificate } from "node:crypto"
import { Effect, Either, Runtime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { keyOf } from "../../actors/kernel.ts"
import type { AccessCache } from "../../src/checkpoint/AccessCache.ts"
import { issueCredential, type IssueCredentialRequest } from "../../src/identity/IssueCredential.ts"
import type { Db } from "../../streams/Db.ts"
import { EventLog } from "../../streams/EventLog.ts"
import type { ActorHost } from "../../streams/ActorHost.ts"
import { addPerson, callWithCookie, signIn } from "../support/people.ts"
import { runCli } from "../support/cli.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, eventsOf, eventually, expectError, type Reply, send, sleep } from "./client.ts"

let node: TestNode
let run: <A, E>(effect: Effect.Effect<A, E, Db | EventLog | AccessCache | ActorHost>) => Promise<A>
let orgId: string
let workspaceId: string
/** Session cookies of the organization's Owner, a workspace Admin and a workspace Member. */
let ownerCookie: string
let adminCookie: string
let memberCookie: string

/** Keys issued in `beforeAll`. */
const keys = { host: "", hostId: "", otherHost: "", gateway: "", telemetry: "", orgTelemetry: "" }


const whoami = (key: string) => send(node, "/v1/auth/whoami", { headers: { authorization: `Bearer ${key}` } })

/** An issued key is usable once its `api_keys` row is projected: until then it is 401. */
const usable = async (key: string, timeoutMs = 15_000) => {
  const reply = await eventually(() => whoami(key), (r) => r.status !== 401, timeoutMs)
  expect(reply.status, JSON.stringify(reply.body)).not.toBe(401)
}

const issue = async (request: Omit<IssueCredentialRequest, "orgSlug"> & { orgSlug?: string }) => {
  const issued = await run(issueCredential({ orgSlug: node.bootstrap.orgSlug, ...request }))
  await usable(issued.rawKey)
  return issued
}

const refusal = async (request: IssueCredentialRequest) => {
  const outcome = await run(Effect.either(issueCredential(request)))
  if (Either.isRight(outcome)) return expect.fail(`expected a refusal, got key ${outcome.right.keyId}`)
  return outcome.left as { readonly _tag: string; readonly reason?: string }
}

/** A listing as the bootstrap organization's Owner, signed in with a session (no key can act as
 * Owner, spec 5 rule 4). */
const withCookie = (cookie: string, capability: string, input: unknown) =>
  callWithCookie(node.baseUrl, cookie, `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`, input)
const asOwner = async (capability: string, input: unknown) => {
  const reply = await withCookie(ownerCookie, capability, input)
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

/** The audit rows of one key's invocations. */
const auditOf = (keyId: string) =>
  node.db.sql`select capability, principal_kind, outcome, error_tag from ${node.db.table("audit_log")}
    where api_key_id = ${keyId} and kind = 'capability' order by at, invocation_id`

const cli = (args: ReadonlyArray<string>) => runCli(node, args)

beforeAll(async () => {
  node = await startTestNode()
  run = Runtime.runPromise(node.runtime as Runtime.Runtime<Db | EventLog | AccessCache | ActorHost>)
  const [place] = await node.db.sql`select w.org_id, w.workspace_id from ${node.db.table("workspaces")} w
    join ${node.db.table("organizations")} o using (org_id) where o.slug = ${node.bootstrap.orgSlug} and w.slug = ${node.bootstrap.workspaceSlug}`
  orgId = place.org_id
  workspaceId = place.workspace_id
  ownerCookie = (await signIn(node.baseUrl, await addPerson(node, "owner", { org: "owner" }))).cookie
  adminCookie = (await signIn(node.baseUrl, await addPerson(node, "admin", { org: "member", workspace: "admin" }))).cookie
  memberCookie = (await signIn(node.baseUrl, await addPerson(node, "member", { org: "member", workspace: "member" }))).cookie
  const workspaceSlug = node.bootstrap.workspaceSlug
  const host = await issue({ workspaceSlug, purpose: "svc_host_v1", machineId: "build-01", name: "build box" })
  keys.host = host.rawKey
  keys.hostId = host.keyId
  keys.otherHost = (await issue({ workspaceSlug, purpose: "svc_host_v1", machineId: "build-02" })).rawKey
  keys.gateway = (await issue({ workspaceSlug, purpose: "svc_gateway_v1" })).rawKey
  keys.telemetry = (await issue({ workspaceSlug, purpose: "svc_telemetry_v1" })).rawKey
  keys.orgTelemetry = (await issue({ purpose: "svc_telemetry_v1" })).rawKey
})

afterAll(async () => {
  await node?.stop()
})

describe("issuing machine credentials", () => {
  it("issues a host key for one machine in one workspace, enrols the machine, and stores only a hash", async () => {
    const [row] = await node.db.sql`select * from ${node.db.table("api_keys")} where key_id = ${keys.hostId}`
    expect(row).toMatchObject({
      org_id: orgId,
      workspace_id: workspaceId,
      purpose: "svc_host_v1",
      machine_id: "build-01",
      created_by: "operator",
      name: "build box",
      status: "active",
      expires_at: null
    })
    expect(JSON.stringify(row)).not.toContain(keys.host)
    const events = await eventsOf(node, keyOf(ApiKeyActor, keys.hostId))
    expect(events.map((e) => e.type)).toEqual(["api_key.created"])
    expect(JSON.stringify(events)).not.toContain(keys.host)
    expect((await eventsOf(node, "machine:build-01"))[0]).toEqual({
      type: "machine.enrolled",
      payload: { machineId: "build-01", orgId, workspaceId, keyId: keys.hostId, at: expect.any(String) }
    })
  })

  it("says who a machine key is: whoami is refused to host and telemetry keys, answered to a gateway key", async () => {
    expectError(await whoami(keys.host), 403, "forbidden", "purpose_not_allowed")
    expectError(await whoami(keys.telemetry), 403, "forbidden", "purpose_not_allowed")
    const gateway = await whoami(keys.gateway)
    expect(gateway).toEqual({ status: 200, body: expect.objectContaining({ authenticated: true, orgId, workspaceId }) })
  })

  it("refuses what the operator may not issue, before anything is written", async () => {
    const orgSlug = node.bootstrap.orgSlug
    const workspaceSlug = node.bootstrap.workspaceSlug
    expect(await refusal({ orgSlug, workspaceSlug, purpose: "cli_session_v1" })).toMatchObject({ _tag: "CredentialRefused", reason: "purpose_not_issuable" })
    expect(await refusal({ orgSlug, workspaceSlug, purpose: "bogus" })).toMatchObject({ reason: "unknown_purpose" })
    expect(await refusal({ orgSlug, workspaceSlug, purpose: "svc_host_v1" })).toMatchObject({ reason: "machine_required" })
    expect(await refusal({ orgSlug, purpose: "svc_host_v1", machineId: "m" })).toMatchObject({ reason: "workspace_required" })
    expect(await refusal({ orgSlug, workspaceSlug, purpose: "svc_gateway_v1", machineId: "m" })).toMatchObject({ reason: "machine_not_allowed" })
    expect(await refusal({ orgSlug, workspaceSlug, purpose: "svc_host_v1", machineId: "../etc" })).toMatchObject({ reason: "invalid_machine_id" })
    expect(await refusal({ orgSlug: "nope", purpose: "svc_gateway_v1" })).toMatchObject({ reason: "organization_not_found" })
    expect(await refusal({ orgSlug, workspaceSlug: "nope", purpose: "svc_gateway_v1" })).toMatchObject({ reason: "workspace_not_found" })
  })
})

describe("a host key", () => {
  const host = (capability: string, input: unknown) => call(node, capability, input, { key: keys.host })

  it("ingests events, claims a work order, and gets the policy bundle and its commands", async () => {
    const events = [{ type: "build.finished", at: "2026-01-05T10:00:00Z", data: { ok: true, ms: 812 } }, { type: "disk.low" }]
    const ingested = await host("host.events.ingest", { events })
    expect(ingested).toEqual({ status: 200, body: { batchId: expect.stringMatching(/^hev_/), accepted: 2 } })

    const { workOrderId } = await asOwner("machine.work_orders.create", { title: "Rebuild the CI cache" })
    const claimed = await host("host.work_orders.claim", { workOrderId })
    expect(claimed).toEqual({
      status: 200,
      body: { claimId: expect.stringMatching(/^woc_/), workOrderId, machineId: "build-01", claimedAt: expect.any(String) }
    })
    // claiming again returns the same claim; another machine of the workspace cannot take it
    expect(await host("host.work_orders.claim", { workOrderId })).toEqual(claimed)
    expectError(await call(node, "host.work_orders.claim", { workOrderId }, { key: keys.otherHost }), 409, "conflict", "work_order_claimed")
    expectError(await host("host.work_orders.claim", { workOrderId: "WO-7" }), 404, "not_found", "work_order_not_found")

    expect(await host("host.policy.get", {})).toEqual({
      status: 200,
      body: { workspaceId, machineId: "build-01", version: 0, rules: [], issuedAt: expect.any(String) }
    })
    expect(await host("host.commands.poll", {})).toEqual({ status: 200, body: { machineId: "build-01", commands: [] } })

    // what the Owner sees
    const { machines } = await asOwner("machine.list", {})
    expect(machines.find((m: any) => m.machineId === "build-01")).toMatchObject({ keyId: keys.hostId, eventsIngested: 2, workOrdersClaimed: 1 })
    const { records } = await asOwner("machine.records.list", { machineId: "build-01" })
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ recordId: ingested.body.batchId, kind: "events", detail: { count: 2, events } }),
        expect.objectContaining({ recordId: claimed.body.claimId, kind: "work_order_claim", subject: workOrderId })
      ])
    )
    // and the read model under it
    const [row] = await node.db.sql`select events_ingested, work_orders_claimed from ${node.db.table("machines")} where machine_id = 'build-01'`
    expect(row).toEqual({ events_ingested: 2, work_orders_claimed: 1 })

    // every call is audited as the host key's
    const audit = await eventually(() => auditOf(keys.hostId), (rows) => rows.length >= 5)
    expect(audit.map((r) => r.capability)).toEqual(
      expect.arrayContaining(["host.events.ingest", "host.work_orders.claim", "host.policy.get", "host.commands.poll"])
    )
    expect(new Set(audit.map((r) => r.principal_kind))).toEqual(new Set(["host_key"]))
  })

  it("uploads memories and recalls only its own machine's, by text", async () => {
    const uploaded = await host("host.memory.upload", { text: "The CI cache lives on /var/cache/ci (100% full)", tags: ["ci"] })
    expect(uploaded).toEqual({ status: 200, body: { memoryId: expect.stringMatching(/^mem_/), uploadedAt: expect.any(String) } })
    expect((await host("host.memory.upload", { text: "unrelated" })).status).toBe(200)

    const recalled = await host("host.memory.recall", { query: "ci cache" })
    expect(recalled).toEqual({
      status: 200,
      body: { memories: [{ memoryId: uploaded.body.memoryId, text: "The CI cache lives on /var/cache/ci (100% full)", tags: ["ci"], uploadedAt: uploaded.body.uploadedAt }] }
    })
    // LIKE wildcards match themselves
    expect((await host("host.memory.recall", { query: "100%" })).body.memories).toHaveLength(1)
    expect((await host("host.memory.recall", { query: "_" })).body.memories).toHaveLength(0)
    // another machine of the same workspace recalls nothing of this one's
    expect((await call(node, "host.memory.recall", { query: "" }, { key: keys.otherHost })).body).toEqual({ memories: [] })
  })

  it("gets no Git credential while the workspace has no repositories, and that refusal is audited", async () => {
    expectError(await host("host.git_credential.get", {}), 409, "conflict", "no_repositories")
    const audit = await eventually(() => auditOf(keys.hostId), (rows) => rows.some((r) => r.capability === "host.git_credential.get"))
    expect(audit.find((r) => r.capability === "host.git_credential.get")).toMatchObject({ outcome: "failed", error_tag: "NoRepositories" })
  })

  it("never names a machine: a machine id in the input is refused, and calls act for its own machine", async () => {
    expectError(await host("host.events.ingest", { machineId: "build-02", events: [{ type: "x" }] }), 400, "bad_request", "invalid_input")
    const [other] = await node.db.sql`select events_ingested from ${node.db.table("machines")} where machine_id = 'build-02'`
    expect(other.events_ingested).toBe(0)
  })

  it("refuses oversized batches", async () => {
    const big = { type: "log", data: "x".repeat(2000) }
    expectError(await host("host.events.ingest", { events: Array.from({ length: 200 }, () => big) }), 400, "bad_request", "batch_too_large")
    expectError(await host("host.events.ingest", { events: Array.from({ length: 501 }, () => ({ type: "x" })) }), 400, "bad_request", "invalid_input")
  })

  it("may call nothing else: 403 purpose_not_allowed on node.list, telemetry.ingest and the listings", async () => {
    for (const capability of ["node.list", "telemetry.ingest", "machine.list", "machine.records.list"]) {
      expectError(await host(capability, {}), 403, "forbidden", "purpose_not_allowed")
    }
  })

  it("is refused to an ordinary workspace key and to the Owner, and the listings to all but Owners and Admins", async () => {
    for (const capability of ["host.events.ingest", "host.policy.get", "host.work_orders.claim"]) {
      const reply = await call(node, capability, capability === "host.events.ingest" ? { events: [{ type: "x" }] } : {})
      expectError(reply, 403, "forbidden", undefined)
    }
    // not even the Owner makes a machine's calls
    const ingest = `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/host/events/ingest`
    expectError(await callWithCookie(node.baseUrl, ownerCookie, ingest, { events: [{ type: "x" }] }), 403, "forbidden", undefined)
    for (const capability of ["machine.list", "machine.records.list", "telemetry.list"]) {
      expectError(await call(node, capability, {}), 403, "forbidden", undefined)
      // a signed-in workspace Member is not an Owner or Admin either
      const path = `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`
      expectError(await callWithCookie(node.baseUrl, memberCookie, path, {}), 403, "forbidden", undefined)
    }
  })
})

describe("what an Owner or Admin sets, a host key reads", () => {
  const host = (capability: string, input: unknown, key = keys.host) => call(node, capability, input, { key })

  it("serves the workspace's policy bundle at its current version, set by an Owner or Admin", async () => {
    const rules = [
      { id: "no-egress", effect: "deny", action: "network.egress", resource: "*" },
      { id: "builds", effect: "allow", action: "shell.exec", resource: "make *" }
    ]
    expect(await asOwner("machine.policy.set", { rules, expectedVersion: 0 })).toEqual({ version: 1, rules })
    const v1 = await eventually(() => host("host.policy.get", {}), (r) => r.body.version === 1)
    expect(v1).toEqual({ status: 200, body: { workspaceId, machineId: "build-01", version: 1, rules, issuedAt: expect.any(String) } })

    // an Admin sets the next version; a writer who read version 1 before it is refused
    const admin = await withCookie(adminCookie, "machine.policy.set", { rules: rules.slice(1), expectedVersion: 1 })
    expect(admin).toEqual({ status: 200, body: { version: 2, rules: rules.slice(1) } })
    expectError(await withCookie(ownerCookie, "machine.policy.set", { rules: [], expectedVersion: 1 }), 409, "conflict", "policy_version_mismatch")
    // every machine of the workspace reads the same bundle
    const other = await eventually(() => host("host.policy.get", {}, keys.otherHost), (r) => r.body.version === 2)
    expect(other.body).toMatchObject({ machineId: "build-02", version: 2, rules: rules.slice(1) })
    expect((await eventsOf(node, `fleet:${workspaceId}`)).map((e) => e.type)).toEqual(["fleet.policy_set", "fleet.policy_set"])
  })

  it("queues commands for one machine, which polls and acknowledges them", async () => {
    const queued = await asOwner("machine.commands.enqueue", { machineId: "build-01", name: "agent.restart", arguments: { graceSeconds: 5 } })
    expect(queued).toEqual({ commandId: expect.stringMatching(/^mcm_/), machineId: "build-01", name: "agent.restart", enqueuedAt: expect.any(String) })
    const second = await withCookie(adminCookie, "machine.commands.enqueue", { machineId: "build-01", name: "cache.clear" })
    expect(second.status).toBe(200)

    const polled = await eventually(() => host("host.commands.poll", {}), (r) => r.body.commands.length === 2)
    expect(polled).toEqual({
      status: 200,
      body: {
        machineId: "build-01",
        commands: [
          { commandId: queued.commandId, name: "agent.restart", arguments: { graceSeconds: 5 }, enqueuedAt: queued.enqueuedAt },
          { commandId: second.body.commandId, name: "cache.clear", arguments: null, enqueuedAt: second.body.enqueuedAt }
        ]
      }
    })
    // another machine of the workspace has nothing queued
    expect((await host("host.commands.poll", {}, keys.otherHost)).body).toEqual({ machineId: "build-02", commands: [] })

    const acked = await host("host.commands.acknowledge", { commandId: queued.commandId, outcome: "succeeded", detail: "restarted in 3s" })
    expect(acked).toEqual({ status: 200, body: { commandId: queued.commandId, outcome: "succeeded", acknowledgedAt: expect.any(String) } })
    expectError(await host("host.commands.acknowledge", { commandId: queued.commandId, outcome: "succeeded" }), 404, "not_found", "command_not_found")
    // only its own machine acknowledges a command
    expectError(await host("host.commands.acknowledge", { commandId: second.body.commandId, outcome: "failed" }, keys.otherHost), 404, "not_found", "command_not_found")
    const left = await eventually(() => host("host.commands.poll", {}), (r) => r.body.commands.length === 1)
    expect(left.body.commands.map((c: any) => c.commandId)).toEqual([second.body.commandId])

    const { commands } = await asOwner("machine.commands.list", { machineId: "build-01" })
    expect(commands.find((c: any) => c.commandId === queued.commandId)).toMatchObject({
      machineId: "build-01",
      outcome: "succeeded",
      detail: "restarted in 3s",
      acknowledgedAt: acked.body.acknowledgedAt,
      enqueuedBy: expect.any(String)
    })
    expect(commands.find((c: any) => c.commandId === second.body.commandId)).toMatchObject({ acknowledgedAt: null, outcome: null })
    expectError(await withCookie(ownerCookie, "machine.commands.enqueue", { machineId: "nowhere-01", name: "x" }), 404, "not_found", "machine_not_found")
  })

  it("gives a short-lived Git credential, signed by the workspace CA, only for registered repositories", async () => {
    const app = "https://git.example.com/acme/app.git"
    const lib = "git@git.example.com:acme/lib.git"
    expect(await asOwner("machine.repositories.register", { repository: app })).toEqual({ repository: app })
    await eventually(() => host("host.git_credential.get", {}), (r) => r.status === 200)
    const reply = await host("host.git_credential.get", {})
    expect(reply).toEqual({ status: 200, body: { repository: app, username: "build-01", password: expect.any(String), expiresAt: expect.any(String) } })
    const lifetimeMs = Date.parse(reply.body.expiresAt) - Date.now()
    expect(lifetimeMs).toBeGreaterThan(55 * 60_000)
    expect(lifetimeMs).toBeLessThanOrEqual(60 * 60_000)

    // a Git server that trusts the workspace's CA certificate checks the token's signature and scope
    const ca = new X509Certificate((await asOwner("machine.certificate_authority.get", {})).certificate)
    const [header, claims, signature] = reply.body.password.split(".")
    expect(verify(null, Buffer.from(`${header}.${claims}`), ca.publicKey, Buffer.from(signature, "base64url"))).toBe(true)
    expect(verify(null, Buffer.from(`${header}.${claims}x`), ca.publicKey, Buffer.from(signature, "base64url"))).toBe(false)
    expect(JSON.parse(Buffer.from(header, "base64url").toString())).toMatchObject({ alg: "EdDSA", typ: "JWT" })
    expect(JSON.parse(Buffer.from(claims, "base64url").toString())).toMatchObject({
      iss: `workspace:${workspaceId}`,
      sub: "machine:build-01",
      aud: app,
      scope: "git:read",
      exp: Math.floor(Date.parse(reply.body.expiresAt) / 1000)
    })

    expectError(await host("host.git_credential.get", { repository: "https://git.example.com/other/secret.git" }), 404, "not_found", "repository_not_registered")
    expect((await withCookie(adminCookie, "machine.repositories.register", { repository: lib })).status).toBe(200)
    await eventually(() => asOwner("machine.repositories.list", {}), (r) => r.repositories.length === 2)
    expectError(await host("host.git_credential.get", {}), 400, "bad_request", "repository_required")
    expect((await host("host.git_credential.get", { repository: lib })).body).toMatchObject({ repository: lib })
    const { repositories } = await asOwner("machine.repositories.list", {})
    expect(repositories.map((r: any) => r.repository)).toEqual([lib, app].sort())

    // removed: no more credentials for it, and the other is the only one again
    expect(await withCookie(adminCookie, "machine.repositories.remove", { repository: lib })).toEqual({ status: 200, body: { repository: lib, removed: true } })
    const gone = await eventually(() => host("host.git_credential.get", { repository: lib }), (r) => r.status === 404)
    expectError(gone, 404, "not_found", "repository_not_registered")
    expect((await host("host.git_credential.get", {})).body).toMatchObject({ repository: app })
  })

  it("renews the machine's client certificate: X.509 for its key, signed by the workspace CA, for 24 hours", async () => {
    const ca = new X509Certificate((await asOwner("machine.certificate_authority.get", {})).certificate)
    expect(ca.ca).toBe(true)
    for (const keyPair of [generateKeyPairSync("ec", { namedCurve: "prime256v1" }), generateKeyPairSync("ed25519")]) {
      const publicKey = keyPair.publicKey.export({ type: "spki", format: "pem" }).toString()
      const reply = await host("host.certificate.renew", { publicKey })
      expect(reply.status, JSON.stringify(reply.body)).toBe(200)
      expect(reply.body.caCertificate).toBe(ca.toString())
      const cert = new X509Certificate(reply.body.certificate)
      expect(cert.verify(ca.publicKey)).toBe(true)
      expect(cert.checkIssued(ca)).toBe(true)
      expect(cert.ca).toBe(false)
      expect(cert.subject).toContain("CN=build-01")
      expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"])
      expect(cert.publicKey.export({ type: "spki", format: "pem" })).toBe(publicKey)
      expect(cert.serialNumber.toLowerCase()).toBe(reply.body.serialNumber)
      expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(24 * 3_600_000)
      expect(new Date(cert.validTo).toISOString()).toBe(reply.body.notAfter)
    }
    expectError(await host("host.certificate.renew", { publicKey: "-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----" }), 400, "bad_request", "invalid_public_key")
    const { records } = await asOwner("machine.records.list", { machineId: "build-01", kind: "certificate_renewal" })
    expect(records).toHaveLength(2)
    expect(records[0]).toMatchObject({ kind: "certificate_renewal", subject: expect.stringMatching(/^[0-9a-f]{32}$/), detail: { publicKeySha256: expect.any(String) } })
  })

  it("gives a work order to exactly one of two machines claiming it at once", async () => {
    for (let round = 0; round < 5; round++) {
      const { workOrderId } = await asOwner("machine.work_orders.create", { title: `race ${round}`, detail: "first come" })
      const replies = await Promise.all([keys.host, keys.otherHost].map((key) => host("host.work_orders.claim", { workOrderId }, key)))
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409])
      const winner = replies.find((r) => r.status === 200)!.body.machineId
      const listed = await eventually(() => asOwner("machine.work_orders.list", {}), (r) => r.workOrders.some((w: any) => w.workOrderId === workOrderId && w.claimedBy !== null))
      expect(listed.workOrders.find((w: any) => w.workOrderId === workOrderId)).toMatchObject({ title: `race ${round}`, detail: "first come", claimedBy: winner })
    }
  })

  // spec 5 rule 8: the purpose rule, on every host capability and every setting
  const hostCalls: ReadonlyArray<readonly [string, unknown]> = [
    ["host.events.ingest", { events: [{ type: "x" }] }],
    ["host.policy.get", {}],
    ["host.commands.poll", {}],
    ["host.commands.acknowledge", { commandId: "mcm_x", outcome: "succeeded" }],
    ["host.git_credential.get", {}],
    ["host.memory.upload", { text: "x" }],
    ["host.memory.recall", { query: "x" }],
    ["host.work_orders.claim", { workOrderId: "WO-1" }],
    ["host.certificate.renew", { publicKey: "x" }]
  ]
  const settings: ReadonlyArray<readonly [string, unknown]> = [
    ["machine.policy.set", { rules: [] }],
    ["machine.commands.enqueue", { machineId: "build-01", name: "x" }],
    ["machine.commands.list", {}],
    ["machine.repositories.register", { repository: "r" }],
    ["machine.repositories.remove", { repository: "r" }],
    ["machine.repositories.list", {}],
    ["machine.work_orders.create", { title: "x" }],
    ["machine.work_orders.list", {}],
    ["machine.certificate_authority.get", {}]
  ]

  it("refuses every host capability to a person's key and to a signed-in Owner", async () => {
    for (const [capability, input] of hostCalls) {
      expectError(await call(node, capability, input), 403, "forbidden", undefined)
      expectError(await withCookie(ownerCookie, capability, input), 403, "forbidden", undefined)
    }
  })

  it("refuses the settings to a host key, a person's key and a workspace Member", async () => {
    for (const [capability, input] of settings) {
      expectError(await host(capability, input), 403, "forbidden", "purpose_not_allowed")
      expectError(await call(node, capability, input), 403, "forbidden", undefined)
      expectError(await withCookie(memberCookie, capability, input), 403, "forbidden", undefined)
    }
  })

  it("no longer offers a code graph build", async () => {
    expect((await host("host.codegraph.build", { repository: "r" })).status).toBe(404)
  })
})

describe("a telemetry key", () => {
  it("ingests telemetry, which is stored and listed", async () => {
    const points = [
      { name: "turn.latency_ms", value: 412, unit: "ms", attributes: { model: "offline" } },
      { name: "queue.depth", value: 3 }
    ]
    const reply = await call(node, "telemetry.ingest", { points }, { key: keys.telemetry })
    expect(reply).toEqual({ status: 200, body: { batchId: expect.stringMatching(/^tel_/), accepted: 2 } })
    const listed = await eventually(() => asOwner("telemetry.list", {}), ({ batches }) => batches.some((b: any) => b.batchId === reply.body.batchId))
    expect(listed.batches.find((b: any) => b.batchId === reply.body.batchId)).toMatchObject({ points })
    // an organization-level telemetry key may send for any workspace of its organization
    expect((await call(node, "telemetry.ingest", { points: [{ name: "x", value: 1 }] }, { key: keys.orgTelemetry })).status).toBe(200)
  })

  it("may call only telemetry.ingest", async () => {
    for (const capability of ["host.events.ingest", "host.policy.get", "node.list", "telemetry.list"]) {
      expectError(await call(node, capability, {}, { key: keys.telemetry }), 403, "forbidden", "purpose_not_allowed")
    }
  })
})

describe("a gateway key", () => {
  it("reads through non-mutating MCP capabilities, and may not mutate or make machine calls", async () => {
    const label = { label: "Gadget", properties: { title: { type: "string", required: true } } }
    expect((await call(node, "schema.define_label", label)).status).toBe(200)
    const created = await call(node, "node.create", { label: "Gadget", properties: { title: "Widget" } })
    expect(created.status).toBe(200)

    const gateway = (capability: string, input: unknown) => call(node, capability, input, { key: keys.gateway })
    expect((await gateway("node.list", { label: "Gadget" })).body.nodes).toEqual([created.body])
    expect(await gateway("node.get", { nodeId: created.body.nodeId })).toEqual({ status: 200, body: created.body })
    expectError(await gateway("node.create", { label: "Gadget", properties: { title: "No" } }), 403, "forbidden", "purpose_not_allowed")
    expectError(await gateway("host.events.ingest", { events: [{ type: "x" }] }), 403, "forbidden", "purpose_not_allowed")
    expectError(await gateway("telemetry.ingest", { points: [{ name: "x", value: 1 }] }), 403, "forbidden", "purpose_not_allowed")
  })
})

describe("svc issue-key", () => {
  it("issues a host key from the command line that the running node accepts within seconds", async () => {
    const { code, stdout, stderr } = await cli([
      "issue-key", "--purpose", "svc_host_v1", "--org", node.bootstrap.orgSlug, "--workspace", node.bootstrap.workspaceSlug,
      "--machine", "cli-box", "--name", "issued from the CLI"
    ])
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    const keyId = /keyId:\s+(aky_\w+)/.exec(stdout)?.[1]
    const rawKey = /rawKey:\s+(svc_[A-Za-z0-9_-]+)/.exec(stdout)?.[1]
    expect(keyId, stdout).toBeDefined()
    expect(rawKey, stdout).toBeDefined()

    // the node polls the embedded log for other processes' appends
    let reply: Reply = { status: 0, body: undefined }
    const until = Date.now() + 15_000
    while (Date.now() < until) {
      reply = await call(node, "host.policy.get", {}, { key: rawKey! })
      if (reply.status === 200) break
      await sleep(100)
    }
    expect(reply).toMatchObject({ status: 200, body: { machineId: "cli-box", workspaceId } })
    const [row] = await node.db.sql`select purpose, machine_id, name from ${node.db.table("api_keys")} where key_id = ${keyId!}`
    expect(row).toEqual({ purpose: "svc_host_v1", machine_id: "cli-box", name: "issued from the CLI" })
    const machine = await eventually(
      () => node.db.sql`select workspace_id, key_id from ${node.db.table("machines")} where machine_id = 'cli-box'`,
      (rows) => rows.length === 1
    )
    expect(machine).toEqual([{ workspace_id: workspaceId, key_id: keyId }])
  })

  it("exits 1 with a clear message for an unknown purpose, a CLI login, or missing arguments", async () => {
    const org = node.bootstrap.orgSlug
    const bogus = await cli(["issue-key", "--purpose", "bogus", "--org", org])
    expect(bogus.code).toBe(1)
    expect(bogus.stderr).toContain("'bogus' is not a purpose the operator can issue")
    expect(bogus.stdout).not.toContain("svc_")

    const login = await cli(["issue-key", "--purpose", "cli_session_v1", "--org", org])
    expect(login.code).toBe(1)
    expect(login.stderr).toContain("issued only by the CLI device login")

    const missing = await cli(["issue-key", "--org", org])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("--purpose and --org are required")
  })
})
