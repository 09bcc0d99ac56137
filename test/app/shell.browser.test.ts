/**
 * The app's frame in a real Chromium: sign-in and sign-out, a deep link followed through sign-in,
 * keyboard use, the phone-width menu, failures in words, and the first load's JavaScript weight.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, newContext, signInThroughPage, watchForPageErrors } from "../support/browser.ts"
import { addPerson, type Person } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

let node: TestNode
let browser: Browser
let admin: Person

beforeAll(async () => {
  node = await startTestNode()
  browser = await launchBrowser()
  admin = await addPerson(node, "shell", { org: "member", workspace: "admin" })
})
afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

// what the functions given to page.evaluate read, in the page (the tests' own types have no DOM)
declare const document: { readonly cookie: string; readonly activeElement: { readonly tagName: string } | null; readonly documentElement: { readonly scrollWidth: number } }
interface ResourceTiming {
  readonly name: string
  readonly initiatorType: string
  readonly encodedBodySize: number
  readonly decodedBodySize: number
}

const { orgSlug, workspaceSlug } = { orgSlug: "acme", workspaceSlug: "main" }

const openPage = async (options: { phone?: boolean } = {}): Promise<{ page: Page; errors: Array<string> }> => {
  const context = await newContext(browser, node.baseUrl, options)
  const page = await context.newPage()
  // a refused sign-in is logged by the browser as a failed request: expected here
  return { page, errors: watchForPageErrors(page, [/status of 401/]) }
}

describe("the app's frame", () => {
  it("loads at most 200 KB of JavaScript, gzipped, on the first visit", async () => {
    const { page, errors } = await openPage()
    await page.goto("/sign-in")
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    const scripts = await page.evaluate(() =>
      (performance.getEntriesByType("resource") as unknown as ReadonlyArray<ResourceTiming>)
        .filter((entry) => entry.initiatorType === "script" || entry.name.endsWith(".js"))
        .map((entry) => ({ name: entry.name, encoded: entry.encodedBodySize, decoded: entry.decodedBodySize }))
    )
    const encoded = scripts.reduce((sum, script) => sum + script.encoded, 0)
    const decoded = scripts.reduce((sum, script) => sum + script.decoded, 0)
    console.log(`first load: ${scripts.length} script(s), ${(encoded / 1024).toFixed(1)} KB gzipped (${(decoded / 1024).toFixed(1)} KB unpacked)`)
    expect(scripts.length).toBeGreaterThan(0)
    // gzip was used on the wire: the encoded size is well under the decoded one
    expect(encoded).toBeLessThan(decoded / 2)
    expect(encoded).toBeLessThanOrEqual(200 * 1024)
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("sends a signed-out deep link through sign-in and back to it; a wrong password is said in words", async () => {
    const { page, errors } = await openPage()
    const deepLink = `/${orgSlug}/${workspaceSlug}/notifications`
    await page.goto(deepLink)
    await page.waitForURL((url) => url.pathname === "/sign-in")
    expect(new URL(page.url()).searchParams.get("next")).toBe(deepLink)

    await page.getByLabel("Email").fill(admin.email)
    await page.getByLabel("Password").fill("not the password")
    await page.getByRole("button", { name: "Sign in" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("the email or password is not right")

    await page.getByLabel("Password").fill(admin.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL((url) => url.pathname === deepLink)
    // the session cookie is HttpOnly and SameSite=Lax: the page's script cannot read it
    const cookies = await page.context().cookies()
    const session = cookies.find((cookie) => cookie.httpOnly)
    expect(session?.sameSite).toBe("Lax")
    expect(await page.evaluate(() => document.cookie)).toBe("")

    await page.getByRole("button", { name: "Sign out" }).click()
    await page.waitForURL((url) => url.pathname === "/sign-in")
    await page.goto(`/${orgSlug}/${workspaceSlug}/chat`)
    await page.waitForURL((url) => url.pathname === "/sign-in")
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("is usable from the keyboard: the skip link comes first and the page's heading takes focus", async () => {
    const { page, errors } = await openPage()
    await signInThroughPage(page, admin, { next: `/${orgSlug}/${workspaceSlug}/approvals` })
    await page.keyboard.press("Tab")
    const skip = page.getByRole("link", { name: "Skip to content" })
    await expect.poll(() => skip.evaluate((element) => (element as unknown) === document.activeElement)).toBe(true)
    // following a navigation link moves focus to the new page's heading, as a page load would
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Automations" }).click()
    await page.waitForURL((url) => url.pathname.endsWith("/automations"))
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe("H1")
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("folds the navigation behind a Menu button on a phone-width screen", async () => {
    const { page, errors } = await openPage({ phone: true })
    await signInThroughPage(page, admin)
    const nav = page.getByRole("navigation", { name: "Main" })
    const menu = page.getByRole("button", { name: "Menu" })
    expect(await nav.isVisible()).toBe(false)
    expect(await menu.getAttribute("aria-expanded")).toBe("false")
    await menu.click()
    expect(await menu.getAttribute("aria-expanded")).toBe("true")
    await nav.getByRole("link", { name: "Approvals" }).click()
    await page.waitForURL((url) => url.pathname.endsWith("/approvals"))
    expect(await nav.isVisible()).toBe(false)
    // nothing is wider than the screen
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("a page that breaks on an answer it did not expect says so in words; the frame and other pages keep working", async () => {
    const { page } = await openPage()
    await signInThroughPage(page, admin, { next: `/${orgSlug}/${workspaceSlug}/approvals` })
    // a server (a proxy, a newer or older node) answering the approvals list in a shape the page does not know
    await page.route("**/approval/list", (route) => route.fulfill({ status: 200, contentType: "application/json", body: '{"approvals":[null],"nextCursor":null}' }))
    await page.reload()
    await page.getByRole("heading", { name: "This page failed" }).waitFor()
    expect(await page.getByRole("alert").first().textContent()).toMatch(/\S/)
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Automations" }).click()
    await page.getByRole("heading", { name: "Automations", level: 1 }).waitFor()
    expect(await page.getByRole("heading", { name: "This page failed" }).count()).toBe(0)
    await page.context().close()
  })

  it("shows an unknown page, and a workspace the person is not in, in words", async () => {
    const { page } = await openPage()
    await signInThroughPage(page, admin, { next: `/${orgSlug}/${workspaceSlug}/no-such-page` })
    await page.getByRole("heading", { name: "Page not found" }).waitFor()
    await page.goto(`/${orgSlug}/not-a-workspace/approvals`)
    await expect.poll(() => page.getByRole("alert").first().textContent(), { timeout: 10_000 }).toMatch(/\S/)
    await page.context().close()
  })
})
