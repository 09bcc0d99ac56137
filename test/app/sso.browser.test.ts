/**
 * Single sign-on from the sign-in page in a real Chromium: the page finds the organization's
 * verified providers (public `GET /v1/auth/sso/providers`), the person picks one, signs in on the
 * provider's own pages (a real oidc-provider on loopback) and lands in the app signed in; an
 * organization without providers, or an unknown one, is said in words.
 */
import { randomUUID } from "node:crypto"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, newContext, watchForPageErrors } from "../support/browser.ts"
import { startOidcServer, type OidcServer } from "../support/oidcServer.ts"
import { addPerson, type Person } from "../support/people.ts"
import { asPerson, ok } from "../support/plugins.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { freePort, startTestNode, type TestNode } from "../support/platform.ts"

const CLIENT_ID = "svc-acme-app"
const CLIENT_SECRET = `client-secret-${randomUUID()}`

let node: TestNode
let oidc: OidcServer
let browser: Browser
let dana: Person

beforeAll(async () => {
  const port = await freePort()
  // the identity provider listens on this machine
  node = await startTestNode({ port, baseUrl: `http://127.0.0.1:${port}`, outboundAllow: parseOutboundAllow("127.0.0.1") })
  const olga = await addPerson(node, "olga", { org: "owner" })
  dana = await addPerson(node, "dana", { org: "member", workspace: "member" })
  oidc = await startOidcServer({
    accounts: [{ sub: "idp-dana", email: dana.email }],
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${node.baseUrl}/v1/auth/sso/callback`] }]
  })
  const asOwner = async (capability: string, input: unknown) => ok(await (await asPerson(node, olga))(capability, input))
  const { providerId } = await asOwner("org.sso.register", { name: "Acme Login", issuer: oidc.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET })
  await asOwner("org.sso.verify", { providerId })
  // registered but never verified: not offered
  await asOwner("org.sso.register", { name: "Half Done", issuer: oidc.issuer, clientId: "other", clientSecret: "other" })
  browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await oidc?.close()
})

/** Signs in on the provider's own pages as `email`, consenting, until the browser is back in the app. */
const signInAtProvider = async (page: Page, email: string) => {
  const provider = new URL(oidc.issuer).host
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const url = new URL(page.url())
    if (url.host !== provider && !url.pathname.startsWith("/v1/auth/sso")) return url
    if (url.host === provider && (await page.getByRole("button", { name: "Sign in" }).isVisible())) {
      await page.getByRole("textbox").fill(email)
      await page.getByRole("button", { name: "Sign in" }).click()
    } else if (url.host === provider && (await page.getByRole("button", { name: "Continue" }).isVisible())) {
      await page.getByRole("button", { name: "Continue" }).click()
    } else {
      await page.waitForTimeout(100)
    }
  }
  throw new Error(`still at ${page.url()} after 20 s`)
}

describe("single sign-on from the sign-in page", () => {
  it("offers the organization's verified providers and signs the person in through one", async () => {
    const page = await (await newContext(browser, node.baseUrl)).newPage()
    // the provider's own pages ask their server for a favicon it does not have (a 404 there)
    const errors = watchForPageErrors(page, [/status of 401/, /status of 404/])
    const appFailures: Array<string> = []
    page.on("response", (response) => {
      if (response.status() >= 400 && response.url().startsWith(node.baseUrl) && !response.url().endsWith("/account/get")) appFailures.push(`${response.status()} ${response.url()}`)
    })
    await page.goto("/sign-in")
    await page.getByLabel("Organization").fill("acme")
    await page.getByRole("button", { name: "Find providers" }).click()
    const offered = page.getByRole("region", { name: "Single sign-on" }).getByRole("link")
    await expect.poll(() => offered.allTextContents()).toEqual(["Sign in with Acme Login"])
    await offered.first().click()
    await signInAtProvider(page, dana.email)
    await page.waitForURL((url) => url.pathname === "/acme/main/chat")
    await page.getByLabel("Message").waitFor()
    expect(await page.getByText(dana.email).count()).toBeGreaterThan(0)
    expect(errors).toEqual([])
    expect(appFailures).toEqual([])
    await page.context().close()
  })

  it("says so when an organization has no provider, or does not exist", async () => {
    const page = await (await newContext(browser, node.baseUrl)).newPage()
    await page.goto("/sign-in")
    for (const org of ["no-such-org", "ACME-nope"]) {
      await page.getByLabel("Organization").fill(org)
      await page.getByRole("button", { name: "Find providers" }).click()
      await page.getByText("This organization has no single sign-on provider.").waitFor()
    }
    await page.context().close()
  })
})
