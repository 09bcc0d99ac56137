/**
 * The API keys page in a real Chromium: a workspace Admin creates a key (its secret shown once,
 * and working), rotates it (the old key's grace end shown, both keys working until the rotation
 * is confirmed) and revokes it (refused from then on). A Member is not offered the page, and is
 * told plainly when they open its address.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, newContext, signInThroughPage, watchForPageErrors } from "../support/browser.ts"
import { addPerson, type Person } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

let node: TestNode
let browser: Browser
let admin: Person
let member: Person

beforeAll(async () => {
  node = await startTestNode()
  browser = await launchBrowser()
  admin = await addPerson(node, "keyadmin", { org: "member", workspace: "admin" })
  member = await addPerson(node, "keymember", { org: "member", workspace: "member" })
})
afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

const KEYS_PATH = "/acme/main/settings/keys"

const whoami = async (key: string) => {
  const response = await fetch(`${node.baseUrl}/v1/auth/whoami`, { headers: { authorization: `Bearer ${key}` } })
  return { status: response.status, body: (await response.json()) as { apiKeyId?: string; workspaceId?: string | null } }
}

const openAs = async (person: Person, options: { phone?: boolean } = {}) => {
  const context = await newContext(browser, node.baseUrl, options)
  const page = await context.newPage()
  // the app asks who is signed in before signing in: a 401 the browser logs
  return { page, errors: watchForPageErrors(page, [/status of 401/]) }
}

/** The one-time secret on the page, and the panel it is in. */
const shownSecret = async (page: Page) => {
  const panel = page.getByRole("region", { name: /new key/ })
  await panel.waitFor()
  expect(await panel.textContent()).toContain("You will not see it again")
  return { panel, rawKey: await panel.getByRole("textbox", { name: "New API key" }).inputValue() }
}

const row = (page: Page, name: string) => page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: new RegExp(`^${name}`) }) })

describe("API keys", () => {
  it("creates a key whose secret is shown once and works, rotates it with a grace end, confirms the rotation and revokes the new key", async () => {
    const { page, errors } = await openAs(admin)
    await signInThroughPage(page, admin)
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API keys" }).click()
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor()

    await page.getByLabel("Name").fill("ci deploys")
    await page.getByLabel("Expires after (days)").fill("30")
    await page.getByRole("button", { name: "Create key" }).click()
    const created = await shownSecret(page)
    expect(created.rawKey).toMatch(/^svc_/)
    const first = await whoami(created.rawKey)
    expect(first.status).toBe(200)
    expect(first.body.workspaceId).not.toBeNull()
    // a workspace Admin makes workspace keys only: no choice of an organization key is offered
    expect(await page.getByLabel("Acts in").count()).toBe(0)
    await expect.poll(() => row(page, "ci deploys").getByRole("cell").nth(1).textContent()).toBe("Active")

    // once dismissed, the secret is gone from the page, and a reload does not bring it back
    await created.panel.getByRole("button", { name: "I have copied it" }).click()
    expect(await page.content()).not.toContain(created.rawKey)
    await page.reload()
    await row(page, "ci deploys").waitFor()
    expect(await page.content()).not.toContain(created.rawKey)

    // rotation: a new secret, and the time the old key stops on its own (24 hours from now)
    const before = Date.now()
    await page.getByRole("button", { name: "Rotate ci deploys" }).click()
    const rotated = await shownSecret(page)
    expect(rotated.rawKey).not.toBe(created.rawKey)
    expect(await rotated.panel.textContent()).toContain(`The old key (${first.body.apiKeyId}) keeps working until`)
    const graceEnd = Date.parse((await rotated.panel.locator("time").getAttribute("datetime"))!)
    expect(graceEnd - before).toBeGreaterThan(24 * 3600_000 - 60_000)
    expect(graceEnd - before).toBeLessThan(24 * 3600_000 + 60_000)
    expect((await whoami(created.rawKey)).status).toBe(200)
    const second = await whoami(rotated.rawKey)
    expect(second.status).toBe(200)
    await expect.poll(() => page.getByRole("row").filter({ hasText: first.body.apiKeyId! }).getByRole("cell").nth(1).textContent()).toContain("Rotated, still working")

    // confirming the rotation stops the old key at once
    await rotated.panel.getByRole("button", { name: "Confirm rotation: stop the old key now" }).click()
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Rotation confirmed" }).count()).toBe(1)
    expect((await whoami(created.rawKey)).status).toBe(401)
    expect((await whoami(rotated.rawKey)).status).toBe(200)
    await page.getByRole("button", { name: "I have copied it" }).click()

    // revoking asks first; cancelling keeps the key
    const newRow = page.getByRole("row").filter({ hasText: second.body.apiKeyId! })
    await newRow.getByRole("button", { name: "Revoke ci deploys" }).click()
    const dialog = page.getByRole("dialog", { name: "Revoke the key “ci deploys”?" })
    await dialog.getByRole("button", { name: "Cancel" }).click()
    await dialog.waitFor({ state: "hidden" })
    expect((await whoami(rotated.rawKey)).status).toBe(200)
    await newRow.getByRole("button", { name: "Revoke ci deploys" }).click()
    await dialog.getByRole("button", { name: "Revoke key" }).click()
    await expect.poll(() => page.getByRole("status").filter({ hasText: "is revoked" }).count()).toBe(1)
    await expect.poll(() => newRow.getByRole("cell").nth(1).textContent()).toBe("Revoked")
    expect(await newRow.getByRole("button").count()).toBe(0)
    expect((await whoami(rotated.rawKey)).status).toBe(401)
    // the failed key checks were the test's own requests, not the page's
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("lets an Owner choose an organization key, and fits a phone-width screen", async () => {
    const owner = await addPerson(node, "keyowner", { org: "owner" })
    const { page, errors } = await openAs(owner, { phone: true })
    await signInThroughPage(page, owner, { next: KEYS_PATH })
    await page.getByLabel("Name").fill("org reporting")
    await page.getByLabel("Acts in").selectOption("organization")
    await page.getByRole("button", { name: "Create key" }).click()
    const { rawKey } = await shownSecret(page)
    const who = await whoami(rawKey)
    expect(who.status).toBe(200)
    expect(who.body.workspaceId).toBeNull()
    await expect.poll(() => row(page, "org reporting").getByRole("cell").first().textContent()).toBe("Organization")
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("is not offered to a Member, who is told plainly when opening its address", async () => {
    const { page, errors } = await openAs(member)
    await signInThroughPage(page, member)
    const nav = page.getByRole("navigation", { name: "Main" })
    await nav.getByRole("link", { name: "Security" }).waitFor()
    expect(await nav.getByRole("link", { name: "API keys" }).count()).toBe(0)
    await page.goto(KEYS_PATH)
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor()
    await expect.poll(() => page.getByRole("note").textContent()).toContain("You cannot manage API keys in this workspace")
    expect(await page.getByRole("button", { name: "Create key" }).count()).toBe(0)
    expect(errors).toEqual([])
    await page.context().close()
  })
})
