/**
 * Re-authentication alerts and notifications of spec 2.9, 4.5 and 6.3.5, on a real node with a real
 * SMTP server: notifyReauth makes an in-app notice (kind `system`, the re-authentication route) for
 * each member whose role is in `mcp_auth_alerts.roles`, and its email mirror with the link
 * (`emailed_at` set); with the mail server down the notice still exists and `emailed_at` stays null.
 * notifications.list and notifications.mark over REST and MCP, one's own notices only; the setting
 * read and set by Owners.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Runtime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { notifyReauth, type ReauthAlert } from "../../src/marketplace/Notify.ts"
import { connectMcp } from "../support/mcp.ts"
import { addPerson, bootstrapPlace, callWithCookie, cliLogin, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"
import { call, eventsOf, expectError } from "./client.ts"

let node: TestNode
let sink: SmtpSink
let owner: Person
let admin: Person
let member: Person
let viewer: Person
const cookies = new Map<Person, string>()
let adminMcp: Client
let place: { orgId: string; workspaceId: string }

beforeAll(async () => {
  sink = await startSmtpSink()
  node = await startTestNode({ mail: { smtpUrl: sink.url, from: "Alerts <alerts@svc.test>" } })
  place = await bootstrapPlace(node)
  owner = await addPerson(node, "owner", { org: "owner" })
  admin = await addPerson(node, "admin", { org: "member", workspace: "admin" })
  member = await addPerson(node, "member", { org: "member", workspace: "member" })
  viewer = await addPerson(node, "viewer", { org: "member", workspace: "viewer" })
  for (const person of [owner, admin, member, viewer]) cookies.set(person, (await signIn(node.baseUrl, person)).cookie)
  adminMcp = await connectMcp(node.baseUrl, await cliLogin(node, admin), "svc-e2e-notifications")
}, 60_000)
afterAll(async () => {
  await adminMcp?.close()
  await node?.stop()
  await sink?.close()
})

const as = (person: Person, capability: string, input: unknown) =>
  callWithCookie(node.baseUrl, cookies.get(person)!, `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`, input)

const overMcp = async (client: Client, capability: string, args: Record<string, unknown>) => {
  const result = (await client.callTool({ name: capability, arguments: args })) as CallToolResult
  return result.isError === true
    ? { refused: true, body: JSON.parse((result.content[0] as { text: string }).text) }
    : { refused: false, body: result.structuredContent as any }
}

let alerts = 0
/** A credential of a new listing became `needs_reauth`: what M3's watcher does. */
const alert = (overrides: Partial<ReauthAlert> = {}) => {
  alerts += 1
  const listingId = `porg_listing${alerts}`
  return {
    orgId: place.orgId,
    workspaceId: place.workspaceId,
    listingId,
    listingName: `Linear ${alerts}`,
    orgSlug: node.bootstrap.orgSlug,
    ...overrides
  } satisfies ReauthAlert
}
// the node's runtime holds every service of the app; its type names none
const notify = (request: ReauthAlert) => Runtime.runPromise(node.runtime)(notifyReauth(request) as Effect.Effect<Effect.Effect.Success<ReturnType<typeof notifyReauth>>, unknown>)
const deepLinkOf = (listingId: string) => `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/settings/integrations/reauth/${listingId}`

/** Every Owner of the bootstrap organization (its bootstrap Owner too). */
const ownersOf = async () =>
  (await node.db.sql`select u.user_id, u.email from ${node.db.sql(node.db.schema)}.org_members m
     join ${node.db.sql(node.db.schema)}.users u using (user_id) where m.org_id = ${place.orgId} and m.role = 'owner'`)
    .map((r) => ({ userId: r.user_id as string, email: r.email as string }))

const noticesOf = async (person: Person, input: Record<string, unknown> = {}) => {
  const reply = await as(person, "notifications.list", input)
  expect(reply.status).toBe(200)
  return reply.body.notifications as Array<any>
}

describe("notifyReauth", () => {
  it("notifies Owners and Admins by default, in the app and by email with the link, emailed_at set", async () => {
    const request = alert()
    const owners = await ownersOf()
    const before = sink.messages.length
    const notified = await notify(request)

    const expected = [...owners.map((o) => o.userId), admin.userId].sort()
    expect(notified.map((n) => n.userId).sort()).toEqual(expected)
    for (const n of notified) expect(n.emailedAt).toEqual(expect.any(String))

    const mails = (await sink.received(before + expected.length)).slice(before)
    expect(mails.map((m) => m.to[0]).sort()).toEqual([...owners.map((o) => o.email), admin.email].sort())
    const link = `${node.config.baseUrl}${deepLinkOf(request.listingId)}`
    for (const mail of mails) {
      expect(mail.from).toBe("alerts@svc.test")
      expect(mail.decoded).toContain(link)
      expect(mail.decoded).toContain(`${request.listingName} needs you to sign in again`)
    }

    const [notice] = (await noticesOf(admin)).filter((n) => n.subject.listingId === request.listingId)
    expect(notice).toMatchObject({
      kind: "system",
      workspaceId: place.workspaceId,
      title: `${request.listingName} needs you to sign in again`,
      deepLink: deepLinkOf(request.listingId),
      unread: true,
      archived: false,
      emailedAt: expect.any(String),
      resolvedAt: null
    })
    expect(notice.notificationId).toMatch(/^ntf_/)
    expect((await noticesOf(owner)).some((n) => n.subject.listingId === request.listingId)).toBe(true)
    // not in the roles: nothing for a Member or a Viewer
    expect((await noticesOf(member)).filter((n) => n.subject.listingId === request.listingId)).toEqual([])
    expect((await noticesOf(viewer)).filter((n) => n.subject.listingId === request.listingId)).toEqual([])
    // every change is an event of the notice's actor
    expect((await eventsOf(node, `notification:${notice.notificationId}`)).map((e) => e.type)).toEqual(["notification.created", "notification.emailed"])
  })

  it("notifies and emails nobody twice for the same cause", async () => {
    const request = alert({ causeId: "mcrd_1:2026-11-24T00:00:00Z" })
    const before = sink.messages.length
    const first = await notify(request)
    await sink.received(before + first.length)
    const again = await notify(request)
    expect(again).toEqual(first)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(sink.messages.length).toBe(before + first.length)
    expect((await noticesOf(admin)).filter((n) => n.subject.listingId === request.listingId)).toHaveLength(1)
  })
})

describe("notifyReauth for an organization's shared credential", () => {
  it("tells the organization's Owners and the Admins of every workspace, each led to the re-authentication page in a workspace of theirs", async () => {
    const created = await as(owner, "workspace.create", { slug: "zz-shared", name: "Shared" })
    expect(created.status).toBe(200)
    const otherAdmin = await addPerson(node, "otheradmin", { org: "member", workspace: "admin", workspaceId: created.body.workspaceId })
    cookies.set(otherAdmin, (await signIn(node.baseUrl, otherAdmin)).cookie)
    const linkIn = (workspaceSlug: string, listingId: string) => `/${node.bootstrap.orgSlug}/${workspaceSlug}/settings/integrations/reauth/${listingId}`

    const shared = alert({ workspaceId: null })
    const notified = await notify(shared)
    expect(notified.map((n) => n.userId).sort()).toEqual([...(await ownersOf()).map((o) => o.userId), admin.userId, otherAdmin.userId].sort())
    const [toOther] = (await noticesOf(otherAdmin)).filter((n) => n.subject.listingId === shared.listingId)
    expect(toOther).toMatchObject({ workspaceId: null, deepLink: linkIn("zz-shared", shared.listingId) })
    expect(toOther.body).toContain(`The organization ${node.bootstrap.orgSlug}'s shared connection to ${shared.listingName} stopped working`)
    const [toAdmin] = (await noticesOf(admin)).filter((n) => n.subject.listingId === shared.listingId)
    expect(toAdmin.deepLink).toBe(linkIn(node.bootstrap.workspaceSlug, shared.listingId))
    // an Owner in no workspace: the organization's first
    const [toOwner] = (await noticesOf(owner)).filter((n) => n.subject.listingId === shared.listingId)
    expect(toOwner.deepLink).toBe(linkIn([node.bootstrap.workspaceSlug, "zz-shared"].sort()[0], shared.listingId))

    // a workspace's own credential: that workspace's Admins only
    const own = alert()
    expect((await notify(own)).map((n) => n.userId)).not.toContain(otherAdmin.userId)
  })
})

describe("org.mcp_auth_alerts", () => {
  it("defaults to email for Owner and Admin; Owners set it; others are refused; none is refused", async () => {
    expect((await as(owner, "org.mcp_auth_alerts.get", {})).body).toEqual({ sendEmail: true, roles: ["Owner", "Admin"] })
    for (const person of [admin, member, viewer]) {
      expectError(await as(person, "org.mcp_auth_alerts.get", {}), 403, "forbidden", undefined)
      expectError(await as(person, "org.mcp_auth_alerts.set", { sendEmail: false, roles: ["Owner"] }), 403, "forbidden", undefined)
    }
    expectError(await call(node, "org.mcp_auth_alerts.set", { sendEmail: false, roles: ["Owner"] }), 403, "forbidden", undefined)
    expectError(await as(owner, "org.mcp_auth_alerts.set", { sendEmail: true, roles: [] }), 400, "bad_request", "alert_roles_required")
    expectError(await as(owner, "org.mcp_auth_alerts.set", { sendEmail: true, roles: ["Janitor"] }), 400, "bad_request", "invalid_input")
  })

  it("decides who hears and whether by email", async () => {
    const set = await as(owner, "org.mcp_auth_alerts.set", { sendEmail: false, roles: ["Viewer", "Member"] })
    expect(set).toEqual({ status: 200, body: { sendEmail: false, roles: ["Member", "Viewer"] } })
    expect((await as(owner, "org.mcp_auth_alerts.get", {})).body).toEqual({ sendEmail: false, roles: ["Member", "Viewer"] })
    const request = alert()
    const before = sink.messages.length
    const notified = await notify(request)
    expect(notified.map((n) => n.userId).sort()).toEqual([member.userId, viewer.userId].sort())
    expect(notified.every((n) => n.emailedAt === null)).toBe(true)
    const [notice] = (await noticesOf(member)).filter((n) => n.subject.listingId === request.listingId)
    expect(notice).toMatchObject({ deepLink: deepLinkOf(request.listingId), emailedAt: null, unread: true })
    expect((await noticesOf(admin)).filter((n) => n.subject.listingId === request.listingId)).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(sink.messages.length).toBe(before)
    expect((await as(owner, "org.mcp_auth_alerts.set", { sendEmail: true, roles: ["Owner", "Admin"] })).status).toBe(200)
  })
})

describe("notifications.list paging", () => {
  it("pages newest first with a cursor, none twice; unreadCount counts every unread notice, not the page's", async () => {
    const made: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const request = alert()
      await notify(request)
      made.unshift(request.listingId)
    }
    const first = await as(admin, "notifications.list", { limit: 2 })
    expect(first.status).toBe(200)
    const unread = first.body.unreadCount as number
    expect(unread).toBeGreaterThanOrEqual(5)
    const seen: Array<any> = [...first.body.notifications]
    let cursor: string | null = first.body.nextCursor
    while (cursor !== null) {
      const next = await as(admin, "notifications.list", { limit: 2, cursor })
      expect(next.status).toBe(200)
      expect(next.body.notifications.length).toBeLessThanOrEqual(2)
      seen.push(...next.body.notifications)
      cursor = next.body.nextCursor
    }
    const ids = seen.map((n) => n.notificationId)
    expect(new Set(ids).size).toBe(ids.length)
    expect(seen.filter((n) => made.includes(n.subject.listingId)).map((n) => n.subject.listingId)).toEqual(made)
    const times = seen.map((n) => Date.parse(n.createdAt))
    expect([...times].sort((a, b) => b - a)).toEqual(times)

    const newest = seen[0]
    expect((await as(admin, "notifications.mark", { notificationId: newest.notificationId, mark: "read" })).status).toBe(200)
    expect((await as(admin, "notifications.list", { limit: 1 })).body.unreadCount).toBe(unread - 1)
    expectError(await as(admin, "notifications.list", { cursor: "not-a-cursor" }), 400, "bad_request", "invalid_cursor")
  })
})

describe("notifications.mark", () => {
  it("marks read and unread, archives and unarchives one's own notice over REST; the list filters follow", async () => {
    const request = alert()
    await notify(request)
    const mine = async (input: Record<string, unknown> = {}) => (await noticesOf(admin, input)).filter((n) => n.subject.listingId === request.listingId)
    const [notice] = await mine()
    const mark = async (mark: string) => {
      const reply = await as(admin, "notifications.mark", { notificationId: notice.notificationId, mark })
      expect(reply.status).toBe(200)
      return reply.body
    }

    expect(await mark("read")).toEqual({ notificationId: notice.notificationId, unread: false, archived: false })
    expect(await mine()).toMatchObject([{ unread: false }])
    expect(await mine({ unread: true })).toEqual([])
    expect(await mark("unread")).toMatchObject({ unread: true })
    expect(await mine({ unread: true })).toMatchObject([{ unread: true }])
    expect(await mark("archive")).toEqual({ notificationId: notice.notificationId, unread: true, archived: true })
    expect(await mine()).toEqual([])
    expect(await mine({ archived: true })).toMatchObject([{ archived: true, deepLink: deepLinkOf(request.listingId) }])
    expect(await mark("unarchive")).toMatchObject({ archived: false })
    expect(await mine()).toMatchObject([{ archived: false }])
    // marking again what already holds records nothing more
    const events = await eventsOf(node, `notification:${notice.notificationId}`)
    await mark("unarchive")
    expect(await eventsOf(node, `notification:${notice.notificationId}`)).toEqual(events)
  })

  it("marks only one's own: another's notice and an unknown id are 404; a key is refused", async () => {
    const request = alert()
    await notify(request)
    const [notice] = (await noticesOf(admin)).filter((n) => n.subject.listingId === request.listingId)
    for (const person of [owner, member]) {
      expectError(await as(person, "notifications.mark", { notificationId: notice.notificationId, mark: "read" }), 404, "not_found", "notification_not_found")
    }
    expectError(await as(admin, "notifications.mark", { notificationId: "ntf_nothing", mark: "read" }), 404, "not_found", "notification_not_found")
    expectError(await as(admin, "notifications.mark", { notificationId: notice.notificationId, mark: "delete" }), 400, "bad_request", "invalid_input")
    expectError(await call(node, "notifications.mark", { notificationId: notice.notificationId, mark: "read" }), 403, "forbidden", "session_required")
    expect((await noticesOf(admin)).find((n) => n.notificationId === notice.notificationId)).toMatchObject({ unread: true, archived: false })
  })

  it("lists and marks over MCP, as over REST", async () => {
    const request = alert()
    await notify(request)
    const listed = await overMcp(adminMcp, "notifications.list", {})
    expect(listed.refused).toBe(false)
    const notice = listed.body.notifications.find((n: any) => n.subject.listingId === request.listingId)
    expect(notice).toMatchObject({ kind: "system", deepLink: deepLinkOf(request.listingId), unread: true, archived: false, emailedAt: expect.any(String) })
    const marked = await overMcp(adminMcp, "notifications.mark", { notificationId: notice.notificationId, mark: "read" })
    expect(marked).toEqual({ refused: false, body: { notificationId: notice.notificationId, unread: false, archived: false } })
    expect((await overMcp(adminMcp, "notifications.list", { unread: true })).body.notifications.some((n: any) => n.notificationId === notice.notificationId)).toBe(false)
    const refused = await overMcp(adminMcp, "notifications.mark", { notificationId: "ntf_nothing", mark: "read" })
    expect(refused).toMatchObject({ refused: true, body: { error: { code: "not_found", reason: "notification_not_found" } } })
  })

  it("marks a run's notice too (projected by the run)", async () => {
    const automation = await as(owner, "automation.create", {
      name: "ask the owner",
      trigger: { type: "api" },
      steps: [{ name: "approve", stepType: "human_input", config: { prompt: "Ship it?" } }],
      enabled: true
    })
    const fired = await as(owner, "automation.trigger", { automationId: automation.body.automationId, payload: {} })
    expect(fired.status).toBe(200)
    let notice: any
    for (let i = 0; i < 100 && notice === undefined; i++) {
      notice = (await noticesOf(owner)).find((n) => n.subject.runId === fired.body.runId)
      if (notice === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(notice).toMatchObject({ kind: "run", unread: true, archived: false, emailedAt: null })
    expect((await as(owner, "notifications.mark", { notificationId: notice.notificationId, mark: "archive" })).body).toMatchObject({ archived: true })
    expect((await noticesOf(owner, { archived: true })).find((n) => n.notificationId === notice.notificationId)).toMatchObject({
      archived: true,
      deepLink: `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/automations/${automation.body.automationId}/runs/${fired.body.runId}`
    })
  })
})

describe("notifyReauth with the mail server down", () => {
  it("still makes every notice, emailed_at null", async () => {
    await sink.close()
    const request = alert()
    const notified = await notify(request)
    expect(notified.length).toBeGreaterThan(0)
    expect(notified.every((n) => n.emailedAt === null)).toBe(true)
    const [notice] = (await noticesOf(admin)).filter((n) => n.subject.listingId === request.listingId)
    expect(notice).toMatchObject({ kind: "system", deepLink: deepLinkOf(request.listingId), emailedAt: null, unread: true })
    expect((await eventsOf(node, `notification:${notice.notificationId}`)).map((e) => e.type)).toEqual(["notification.created"])
  })
})
