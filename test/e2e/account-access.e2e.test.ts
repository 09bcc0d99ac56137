/**
 * What the web app starts from: account.get (a signed-in person's account, organizations and the
 * workspaces they may enter), access.get (the capabilities the caller may invoke in a workspace, as
 * the checkpoint itself decides them, and the caller's roles), and the public
 * `GET /v1/auth/sso/providers?org=` the sign-in page offers SSO from.
 */
import { Effect, Runtime, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrgActor } from "../../actors/org/actor.ts"
import { AddMember, CreateOrganization, CreateWorkspace, RegisterSsoProvider, VerifySsoProvider } from "../../actors/org/protocol.ts"
import { registry } from "../../bin/App.ts"
import { restRouteOf } from "../../src/checkpoint/Capability.ts"
import { newTotp } from "../../src/identity/Sessions.ts"
import { addPerson, bootstrapPlace, callWithCookie, cliLogin, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { bearer, expectError, type Reply, send } from "./client.ts"

let node: TestNode
let orgId: string
/** Owner of the bootstrap organization without a workspace role; Mia: a Member of its `main`, Owner of `zeta`; Vic: a Viewer. */
let olga: Person
let mia: Person
let cookies: { olga: string; mia: string; vic: string; owner: string }
const otherOrgId = `org_${randomUUID().slice(0, 8)}`

const meta = () => ({ commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })
const sendAll = (commands: ReadonlyArray<readonly [string, any]>) =>
  Runtime.runPromise(node.runtime)(Effect.forEach(commands, ([key, command]) => node.host.send(OrgActor, key, command, meta()), { discard: true }))

beforeAll(async () => {
  node = await startTestNode()
  orgId = (await bootstrapPlace(node)).orgId
  olga = await addPerson(node, "olga", { org: "owner" })
  mia = await addPerson(node, "mia", { org: "member", workspace: "member" })
  const vic = await addPerson(node, "vic", { org: "member", workspace: "viewer" })
  await sendAll([
    [orgId, new CreateWorkspace({ orgId, workspaceId: `wsp_${randomUUID().slice(0, 8)}`, slug: "side", name: "Side" })],
    [otherOrgId, new CreateOrganization({ orgId: otherOrgId, slug: "zeta", name: "Zeta" })],
    [otherOrgId, new CreateWorkspace({ orgId: otherOrgId, workspaceId: `wsp_${randomUUID().slice(0, 8)}`, slug: "lab", name: "Lab" })],
    [otherOrgId, new AddMember({ orgId: otherOrgId, userId: mia.userId, role: "owner" })]
  ])
  const cookieOf = async (person: Pick<Person, "email" | "password">) => (await signIn(node.baseUrl, person)).cookie
  cookies = {
    olga: await cookieOf(olga),
    mia: await cookieOf(mia),
    vic: await cookieOf(vic),
    owner: await cookieOf({ email: node.bootstrap.ownerEmail!, password: node.bootstrap.ownerPassword! })
  }
}, 60_000)

afterAll(async () => node?.stop())

const ok = (reply: Reply) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

describe("account.get", () => {
  const account = (cookie: string) => callWithCookie(node.baseUrl, cookie, "/v1/account/get", {})

  it("a session: who the person is, each organization with their role, and the workspaces they may enter", async () => {
    expect(ok(await account(cookies.mia))).toEqual({
      userId: mia.userId,
      email: mia.email,
      name: "mia",
      mfaEnabled: false,
      memberships: [
        {
          orgId,
          slug: node.bootstrap.orgSlug,
          name: "Acme",
          role: "member",
          // not `side`: Mia holds no role there
          workspaces: [{ workspaceId: expect.any(String), slug: node.bootstrap.workspaceSlug, name: "Main", role: "member" }]
        },
        // an Owner enters every workspace of the organization
        { orgId: otherOrgId, slug: "zeta", name: "Zeta", role: "owner", workspaces: [{ workspaceId: expect.any(String), slug: "lab", name: "Lab", role: null }] }
      ]
    })
    const olgas = ok(await account(cookies.olga))
    expect(olgas.memberships).toEqual([
      expect.objectContaining({
        role: "owner",
        workspaces: [expect.objectContaining({ slug: node.bootstrap.workspaceSlug, role: null }), expect.objectContaining({ slug: "side", role: null })]
      })
    ])
  })

  it("a CLI login sees its own organization only", async () => {
    const key = await cliLogin(node, mia)
    const answered = await send(node, "/v1/account/get", { method: "POST", headers: { ...bearer(key), "content-type": "application/json" }, body: "{}" })
    expect(ok(answered).memberships.map((m: any) => m.slug)).toEqual([node.bootstrap.orgSlug])
  })

  it("says when two-factor is on", async () => {
    const enrolled = ok(await callWithCookie(node.baseUrl, cookies.olga, "/v1/auth/mfa/enroll", {}))
    expect((await callWithCookie(node.baseUrl, cookies.olga, "/v1/auth/mfa/confirm", { code: newTotp(enrolled.secret).generate() })).status).toBe(200)
    expect(ok(await account(cookies.olga)).mfaEnabled).toBe(true)
  })

  it("is a person's: a key is refused (403 session_required), no credential is 401", async () => {
    const post = (headers: Record<string, string>) => send(node, "/v1/account/get", { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{}" })
    expectError(await post(bearer(node.bootstrap.workspaceKey)), 403, "forbidden", "session_required")
    expectError(await post({}), 401, "unauthorized", "missing_credential")
  })
})

describe("access.get", () => {
  /** A capability at its REST route and method, with a key or a session. */
  const caller = (name: string, credential: { readonly key: string } | { readonly cookie: string }) => ({
    name,
    ask: (capability: string, input: unknown): Promise<Reply> => {
      const route = restRouteOf(registry.byName.get(capability)!)
      const path = `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${route.path}`
      const method = route.method === "del" ? "DELETE" : "POST"
      return "key" in credential
        ? send(node, path, { method, headers: { ...bearer(credential.key), "content-type": "application/json" }, body: JSON.stringify(input) })
        : callWithCookie(node.baseUrl, credential.cookie, path, input, method)
    }
  })
  const workspaceKey = () => caller("workspace key", { key: node.bootstrap.workspaceKey })
  const orgKey = () => caller("organization key", { key: node.bootstrap.orgKey })
  const session = (name: keyof typeof cookies) => caller(name, { cookie: cookies[name] })

  it("names what each caller may invoke here, and its roles", async () => {
    const member = ok(await workspaceKey().ask("access.get", {}))
    expect(member).toMatchObject({ workspaceRole: "member", orgRole: null })
    expect(member.capabilities).toEqual(expect.arrayContaining(["access.get", "ask_assistant", "conversation.list", "run.get", "spend.get", "node.create"]))
    // a person's (a key may not manage keys), the Owner's, and a pack not installed
    for (const name of ["create_api_key", "audit.list", "plugin.org.install", "documents.generate"]) expect(member.capabilities).not.toContain(name)
    expect(member.capabilities).toEqual([...member.capabilities].sort())

    const org = ok(await orgKey().ask("access.get", {}))
    expect(org).toMatchObject({ workspaceRole: null, orgRole: "member" })
    expect(org.capabilities).toContain("org.settings.get")
    for (const name of ["conversation.list", "run.list", "run.get", "spend.get", "approval.list", "ask_assistant"]) expect(org.capabilities).not.toContain(name)

    const owner = ok(await session("owner").ask("access.get", {}))
    expect(owner).toMatchObject({ workspaceRole: "admin", orgRole: "owner" })
    expect(owner.capabilities).toEqual(expect.arrayContaining(["audit.list", "create_api_key", "plugin.org.install", "conversation.list"]))

    const viewer = ok(await session("vic").ask("access.get", {}))
    expect(viewer).toMatchObject({ workspaceRole: "viewer", orgRole: "member" })
    expect(viewer.capabilities).toContain("conversation.list")
    expect(viewer.capabilities).not.toContain("ask_assistant")

    // acting on the caller (account.get) is no capability of a workspace
    expect(owner.capabilities).not.toContain("account.get")
  })

  it("agrees with the checkpoint: each capability it names answers a bad input with 400, each other one is refused with 403", async () => {
    // a capability whose input refuses an unknown field reaches input validation only when the checkpoint admits the caller
    const probe = { zzProbe: 1 }
    const probed = registry.all.filter(
      (c) => c.scope !== "principal" && c.surfaces.includes("api") && Schema.decodeUnknownEither(c.input, { onExcessProperty: "error" })(probe)._tag === "Left"
    )
    expect(probed.length).toBeGreaterThan(50)
    for (const caller of [workspaceKey(), orgKey(), session("vic"), session("owner")]) {
      const allowed = new Set<string>(ok(await caller.ask("access.get", {})).capabilities)
      for (const capability of probed) {
        const answered = await caller.ask(capability.name, probe)
        expect({ caller: caller.name, capability: capability.name, status: answered.status }).toEqual({
          caller: caller.name,
          capability: capability.name,
          status: allowed.has(capability.name) ? 400 : 403
        })
      }
    }
  })
})

describe("GET /v1/auth/sso/providers", () => {
  beforeAll(async () => {
    const provider = (org: string, providerId: string, name: string) =>
      [org, new RegisterSsoProvider({ orgId: org, providerId, name, issuer: "https://idp.example.test", clientId: "client", clientSecretSealed: "sealed" })] as const
    await sendAll([
      provider(orgId, "sso_okta", "Okta"),
      [orgId, new VerifySsoProvider({ orgId, providerId: "sso_okta" })],
      provider(orgId, "sso_pending", "Not verified yet"),
      provider(otherOrgId, "sso_zeta", "Zeta IdP"),
      [otherOrgId, new VerifySsoProvider({ orgId: otherOrgId, providerId: "sso_zeta" })]
    ])
  })

  it("answers an organization's verified providers, without a credential", async () => {
    expect(await send(node, `/v1/auth/sso/providers?org=${node.bootstrap.orgSlug}`)).toEqual({ status: 200, body: { providers: [{ id: "sso_okta", name: "Okta" }] } })
    expect(await send(node, "/v1/auth/sso/providers?org=zeta")).toEqual({ status: 200, body: { providers: [{ id: "sso_zeta", name: "Zeta IdP" }] } })
  })

  it("an unknown organization has none, as one without SSO; no organization named is 400", async () => {
    expect(await send(node, "/v1/auth/sso/providers?org=nobody")).toEqual({ status: 200, body: { providers: [] } })
    expectError(await send(node, "/v1/auth/sso/providers"), 400, "bad_request", "invalid_input")
  })
})
