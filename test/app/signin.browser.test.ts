/**
 * Two-factor sign-in in a real Chromium: a person turns it on from the Security page (reading the
 * secret off the page, as they would type it into an authenticator app), a wrong code is refused in
 * words, and from then on signing in asks for the code the app shows.
 */
import * as OTPAuth from "otpauth"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, newContext, signInThroughPage, watchForPageErrors } from "../support/browser.ts"
import { addPerson, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

let node: TestNode
let browser: Browser
let person: Person

beforeAll(async () => {
  node = await startTestNode()
  browser = await launchBrowser()
  person = await addPerson(node, "twofactor", { org: "member", workspace: "member" })
})
afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

const totpOf = (secret: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 })

/** Six digits no authenticator would show around now (the server accepts one step either side). */
const wrongCode = (totp: OTPAuth.TOTP) => {
  const near = new Set([-30_000, 0, 30_000].map((skew) => totp.generate({ timestamp: Date.now() + skew })))
  return ["000000", "111111", "222222", "333333"].find((code) => !near.has(code))!
}

describe("two-factor sign-in", () => {
  it("is turned on from the Security page with a code from the shown secret; the next sign-in asks for a code", async () => {
    const context = await newContext(browser, node.baseUrl)
    const page = await context.newPage()
    // the sign-in that asks for the code is answered 401 first: the browser logs that request
    const errors = watchForPageErrors(page, [/status of 40[01]/])
    await signInThroughPage(page, person)
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Security" }).click()
    await page.getByRole("heading", { name: "Security", level: 1 }).waitFor()
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Two-factor sign-in is off")

    await page.getByRole("button", { name: "Set up two-factor sign-in" }).click()
    const shown = (await page.getByLabel("Secret key").inputValue()).replace(/\s+/g, "")
    expect(shown).toMatch(/^[A-Z2-7]{32}$/)
    // the setup link an authenticator app opens carries the same secret
    const link = await page.getByRole("link", { name: "open the setup link in your authenticator app" }).getAttribute("href")
    const fromLink = OTPAuth.URI.parse(link!)
    expect(fromLink).toBeInstanceOf(OTPAuth.TOTP)
    expect(fromLink.secret.base32).toBe(shown)
    const totp = totpOf(shown)

    await page.getByLabel("Code from your app").fill(wrongCode(totp))
    await page.getByRole("button", { name: "Confirm and turn on" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("the code does not match")
    // still off: a password alone signs in
    expect((await signIn(node.baseUrl, person)).status).toBe(200)

    await page.getByLabel("Code from your app").fill(totp.generate())
    await page.getByRole("button", { name: "Confirm and turn on" }).click()
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Two-factor sign-in is on")
    // the secret is not on the page any more
    expect(await page.content()).not.toContain(shown)

    // a password alone is no longer enough
    expect((await signIn(node.baseUrl, person)).body.error.reason).toBe("mfa_code_required")

    await page.getByRole("button", { name: "Sign out" }).click()
    await page.waitForURL((url) => url.pathname === "/sign-in")
    await signInThroughPage(page, person, { next: "/acme/main/settings/security", code: () => totp.generate() })
    expect(new URL(page.url()).pathname).toBe("/acme/main/settings/security")
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Two-factor sign-in is on")
    expect(errors).toEqual([])
    await context.close()
  })
})
