/**
 * Organization SSO end to end (spec 5 rule 7): an Owner registers and verifies an OpenID Connect
 * provider (a real oidc-provider on loopback), requires SSO and two-factor; members sign in through
 * the provider (authorization code + PKCE) and their sessions pass where password sessions are
 * refused. Also the organization settings and workspace capabilities of rule 3.
 *
 * The node listens on a port picked before it starts, so that `config.baseUrl` (which names the
 * SSO redirect URI) is the address the test and the provider really use.
 */
import { randomUUID } from "node:crypto"
import { Runtime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrgActor } from "../../actors/org/actor.ts"
import { SetPlan } from "../../actors/org/protocol.ts"
import type { AccessCache } from "../../src/checkpoint/AccessCache.ts"
import type { Db } from "../../streams/Db.ts"
import { issueCredential } from "../../src/identity/IssueCredential.ts"
import type { EventLog } from "../../streams/EventLog.ts"
import type { ActorHost } from "../../streams/ActorHost.ts"
import { newTotp } from "../../src/identity/Sessions.ts"
import { startOidcServer, type OidcServer } from "../support/oidcServer.ts"
import { addPerson, bootstrapPlace, callWithCookie, type Person, signIn } from "../support/people.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { freePort, startTestNode, type TestNode } from "../support/platform.ts"
import { call, eventsOf, eventually, expectError, type Reply } from "./client.ts"

let node: TestNode
let oidc: OidcServer
let orgId: string
let olga: Person
let dana: Person
let wendy: Person
let otto: Person
const cookies: Record<string, string> = {}
const CLIENT_ID = "svc-acme"
const CLIENT_SECRET = `client-secret-${randomUUID()}`
const STRANGER = "stranger@example.test"
let providerId: string
let bogusProviderId: string
/** A workspace key created by Wendy, a workspace Admin who is not an Owner. */
let wendysKey: string

beforeAll(async () => {
  const port = await freePort()
  // the identity provider listens on this machine
  node = await startTestNode({ port, baseUrl: `http://127.0.0.1:${port}`, outboundAllow: parseOutboundAllow("127.0.0.1") })
  expect(node.baseUrl).toBe(node.config.baseUrl)
  orgId = (await bootstrapPlace(node)).orgId
  olga = await addPerson(node, "olga", { org: "owner" })
  otto = await addPerson(node, "otto", { org: "owner" })
  dana = await addPerson(node, "dana", { org: "member", workspace: "member" })
  wendy = await addPerson(node, "wendy", { org: "member", workspace: "admin" })
  oidc = await startOidcServer({
    accounts: [
      { sub: "idp-dana", email: dana.email },
      { sub: "idp-wendy", email: wendy.email },
      { sub: "idp-stranger", email: STRANGER }
    ],
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${node.baseUrl}/v1/auth/sso/callback`] }]
  })
  for (const [name, person] of Object.entries({ olga, otto, dana, wendy })) {
    const signedIn = await signIn(node.baseUrl, person)
    expect(signedIn.status).toBe(200)
    cookies[name] = signedIn.cookie
  }
})

afterAll(async () => {
  await oidc?.close()
  await node?.stop()
})

const placePath = (capability: string) => `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`

/** A capability called with a session cookie. */
const asSession = (cookie: string, capability: string, input: unknown = {}): Promise<Reply> =>
  callWithCookie(node.baseUrl, cookie, placePath(capability), input)

const listNodes = (cookie: string) => asSession(cookie, "node.list", {})

const sessionCount = async () => {
  const [{ count }] = await node.db.sql`select count(*)::int as count from ${node.db.table("sessions")}`
  return count as number
}

const cookieNamed = (setCookies: ReadonlyArray<string>, name: string) => setCookies.find((c) => c.startsWith(`${name}=`))

/** `GET /v1/auth/sso/start`: the 302 to the provider and the `svc_sso` cookie it sets. */
const startSso = async (provider = providerId) => {
  const response = await fetch(`${node.baseUrl}/v1/auth/sso/start?org=${node.bootstrap.orgSlug}&provider=${provider}`, { redirect: "manual" })
  expect(response.status).toBe(302)
  const setCookie = cookieNamed(response.headers.getSetCookie(), "svc_sso")
  expect(setCookie).toBeDefined()
  return { location: response.headers.get("location")!, ssoCookie: setCookie!.split(";")[0], setCookie: setCookie! }
}

/** The callback request the browser makes when the provider sends it back. */
const callback = async (redirect: string, ssoCookie: string | undefined, accept = "application/json") => {
  const url = new URL(redirect)
  const response = await fetch(`${node.baseUrl}${url.pathname}${url.search}`, {
    redirect: "manual",
    headers: { accept, ...(ssoCookie === undefined ? {} : { cookie: ssoCookie }) }
  })
  const setCookies = response.headers.getSetCookie()
  const text = await response.text()
  return { status: response.status, headers: response.headers, setCookies, body: text === "" ? undefined : JSON.parse(text) }
}

/** A whole SSO sign-in as the provider account with this email; resolves with the callback's answer. */
const ssoSignIn = async (email: string, accept = "application/json") => {
  const { location, ssoCookie } = await startSso()
  return callback(await oidc.login(location, email), ssoCookie, accept)
}

const sessionCookieOf = (setCookies: ReadonlyArray<string>) => cookieNamed(setCookies, "svc_session")?.split(";")[0]

describe("organization settings and workspaces (spec 5 rule 3)", () => {
  it("an organization key reads organization settings and creates workspaces, but cannot read workspace settings", async () => {
    const { orgKey, workspaceKey } = node.bootstrap
    const settings = await call(node, "org.settings.get", {}, { key: orgKey })
    expect(settings).toEqual({
      status: 200,
      body: { orgId, slug: "acme", name: "Acme", plan: "standard", requireSso: false, requireMfa: false, mfaGraceEndsAt: null, providers: [] }
    })
    const created = await call(node, "workspace.create", { slug: "side", name: "Side project" }, { key: orgKey })
    expect(created).toEqual({ status: 200, body: { workspaceId: expect.stringMatching(/^wsp_/), slug: "side", name: "Side project", createdAt: expect.any(String) } })
    expectError(await call(node, "workspace.create", { slug: "side", name: "Again" }, { key: orgKey }), 409, "conflict", "workspace_slug_taken")

    expectError(await call(node, "workspace.settings.get", {}, { key: orgKey }), 403, "forbidden", undefined)
    expect(await call(node, "workspace.settings.get", {}, { key: workspaceKey })).toMatchObject({ status: 200, body: { slug: "main", name: "Main" } })
    expect(await call(node, "workspace.settings.get", {}, { key: orgKey, workspaceSlug: "side" })).toMatchObject({ status: 403 })

    // a workspace key holds no organization role; no key registers an SSO provider (Owner, person)
    expectError(await call(node, "org.settings.get", {}, { key: workspaceKey }), 403, "forbidden", undefined)
    const byKey = await call(node, "org.sso.register", { name: "x", issuer: oidc.issuer, clientId: "x", clientSecret: "x" }, { key: orgKey })
    expectError(byKey, 403, "forbidden", "session_required")
  })

  it("custom roles need the enterprise plan", async () => {
    const role = { name: "auditor", scope: "workspace", grants: ["workspace:viewer"] }
    expectError(await asSession(cookies.olga, "org.custom_role.define", role), 403, "forbidden", "enterprise_plan_required")
    expectError(await asSession(cookies.dana, "org.custom_role.define", role), 403, "forbidden", undefined)
    await Runtime.runPromise(node.runtime)(
      node.host.send(OrgActor, orgId, new SetPlan({ orgId, plan: "enterprise" }), { commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })
    )
    expect(await asSession(cookies.olga, "org.custom_role.define", role)).toEqual({ status: 200, body: role })
    const outOfScope = { name: "boss", scope: "workspace", grants: ["org:member"] }
    expectError(await asSession(cookies.olga, "org.custom_role.define", outOfScope), 400, "bad_request", "grant_out_of_scope")
    expect((await call(node, "org.settings.get", {}, { key: node.bootstrap.orgKey })).body.plan).toBe("enterprise")
  })

  it("an organization key acting as an organization custom role reads and writes in every workspace, never as Owner or Admin", async () => {
    const reader = { name: "all-workspaces", scope: "organization", grants: ["org:member", "workspace:member"] }
    expect((await asSession(cookies.olga, "org.custom_role.define", reader)).status).toBe(200)
    // a key may not be given Owner or Admin, not even through a custom role
    const boss = { name: "boss", scope: "organization", grants: ["org:owner"] }
    expectError(await asSession(cookies.olga, "org.custom_role.define", boss), 400, "bad_request", "invalid_input")
    const unknown = await asSession(cookies.olga, "create_api_key", { name: "x", level: "organization", customRole: "nobody" })
    expectError(unknown, 400, "bad_request", "unknown_custom_role")
    const created = await asSession(cookies.olga, "create_api_key", { name: "fleet reader", level: "organization", customRole: reader.name })
    expect(created.status).toBe(200)
    const key = created.body.rawKey as string
    for (const workspaceSlug of ["main", "side"]) {
      expect((await call(node, "node.list", {}, { key, workspaceSlug })).status).toBe(200)
    }
    expect((await call(node, "schema.define_label", { label: "Fleet", properties: {} }, { key, workspaceSlug: "side" })).status).toBe(200)
    // still a key: no key management, no Owner-only audit log
    expectError(await call(node, "create_api_key", { name: "y" }, { key }), 403, "forbidden", undefined)
    expectError(await call(node, "audit.list", {}, { key }), 403, "forbidden", undefined)
    // the plain organization key, without the role, is still refused workspace data
    expectError(await call(node, "node.list", {}, { key: node.bootstrap.orgKey }), 403, "forbidden", undefined)
  })
})

describe("registering and verifying an SSO provider", () => {
  it("an Owner registers a provider; only a sealed secret is stored; only an Owner may", async () => {
    const input = { name: "Acme IdP", issuer: oidc.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }
    expectError(await asSession(cookies.dana, "org.sso.register", input), 403, "forbidden", undefined)

    const registered = await asSession(cookies.olga, "org.sso.register", input)
    expect(registered).toEqual({
      status: 200,
      body: { providerId: expect.stringMatching(/^sso_/), status: "registered", redirectUri: `${node.baseUrl}/v1/auth/sso/callback` }
    })
    providerId = registered.body.providerId

    const [row] = await node.db.sql`select * from ${node.db.table("sso_providers")} where provider_id = ${providerId}`
    expect(row).toMatchObject({ org_id: orgId, issuer: oidc.issuer, client_id: CLIENT_ID, status: "registered", verified_at: null })
    expect(JSON.stringify(row)).not.toContain(CLIENT_SECRET)
    expect(JSON.stringify(await eventsOf(node, `org:${orgId}`))).not.toContain(CLIENT_SECRET)

    expectError(await asSession(cookies.olga, "org.sso.register", { ...input, issuer: "not a url" }), 400, "bad_request", "invalid_input")
  })

  it("an unverified provider signs nobody in, and Require SSO is refused until one is verified", async () => {
    const start = await fetch(`${node.baseUrl}/v1/auth/sso/start?org=acme&provider=${providerId}`, { redirect: "manual" })
    expectError({ status: start.status, body: await start.json() }, 409, "conflict", "sso_provider_not_verified")
    const unknown = await fetch(`${node.baseUrl}/v1/auth/sso/start?org=acme&provider=sso_nope`, { redirect: "manual" })
    expectError({ status: unknown.status, body: await unknown.json() }, 404, "not_found", "sso_provider_not_found")
    const otherOrg = await fetch(`${node.baseUrl}/v1/auth/sso/start?org=nope&provider=${providerId}`, { redirect: "manual" })
    expectError({ status: otherOrg.status, body: await otherOrg.json() }, 404, "not_found", "sso_provider_not_found")
    const missing = await fetch(`${node.baseUrl}/v1/auth/sso/start?org=acme`, { redirect: "manual" })
    expectError({ status: missing.status, body: await missing.json() }, 400, "bad_request", "invalid_input")

    expectError(await asSession(cookies.olga, "org.security.set", { requireSso: true }), 409, "conflict", "no_verified_sso_provider")
  })

  it("a provider whose issuer does not answer fails to verify and stays registered", async () => {
    const bogus = await asSession(cookies.olga, "org.sso.register", { name: "Bogus", issuer: "http://127.0.0.1:1", clientId: "c", clientSecret: "s" })
    expect(bogus.status).toBe(200)
    bogusProviderId = bogus.body.providerId
    expectError(await asSession(cookies.olga, "org.sso.verify", { providerId: bogusProviderId }), 400, "bad_request", "sso_discovery_failed")
    // an issuer that is not an issuer: the provider's discovery names another one
    const mismatch = await asSession(cookies.olga, "org.sso.register", { name: "Mismatch", issuer: `${oidc.issuer}/tenant`, clientId: "c", clientSecret: "s" })
    expectError(await asSession(cookies.olga, "org.sso.verify", { providerId: mismatch.body.providerId }), 400, "bad_request", "sso_discovery_failed")
    expectError(await asSession(cookies.olga, "org.sso.verify", { providerId: "sso_nope" }), 404, "not_found", "sso_provider_not_found")

    const list = await asSession(cookies.dana, "org.sso.list")
    expect(list.status).toBe(200)
    expect(list.body.providers.find((p: any) => p.providerId === bogusProviderId)).toMatchObject({ status: "registered", verifiedAt: null })
  })

  it("a provider whose issuer is on an address the node may not reach fails to verify before any request: address_refused", async () => {
    // OUTBOUND_ALLOW names 127.0.0.1 only: a private address, and ::1, are refused
    for (const [issuer, range] of [["https://10.0.0.1", "private"], ["http://[::1]:1", "loopback"]]) {
      const registered = await asSession(cookies.olga, "org.sso.register", { name: `Inside ${range}`, issuer, clientId: "c", clientSecret: "s" })
      expect(registered.status).toBe(200)
      const refused = await asSession(cookies.olga, "org.sso.verify", { providerId: registered.body.providerId })
      expectError(refused, 400, "bad_request", "sso_discovery_failed")
      expect(refused.body.error.message).toMatch(new RegExp(`is a ${range} address; the operator may allow it with OUTBOUND_ALLOW.*\\(address_refused\\)$`))
    }
  })

  it("an Owner verifies the provider; members and organization keys see it, never its secret", async () => {
    expectError(await asSession(cookies.dana, "org.sso.verify", { providerId }), 403, "forbidden", undefined)
    expect(await asSession(cookies.olga, "org.sso.verify", { providerId })).toEqual({ status: 200, body: { providerId, status: "verified" } })
    // verifying again changes nothing
    expect((await asSession(cookies.olga, "org.sso.verify", { providerId })).status).toBe(200)

    const list = await asSession(cookies.dana, "org.sso.list")
    expect(list.body.redirectUri).toBe(`${node.baseUrl}/v1/auth/sso/callback`)
    const provider = list.body.providers.find((p: any) => p.providerId === providerId)
    expect(provider).toEqual({
      providerId,
      name: "Acme IdP",
      issuer: oidc.issuer,
      clientId: CLIENT_ID,
      status: "verified",
      createdAt: expect.any(String),
      verifiedAt: expect.any(String)
    })
    const settings = await call(node, "org.settings.get", {}, { key: node.bootstrap.orgKey })
    expect(settings.body.providers.map((p: any) => p.providerId)).toContain(providerId)
    expect(JSON.stringify(settings.body)).not.toContain(CLIENT_SECRET)
    expect(JSON.stringify(list.body)).not.toMatch(/secret/i)
  })
})

describe("Require SSO", () => {
  it("a workspace Admin who is not an Owner creates a key before SSO is required", async () => {
    const created = await asSession(cookies.wendy, "create_api_key", { name: "wendy's key" })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    wendysKey = created.body.rawKey
    expect((await call(node, "node.list", {}, { key: wendysKey })).status).toBe(200)
  })

  it("refuses members' password sessions and keys of members without SSO; Owners and the Owner's keys pass", async () => {
    const set = await asSession(cookies.olga, "org.security.set", { requireSso: true })
    expect(set).toEqual({ status: 200, body: { requireSso: true, requireMfa: false, mfaGraceEndsAt: null } })

    expectError(await listNodes(cookies.dana), 403, "forbidden", "sso_required")
    expectError(await asSession(cookies.dana, "org.settings.get"), 403, "forbidden", "sso_required")
    expect((await listNodes(cookies.olga)).status).toBe(200)
    // keys carry no session: each is checked against its creator
    expect((await call(node, "node.list", {}, { key: node.bootstrap.workspaceKey })).status).toBe(200)
    expect((await call(node, "org.settings.get", {}, { key: node.bootstrap.orgKey })).body).toMatchObject({ requireSso: true })
    expectError(await call(node, "node.list", {}, { key: wendysKey }), 403, "forbidden", "sso_required")
    // an operator-issued machine credential has no person behind it to check
    const gateway = await Runtime.runPromise(node.runtime as Runtime.Runtime<Db | EventLog | AccessCache | ActorHost>)(
      issueCredential({ orgSlug: node.bootstrap.orgSlug, workspaceSlug: node.bootstrap.workspaceSlug, purpose: "svc_gateway_v1" })
    )
    await eventually(() => call(node, "node.list", {}, { key: gateway.rawKey }), (reply) => reply.status !== 401)
    expect((await call(node, "node.list", {}, { key: gateway.rawKey })).status).toBe(200)
  })

  it("a member signs in through the provider and her SSO session passes", async () => {
    const before = await sessionCount()
    const { location, ssoCookie, setCookie } = await startSso()
    expect(setCookie).toMatch(/; Path=\/v1\/auth\/sso/)
    expect(setCookie).toMatch(/; Max-Age=600/)
    expect(setCookie).toMatch(/; HttpOnly/)
    expect(setCookie).toMatch(/; SameSite=Lax/)
    expect(setCookie).toMatch(/; Secure/)
    const authorization = new URL(location)
    expect(authorization.origin).toBe(oidc.issuer)
    expect(authorization.searchParams.get("code_challenge_method")).toBe("S256")
    expect(authorization.searchParams.get("redirect_uri")).toBe(`${node.baseUrl}/v1/auth/sso/callback`)
    expect(authorization.searchParams.get("client_id")).toBe(CLIENT_ID)
    // the pending login is sealed: none of its secrets are readable in the cookie
    expect(ssoCookie).not.toContain(authorization.searchParams.get("state")!)

    const answer = await callback(await oidc.login(location, dana.email), ssoCookie)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body).toEqual({ userId: dana.userId, sessionId: expect.stringMatching(/^ses_/), expiresAt: expect.any(String) })
    expect(cookieNamed(answer.setCookies, "svc_sso")).toMatch(/^svc_sso=; .*Max-Age=0/)
    const ssoSession = sessionCookieOf(answer.setCookies)!
    expect(ssoSession).toMatch(/^svc_session=ses_/)
    expect(await sessionCount()).toBe(before + 1)

    const [session] = await node.db.sql`select * from ${node.db.table("sessions")} where session_id = ${answer.body.sessionId}`
    expect(session).toMatchObject({ user_id: dana.userId, method: "sso", sso_org_id: orgId, sso_provider_id: providerId, mfa: false })
    const [identity] = await node.db.sql`select * from ${node.db.table("sso_identities")} where provider_id = ${providerId}`
    expect(identity).toMatchObject({ subject: "idp-dana", user_id: dana.userId, org_id: orgId })

    cookies.danaSso = ssoSession
    expect((await listNodes(ssoSession)).status).toBe(200)
    expect((await asSession(ssoSession, "org.settings.get")).status).toBe(200)
    // her password session is still refused
    expectError(await listNodes(cookies.dana), 403, "forbidden", "sso_required")

    // a second sign-in finds her by the linked identity
    const again = await ssoSignIn(dana.email)
    expect(again.body).toMatchObject({ userId: dana.userId })
  })

  it("a key passes once its creator has signed in through a verified provider; a browser gets a redirect", async () => {
    const answer = await ssoSignIn(wendy.email, "text/html")
    expect(answer.status).toBe(302)
    expect(answer.headers.get("location")).toBe("/")
    expect(sessionCookieOf(answer.setCookies)).toMatch(/^svc_session=ses_/)
    expect((await call(node, "node.list", {}, { key: wendysKey })).status).toBe(200)
  })

  it("refuses a tampered state, another login's cookie, a missing or forged cookie, and creates no session", async () => {
    const before = await sessionCount()
    const first = await startSso()
    const redirect = new URL(await oidc.login(first.location, dana.email))
    const tampered = new URL(redirect)
    tampered.searchParams.set("state", `${redirect.searchParams.get("state")}x`)
    const refused = await callback(tampered.href, first.ssoCookie)
    expectError(refused, 401, "unauthorized", "sso_login_failed")
    expect(refused.body.error.message).toContain("state_mismatch")
    expect(sessionCookieOf(refused.setCookies)).toBeUndefined()
    expect(cookieNamed(refused.setCookies, "svc_sso")).toMatch(/Max-Age=0/)

    // the cookie of another login does not accept this login's state
    const second = await startSso()
    expectError(await callback(redirect.href, second.ssoCookie), 401, "unauthorized", "sso_login_failed")
    expectError(await callback(redirect.href, undefined), 401, "unauthorized", "sso_login_failed")
    expectError(await callback(redirect.href, "svc_sso=v1.AAAA.BBBB.CCCC"), 401, "unauthorized", "sso_login_failed")
    // a provider error comes back as a failed login too
    const denied = new URL(`${node.baseUrl}/v1/auth/sso/callback`)
    denied.searchParams.set("error", "access_denied")
    denied.searchParams.set("state", new URL(second.location).searchParams.get("state")!)
    expectError(await callback(denied.href, second.ssoCookie), 401, "unauthorized", "sso_login_failed")
    expect(await sessionCount()).toBe(before)
  })

  it("a provider account that is no member of the organization gets no session (no just-in-time accounts)", async () => {
    const before = await sessionCount()
    const answer = await ssoSignIn(STRANGER)
    expectError(answer, 403, "forbidden", "not_a_member")
    expect(sessionCookieOf(answer.setCookies)).toBeUndefined()
    expect(await sessionCount()).toBe(before)
    const [{ count }] = await node.db.sql`select count(*)::int as count from ${node.db.table("users")} where email = ${STRANGER}`
    expect(count).toBe(0)
  })
})

describe("Require two-factor", () => {
  it("an Owner sets up two-factor before requiring it", async () => {
    const enrolled = await callWithCookie(node.baseUrl, cookies.olga, "/v1/auth/mfa/enroll", {})
    expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(200)
    const confirmed = await callWithCookie(node.baseUrl, cookies.olga, "/v1/auth/mfa/confirm", { code: newTotp(enrolled.body.secret).generate() })
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200)
    const signedIn = await signIn(node.baseUrl, olga, newTotp(enrolled.body.secret).generate())
    expect(signedIn.status).toBe(200)
    cookies.olgaMfa = signedIn.cookie
  })

  it("within the grace period a session without two-factor passes; the grace is kept while the requirement stays on", async () => {
    const grace = await asSession(cookies.olgaMfa, "org.security.set", { requireSso: false, requireMfa: true, mfaGraceDays: 7 })
    expect(grace.status).toBe(200)
    expect(grace.body).toMatchObject({ requireSso: false, requireMfa: true })
    const endsAt = Date.parse(grace.body.mfaGraceEndsAt)
    expect(Math.abs(endsAt - (Date.now() + 7 * 86_400_000))).toBeLessThan(60_000)
    expect((await listNodes(cookies.dana)).status).toBe(200)
    expect((await listNodes(cookies.otto)).status).toBe(200)

    const unchanged = await asSession(cookies.olgaMfa, "org.security.set", { requireMfa: true, mfaGraceDays: 0 })
    expect(unchanged.body.mfaGraceEndsAt).toBe(grace.body.mfaGraceEndsAt)
    expect((await listNodes(cookies.dana)).status).toBe(200)
    expectError(await asSession(cookies.olgaMfa, "org.security.set", { requireMfa: true, mfaGraceDays: 91 }), 400, "bad_request", "invalid_input")
  })

  it("after the grace period sessions without two-factor are refused, Owners' too; keys carry no session", async () => {
    const off = await asSession(cookies.olgaMfa, "org.security.set", { requireMfa: false })
    expect(off.body).toEqual({ requireSso: false, requireMfa: false, mfaGraceEndsAt: null })
    const on = await asSession(cookies.olgaMfa, "org.security.set", { requireMfa: true, mfaGraceDays: 0 })
    expect(on.status).toBe(200)
    expect(Date.parse(on.body.mfaGraceEndsAt)).toBeLessThanOrEqual(Date.now())

    expectError(await listNodes(cookies.dana), 403, "forbidden", "mfa_required")
    // an SSO session is not a second factor
    expectError(await listNodes(cookies.danaSso), 403, "forbidden", "mfa_required")
    expectError(await listNodes(cookies.otto), 403, "forbidden", "mfa_required")
    expect((await listNodes(cookies.olgaMfa)).status).toBe(200)
    expect((await call(node, "node.list", {}, { key: node.bootstrap.workspaceKey })).status).toBe(200)
    expect((await call(node, "node.list", {}, { key: wendysKey })).status).toBe(200)
    expect((await call(node, "org.settings.get", {}, { key: node.bootstrap.orgKey })).body).toMatchObject({ requireMfa: true, mfaGraceEndsAt: on.body.mfaGraceEndsAt })
  })
})
