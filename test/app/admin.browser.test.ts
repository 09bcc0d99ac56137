/**
 * An Owner's pages in a real Chromium: the audit log (its filters narrow the list and live in the
 * address; older entries come a page at a time) and usage and billing (the organization's credits,
 * this workspace's spend after a real turn, a budget set from the page). A workspace Admin sees
 * the workspace's part only.
 */
import { type Effect, Runtime } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { grantCredits } from "../../src/billing/BillingOperator.ts"
import { launchBrowser, openAs as openAsIn } from "../support/browser.ts"
import { addPerson, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call } from "../e2e/client.ts"

let node: TestNode
let browser: Browser
let owner: Person

beforeAll(async () => {
  node = await startTestNode()
  browser = await launchBrowser()
  owner = await addPerson(node, "owner", { org: "owner" })
})
afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

const openAs = (person: Person, next: string) => openAsIn(browser, node.baseUrl, person, next)

/** The entries the audit page lists: each row's "What" cell. */
const listed = async (page: Page) => {
  const table = page.getByRole("table", { name: "Audit log entries, newest first" })
  const rows = table.getByRole("row")
  const count = await rows.count()
  const whats: Array<string> = []
  for (let i = 1; i < count; i++) whats.push((await rows.nth(i).getByRole("cell").nth(1).textContent()) ?? "")
  return whats
}

const showing = (page: Page) => page.getByRole("status").filter({ hasText: /entries|entry|No entries/ }).textContent()

describe("audit log", () => {
  it("narrows the list by kind and capability, pages through older entries, and says when nothing matches", async () => {
    const cookie = (await signIn(node.baseUrl, owner)).cookie
    const made = await callWithCookie(node.baseUrl, cookie, "/v1/acme/main/create_api_key", { name: "short-lived" })
    expect(made.status).toBe(200)
    const revoked = await callWithCookie(node.baseUrl, cookie, "/v1/acme/main/api-keys/revoke", { keyPublicId: made.body.publicId }, "DELETE")
    expect(revoked.status).toBe(200)
    const pings = 52
    for (let i = 0; i < pings; i++) expect((await call(node, "system.ping", {})).status).toBe(200)

    const { page, errors } = await openAs(owner, "/acme/main/chat")
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }).click()
    await page.getByRole("heading", { name: "Audit log", level: 1 }).waitFor()
    await expect.poll(() => showing(page)).toContain("Showing 50 entries; more follow")
    const everything = await listed(page)
    expect(new Set(everything.map((what) => what.replace(/(capability call|security event|automation run)$/, ""))).size).toBeGreaterThan(1)

    // security events only: the revocation is there, and nothing else is a capability call
    await page.getByLabel("Kind").selectOption({ label: "Security events" })
    await page.getByRole("button", { name: "Apply filters" }).click()
    await page.waitForURL((url) => url.searchParams.get("kind") === "security")
    await expect.poll(async () => (await listed(page)).some((what) => what.startsWith("api_key.revoked"))).toBe(true)
    const security = await listed(page)
    expect(security.every((what) => what.endsWith("security event"))).toBe(true)

    // a shared link keeps its filters; one capability, paged
    await page.goto("/acme/main/audit?capability=system.ping")
    expect(await page.getByLabel("Capability").inputValue()).toBe("system.ping")
    await expect.poll(() => showing(page)).toBe("Showing 50 entries; more follow.")
    expect((await listed(page)).every((what) => what === "system.pingcapability call")).toBe(true)
    await page.getByRole("button", { name: "Show older entries" }).click()
    await expect.poll(() => showing(page)).toBe(`Showing ${pings} entries.`)
    expect(await page.getByRole("button", { name: "Show older entries" }).count()).toBe(0)

    await page.getByLabel("Outcome").selectOption({ label: "Failed" })
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => showing(page)).toBe("No entries match these filters.")
    await page.getByRole("link", { name: "Clear filters" }).click()
    await page.waitForURL((url) => url.search === "")
    await expect.poll(() => showing(page)).toContain("more follow")
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("is not offered to a workspace Admin, who is told it is for Owners", async () => {
    const admin = await addPerson(node, "notowner", { org: "member", workspace: "admin" })
    const { page, errors } = await openAs(admin, "/acme/main/audit")
    await expect.poll(() => page.getByRole("note").textContent()).toContain("Only organization Owners can read the audit log")
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }).count()).toBe(0)
    expect(errors).toEqual([])
    await page.context().close()
  })
})

describe("usage and billing", () => {
  it("shows the organization's credits and this workspace's spend after a turn; a budget set on the page is shown and counted", async () => {
    // the operator grants credits (as `svc billing grant` does), in the node's own services
    await Runtime.runPromise(node.runtime)(grantCredits("acme", 50_000) as Effect.Effect<unknown, unknown, never>)
    const asked = await call(node, "assistant.ask", { content: "hello there" })
    expect(asked.status).toBe(200)

    const { page, errors } = await openAs(owner, "/acme/main/chat")
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Usage & billing" }).click()
    await page.getByRole("heading", { name: "Usage & billing", level: 1 }).waitFor()
    const workspace = page.getByRole("region", { name: /^This workspace/ })
    const organization = page.getByRole("region", { name: "The organization" })
    const fact = (region: typeof workspace, term: string) => region.locator("dt", { hasText: term }).locator("xpath=following-sibling::dd").textContent()

    // the turn's charge lands after its answer: reload until it shows
    await expect
      .poll(async () => {
        await page.reload()
        return fact(workspace, "Assistant runs")
      }, { timeout: 15_000 })
      .toBe("1")
    const spent = Number((await fact(workspace, "Spent"))!.replace(/\D/g, ""))
    expect(spent).toBeGreaterThan(0)
    expect(await workspace.getByRole("table", { name: "By model" }).getByRole("row").count()).toBe(2)
    expect(await fact(workspace, "Monthly budget")).toBe("No budget")
    expect(await fact(organization, "Credits left")).toBe(`${(50_000 - spent).toLocaleString("en-US")} credits`)

    await workspace.getByLabel("Monthly budget (credits)").fill(String(spent + 1000))
    await workspace.getByRole("button", { name: "Save budget" }).click()
    await expect.poll(() => fact(workspace, "Monthly budget")).toBe(`${(spent + 1000).toLocaleString("en-US")} credits`)
    expect(await fact(workspace, "Left this month")).toBe("1,000 credits")
    expect(await workspace.getByRole("meter", { name: "Budget used" }).count()).toBe(1)
    const budgets = organization.getByRole("table", { name: "Workspace budgets" })
    await expect.poll(() => budgets.getByRole("row", { name: /^main/ }).getByRole("cell").first().textContent()).toBe(`${(spent + 1000).toLocaleString("en-US")} credits`)

    await organization.getByLabel("Monthly assistant cap (credits)").fill("900000")
    await organization.getByRole("button", { name: "Save caps" }).click()
    await expect.poll(() => fact(organization, "Assistant spend")).toContain("of a 900,000 credits cap")
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("shows a workspace Admin this workspace's spend and budget, not the organization's billing", async () => {
    const admin = await addPerson(node, "budgeter", { org: "member", workspace: "admin" })
    const { page, errors } = await openAs(admin, "/acme/main/billing")
    await page.getByRole("region", { name: /^This workspace/ }).getByLabel("Monthly budget (credits)").waitFor()
    expect(await page.getByRole("region", { name: "The organization" }).count()).toBe(0)
    expect(errors).toEqual([])
    await page.context().close()
  })
})
