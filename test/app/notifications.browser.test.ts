/**
 * The notifications page and the bell in a real Chromium: re-authentication notices made by the
 * platform's own notifyReauth (what the refresh watcher calls when a credential needs
 * re-authentication) for a workspace Admin; the bell counts the unread ones; marking read and
 * unread, archiving and unarchiving change the list and the count at once; following a notice
 * opens its page in the app and marks it read. Another person sees none of them.
 */
import { Effect, Runtime } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { notifyReauth, type ReauthAlert } from "../../src/marketplace/Notify.ts"
import { launchBrowser, newContext, signInThroughPage, watchForPageErrors } from "../support/browser.ts"
import { addPerson, bootstrapPlace, type Person } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { asPerson, ok } from "../support/plugins.ts"

let node: TestNode
let browser: Browser
let admin: Person
let member: Person
/** A real listing of the organization, for the notice whose link is followed. */
let listingId: string

const WS = "/acme/main"

// the node's runtime holds every service of the app; its type names none
const notify = (alert: ReauthAlert) => Runtime.runPromise(node.runtime)(notifyReauth(alert) as Effect.Effect<unknown, unknown>)

beforeAll(async () => {
  node = await startTestNode()
  browser = await launchBrowser()
  admin = await addPerson(node, "noticeadmin", { org: "member", workspace: "admin" })
  member = await addPerson(node, "noticemember", { org: "member", workspace: "member" })
  const asAdmin = await asPerson(node, admin)
  listingId = ok(await asAdmin("plugin.org.install", { name: "com.test/notion", title: "Notion", endpointUrl: "https://notion.example.com/mcp", transport: "streamable-http", authKind: "secret" })).listingId
  const place = await bootstrapPlace(node)
  const alert = (listing: string, listingName: string): ReauthAlert => ({ ...place, listingId: listing, listingName, orgSlug: "acme" })
  // oldest first: the page lists the newest first
  await notify(alert(`porg_${"1".repeat(32)}`, "Linear"))
  await notify(alert(`porg_${"2".repeat(32)}`, "Jira"))
  await notify(alert(listingId, "Notion"))
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

const openAs = async (person: Person, next: string, options: { phone?: boolean } = {}) => {
  const page = await (await newContext(browser, node.baseUrl, options)).newPage()
  // before signing in, the app asks who is signed in and is answered 401
  const errors = watchForPageErrors(page, [/status of 401/])
  await signInThroughPage(page, person, { next })
  return { page, errors }
}

const title = (name: string) => `${name} needs you to sign in again`
const notice = (page: Page, name: string) => page.getByRole("listitem").filter({ has: page.getByRole("heading", { name: title(name) }) })
/** The bell's count, changed at once (well before its own 15-second refresh would). */
const bellSays = (page: Page, unread: number) =>
  page.getByRole("link", { name: unread === 0 ? "Notifications, none unread" : `Notifications, ${unread} unread` }).waitFor({ timeout: 5_000 })
const titles = async (page: Page) => page.getByRole("list", { name: "Notifications" }).getByRole("heading").allTextContents()

describe("notifications", () => {
  let page: Page
  let errors: Array<string>

  beforeAll(async () => {
    ;({ page, errors } = await openAs(admin, `${WS}/chat`))
  })

  it("the bell counts the unread notices and opens the list, newest first", async () => {
    await bellSays(page, 3)
    await page.getByRole("link", { name: "Notifications, 3 unread" }).click()
    await page.getByRole("heading", { name: "Notifications", level: 1 }).waitFor()
    await notice(page, "Linear").waitFor()
    expect(await titles(page)).toEqual([title("Notion"), title("Jira"), title("Linear")])
    for (const name of ["Notion", "Jira", "Linear"]) expect(await notice(page, name).textContent()).toContain("Unread")
    expect(await notice(page, "Jira").textContent()).toContain("The connection to Jira in acme/main stopped working")
  })

  it("marks a notice read and unread; the bell follows, and Unread only leaves out the read one", async () => {
    await page.getByRole("button", { name: `Mark read: “${title("Jira")}”` }).click()
    await bellSays(page, 2)
    await page.getByRole("button", { name: `Mark unread: “${title("Jira")}”` }).waitFor()
    expect(await notice(page, "Jira").textContent()).not.toContain("Unread")

    await page.getByLabel("Show").selectOption({ label: "Unread only" })
    await expect.poll(() => titles(page)).toEqual([title("Notion"), title("Linear")])
    await page.getByLabel("Show").selectOption({ label: "Open" })
    await page.getByRole("button", { name: `Mark unread: “${title("Jira")}”` }).click()
    await bellSays(page, 3)
    await page.getByRole("button", { name: `Mark read: “${title("Jira")}”` }).waitFor()
  })

  it("archives a notice out of the list (and the count) and brings it back", async () => {
    await page.getByRole("button", { name: `Archive “${title("Linear")}”` }).click()
    await bellSays(page, 2)
    await expect.poll(() => titles(page)).toEqual([title("Notion"), title("Jira")])

    await page.getByLabel("Show").selectOption({ label: "Archived" })
    await expect.poll(() => titles(page)).toEqual([title("Linear")])
    await page.getByRole("button", { name: `Unarchive “${title("Linear")}”` }).click()
    await page.getByRole("status").filter({ hasText: "Nothing is archived." }).waitFor()
    await bellSays(page, 3)
    await page.getByLabel("Show").selectOption({ label: "Open" })
    await expect.poll(() => titles(page)).toEqual([title("Notion"), title("Jira"), title("Linear")])
  })

  it("following a notice opens its page in the app and marks it read", async () => {
    await notice(page, "Notion").getByRole("link", { name: title("Notion") }).click()
    await page.waitForURL((url) => url.pathname === `${WS}/settings/integrations/reauth/${listingId}`)
    await page.getByRole("heading", { name: "Re-authenticate", level: 1 }).waitFor()
    await page.getByRole("region", { name: "Notion" }).getByLabel("Secret for Notion").waitFor()
    await bellSays(page, 2)
    await page.goBack()
    await notice(page, "Notion").getByRole("button", { name: `Mark unread: “${title("Notion")}”` }).waitFor()
    expect(errors).toEqual([])
  })
})

describe("another person", () => {
  it("sees none of them, also on a phone", async () => {
    const { page, errors } = await openAs(member, `${WS}/notifications`, { phone: true })
    await page.getByRole("heading", { name: "Notifications", level: 1 }).waitFor()
    await page.getByRole("status").filter({ hasText: "No notifications." }).waitFor()
    await bellSays(page, 0)
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)
    expect(errors).toEqual([])
  })
})

describe("many notices", () => {
  it("shows fifty at a time with older ones on request; the bell counts them all", async () => {
    const many = await addPerson(node, "noticemany", { org: "member", workspace: "admin" })
    const place = await bootstrapPlace(node)
    // the alert goes to the organization's Owners and Admins: count only this person's
    for (let i = 0; i < 53; i++) {
      await notify({ ...place, listingId: `porg_${String(i).padStart(32, "0")}`, listingName: `Server ${i}`, orgSlug: "acme" })
    }
    const { page, errors } = await openAs(many, `${WS}/notifications`)
    await bellSays(page, 53)
    await notice(page, "Server 52").waitFor()
    expect((await titles(page)).length).toBe(50)
    expect(await titles(page)).not.toContain(title("Server 0"))
    await page.getByRole("button", { name: "Show older notifications" }).click()
    await notice(page, "Server 0").waitFor()
    const all = await titles(page)
    expect(all.length).toBe(53)
    expect(new Set(all).size).toBe(53)
    expect(await page.getByRole("button", { name: "Show older notifications" }).count()).toBe(0)
    expect(errors).toEqual([])
  })
})
