/**
 * A CLI login approved in a real Chromium (src/identity/DeviceLogin.ts): the test plays the CLI (asks for a
 * code, polls for the token, uses it) and a person opens the address the CLI shows. Signed out,
 * the page sends them through sign-in and back with the code kept; denial and an unknown code are
 * said in words.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, newContext, signInThroughPage, watchForPageErrors } from "../support/browser.ts"
import { addPerson, type Person } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

let node: TestNode
let browser: Browser
let person: Person

beforeAll(async () => {
  node = await startTestNode()
  browser = await launchBrowser()
  person = await addPerson(node, "clilogin", { org: "member", workspace: "member" })
})
afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${node.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
  return { status: response.status, body: (await response.json()) as any }
}

/** The CLI's first step: a device code, and the address and code it shows its user. */
const startCliLogin = async (clientName: string) => {
  const code = await post("/v1/auth/device/code", { clientName })
  expect(code.status).toBe(200)
  return code.body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string }
}

const pollToken = (deviceCode: string) => post("/v1/auth/device/token", { device_code: deviceCode })

/** The path and query of the CLI's link, which names this node's own address. */
const onThisNode = (address: string) => {
  const url = new URL(address)
  expect(url.origin).toBe(node.baseUrl)
  return `${url.pathname}${url.search}`
}

const signedInPage = async (): Promise<{ page: Page; errors: Array<string> }> => {
  const context = await newContext(browser, node.baseUrl)
  const page = await context.newPage()
  // the 401 before signing in, and a refused decision, are logged by the browser; the page says them in words, which the tests check
  const errors = watchForPageErrors(page, [/status of 40[149]/])
  await signInThroughPage(page, person)
  return { page, errors }
}

describe("approving a CLI login", () => {
  it("follows the CLI's link through sign-in, approves it for the chosen workspace, and the CLI's token acts as the person", async () => {
    const cli = await startCliLogin("svc-cli on laptop")
    expect(new URL(cli.verification_uri).pathname).toBe("/device")
    expect(new URL(cli.verification_uri_complete).searchParams.get("user_code")).toBe(cli.user_code)
    expect((await pollToken(cli.device_code)).body.error).toBe("authorization_pending")

    const context = await newContext(browser, node.baseUrl)
    const page = await context.newPage()
    // signed out, the app's question of who is signed in is answered 401
    const errors = watchForPageErrors(page, [/status of 401/])
    const link = onThisNode(cli.verification_uri_complete)
    await page.goto(link)
    await page.waitForURL((url) => url.pathname === "/sign-in")
    expect(new URL(page.url()).searchParams.get("next")).toBe(link)
    await page.getByLabel("Email").fill(person.email)
    await page.getByLabel("Password").fill(person.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL((url) => url.pathname === "/device")

    await page.getByRole("heading", { name: "Approve a CLI login", level: 1 }).waitFor()
    expect(await page.getByLabel("Code shown in your terminal").inputValue()).toBe(cli.user_code)
    // the person's one workspace is the choice
    const workspace = page.getByLabel("Workspace for the CLI")
    expect(await workspace.locator("option").allTextContents()).toEqual(["Acme / Main"])
    await workspace.selectOption({ label: "Acme / Main" })
    await page.getByRole("button", { name: "Approve" }).click()
    await expect.poll(() => page.getByRole("status").textContent()).toContain(`Approved: svc-cli on laptop (${cli.user_code}) is signed in as you in Acme / Main`)

    const token = await pollToken(cli.device_code)
    expect(token.status).toBe(200)
    const who = await fetch(`${node.baseUrl}/v1/auth/whoami`, { headers: { authorization: `Bearer ${token.body.access_token}` } })
    expect(who.status).toBe(200)
    expect(((await who.json()) as { userId: string }).userId).toBe(person.userId)
    expect(errors).toEqual([])
    await context.close()
  })

  it("approves a CLI login at organization level: its token names no workspace", async () => {
    const cli = await startCliLogin("org tooling")
    const { page, errors } = await signedInPage()
    await page.goto(onThisNode(cli.verification_uri_complete))
    await page.getByLabel("The CLI acts").selectOption({ label: "At organization level (Acme), with your organization role" })
    await page.getByRole("button", { name: "Approve" }).click()
    await expect.poll(() => page.getByRole("status").textContent()).toContain("is signed in as you at organization level in Acme")
    const token = await pollToken(cli.device_code)
    const who = await fetch(`${node.baseUrl}/v1/auth/whoami`, { headers: { authorization: `Bearer ${token.body.access_token}` } })
    expect(await who.json()).toMatchObject({ userId: person.userId, workspaceId: null })
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("denies a CLI login: its next poll is told access_denied", async () => {
    const cli = await startCliLogin("unexpected tool")
    const { page, errors } = await signedInPage()
    await page.goto(onThisNode(cli.verification_uri_complete))
    await page.getByRole("button", { name: "Deny" }).click()
    await expect.poll(() => page.getByRole("status").textContent()).toContain(`Denied: unexpected tool (${cli.user_code}) will not be signed in`)
    expect((await pollToken(cli.device_code)).body.error).toBe("access_denied")
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("says in words that a typed code names no CLI login, and accepts the code typed in lower case without its dash", async () => {
    const cli = await startCliLogin("typed by hand")
    const { page, errors } = await signedInPage()
    await page.goto("/device")
    const code = page.getByLabel("Code shown in your terminal")
    expect(await code.inputValue()).toBe("")
    await code.fill("BCDF-GHJK" === cli.user_code ? "BCDF-GHJL" : "BCDF-GHJK")
    await page.getByRole("button", { name: "Approve" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Unknown code: no CLI login shows this code")
    await code.fill(cli.user_code.replace("-", "").toLowerCase())
    await page.getByRole("button", { name: "Approve" }).click()
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Approved: typed by hand")
    expect((await pollToken(cli.device_code)).status).toBe(200)
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("says in words that approving is locked after too many wrong codes, even for the right one", async () => {
    const guesser = await addPerson(node, "guesser", { org: "member", workspace: "member" })
    const cli = await startCliLogin("locked out")
    const context = await newContext(browser, node.baseUrl)
    const page = await context.newPage()
    const errors = watchForPageErrors(page, [/status of 40[14]/, /status of 429/])
    await signInThroughPage(page, guesser, { next: "/device" })
    const code = page.getByLabel("Code shown in your terminal")
    const alert = page.getByRole("alert")
    /** Types a code and approves, waiting for the server's answer. */
    const approve = async (typed: string) => {
      await code.fill(typed)
      const answered = page.waitForResponse((response) => response.url().endsWith("/auth/device/approve"))
      await page.getByRole("button", { name: "Approve" }).click()
      return (await answered).status()
    }
    const wrong = ["BCDF-GHJK", "BCDF-GHJL", "BCDF-GHJM", "BCDF-GHJN", "BCDF-GHJP", "BCDF-GHJQ"].filter((typed) => typed !== cli.user_code)
    const allowed = node.config.lockout.accountFailures
    for (const typed of wrong.slice(0, allowed - 1)) {
      expect(await approve(typed)).toBe(404)
      await expect.poll(() => alert.textContent()).toContain("Unknown code: no CLI login shows this code")
    }
    // the failure that locks is answered as the lock
    expect(await approve(wrong[allowed - 1])).toBe(429)
    await expect.poll(() => alert.textContent()).toMatch(/Too many wrong codes.*retry in \d+ s/)
    // while locked, the right code is refused too
    expect(await approve(cli.user_code)).toBe(429)
    await expect.poll(() => alert.textContent()).toMatch(/Too many wrong codes.*retry in \d+ s/)
    expect((await pollToken(cli.device_code)).body.error).toBe("authorization_pending")
    expect(errors).toEqual([])
    await context.close()
  })
})
