/**
 * The Cluster page in a real Chromium: an Owner finds it in the navigation and sees the node with
 * its partitions, and the charts of throughput and lag drawn from the node's samples, redrawn as
 * writes arrive. A workspace Admin is not offered it and is told it is for Owners.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, openAs as openAsIn } from "../support/browser.ts"
import { addPerson, type Person } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call } from "../e2e/client.ts"

let node: TestNode
let browser: Browser

beforeAll(async () => {
  // samples twice a second: the charts have points within the test's time
  node = await startTestNode({ clusterSampleMs: 500 })
  browser = await launchBrowser()
})
afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

const openAs = (person: Person, next: string) => openAsIn(browser, node.baseUrl, person, next)

/** The drawn line of a chart: the `d` of its curve, empty while it has fewer than two points. */
const curveOf = async (page: Page, title: string) => {
  const curve = page.getByRole("figure", { name: title }).locator("path.recharts-line-curve")
  return (await curve.count()) === 0 ? "" : ((await curve.first().getAttribute("d")) ?? "")
}

const latestRate = async (page: Page) => Number.parseFloat((await page.getByTestId("eventsPerSecond-latest").textContent())?.replace(/^latest /, "") ?? "")

describe("the Cluster page", () => {
  it("shows an Owner the node with its partitions, and charts of throughput and lag that follow the writes", async () => {
    const owner = await addPerson(node, "owner", { org: "owner" })
    const { page, errors } = await openAs(owner, "/acme/main/chat")
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Cluster" }).click()
    await page.getByRole("heading", { name: "Cluster", level: 1 }).waitFor()

    await page.getByRole("heading", { name: node.config.nodeId, level: 3 }).waitFor()
    const partitions = page.getByRole("list", { name: `Partitions of ${node.config.nodeId}` }).getByRole("listitem")
    await expect.poll(() => partitions.allTextContents()).toEqual(["0 (ready)", "1 (ready)", "2 (ready)", "3 (ready)"])

    // both charts draw a line once two samples are in (the page refetches every 5 s)
    await expect.poll(() => curveOf(page, "Events appended per second"), { timeout: 15_000 }).toMatch(/^M[^A-Z]+[CL]/)
    await expect.poll(() => curveOf(page, "Lag (events not yet projected)"), { timeout: 15_000 }).toMatch(/^M[^A-Z]+[CL]/)

    const before = await curveOf(page, "Events appended per second")
    for (let i = 0; i < 40; i++) expect((await call(node, "system.ping", {})).status).toBe(200)
    await expect.poll(() => curveOf(page, "Events appended per second"), { timeout: 15_000 }).not.toBe(before)
    // writes going on show as a rate: the latest sample, taken while they are made, counts them
    const pinging = async () => {
      for (let i = 0; i < 5; i++) expect((await call(node, "system.ping", {})).status).toBe(200)
      return latestRate(page)
    }
    await expect.poll(pinging, { timeout: 15_000 }).toBeGreaterThan(0)
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("is not offered to a workspace Admin, who is told it is for Owners", async () => {
    const admin = await addPerson(node, "admin", { org: "member", workspace: "admin" })
    const { page, errors } = await openAs(admin, "/acme/main/cluster")
    await expect.poll(() => page.getByRole("note").textContent()).toContain("Only organization Owners can see the cluster")
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Cluster" }).count()).toBe(0)
    expect(errors).toEqual([])
    await page.context().close()
  })
})
