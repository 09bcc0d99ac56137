/**
 * An organization's shared plugin credentials in the app (spec 2.9, 5.11), in a real Chromium
 * against real peers: an MCP SDK server that wants an API key in `X-Api-Key`, one protected by a
 * real OAuth 2.1 authorization server (oidc-provider: dynamic registration, PKCE, refresh,
 * revocation), and an SMTP server for the re-authentication email. On the integrations page an Admin
 * enters a secret once for every workspace and sees that this workspace and a second one use it,
 * until a workspace's own secret overrides it there; connects OAuth once for the organization; and
 * when that shared connection's tokens are revoked, the notice leads to the re-authentication page
 * in the Admin's workspace, where Reconnect for the organization makes it active again.
 */
import { randomBytes } from "node:crypto"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { eventually } from "../e2e/client.ts"
import { authorizeAtProvider, launchBrowser, noticeFromBell, openAs as openAsIn } from "../support/browser.ts"
import { type McpTestServer, startMcpTestServer } from "../support/mcpServer.ts"
import { ALICE_AT_PROVIDER, type OidcServer, startOAuthProtectedMcp } from "../support/oidcServer.ts"
import { addPerson, type Person } from "../support/people.ts"
import { freePort, startTestNode, type TestNode } from "../support/platform.ts"
import { asPerson, type Caller, ok } from "../support/plugins.ts"
import { type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"

const SHARED_KEY = `sk-shared-${randomBytes(12).toString("hex")}`
const OWN_KEY = `sk-own-${randomBytes(12).toString("hex")}`

let node: TestNode
let browser: Browser
let keyed: McpTestServer
let authServer: OidcServer
let oauthMcp: McpTestServer
let sink: SmtpSink
let admin: Person
let secondAdmin: Person
let asAdmin: Caller
let keyedListingId: string
let oauthListingId: string

const MAIN = "/acme/main"
const SECOND = "/acme/second"

beforeAll(async () => {
  keyed = await startMcpTestServer({ admit: (headers) => headers["x-api-key"] === SHARED_KEY || headers["x-api-key"] === OWN_KEY })
  ;({ authServer, mcp: oauthMcp } = await startOAuthProtectedMcp())
  sink = await startSmtpSink()
  // the authorization server sends the browser back to the node's own URL: known before it starts
  const port = await freePort()
  node = await startTestNode({
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    outboundAllow: parseOutboundAllow("127.0.0.1"),
    authTokenEncryptionKey: randomBytes(32),
    mail: { smtpUrl: sink.url, from: "Alerts <alerts@svc.test>" },
    plugins: { denylist: [], refreshLeadSeconds: 2, refreshCheckSeconds: 1 }
  })
  browser = await launchBrowser()
  const owner = await addPerson(node, "sharedowner", { org: "owner" })
  const second = ok(await (await asPerson(node, owner))("workspace.create", { slug: "second", name: "Second" }))
  admin = await addPerson(node, "sharedadmin", { org: "member", workspace: "admin" })
  secondAdmin = await addPerson(node, "secondadmin", { org: "member", workspace: "admin", workspaceId: second.workspaceId })
  asAdmin = await asPerson(node, admin)
  const install = async (name: string, title: string, endpointUrl: string, extra: Record<string, unknown>) => {
    const { listingId } = ok(await asAdmin("plugin.org.install", { name, title, endpointUrl, transport: "streamable-http", ...extra }))
    ok(await asAdmin("plugin.org.set_enabled", { listingId, enabled: true }))
    return listingId as string
  }
  keyedListingId = await install("com.test/keyed-shared", "Keyed Shared", keyed.mcpUrl, { authKind: "secret", authConfig: { header: "X-Api-Key" } })
  oauthListingId = await install("com.test/oauth-shared", "OAuth Shared", oauthMcp.mcpUrl, { authKind: "oauth" })
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await Promise.all([keyed?.close(), oauthMcp?.close(), authServer?.close(), sink?.close()])
})

const openAs = (person: Person, next: string) => openAsIn(browser, node.baseUrl, person, next, { authorizationServer: authServer.issuer })

const listingCard = (page: Page, name: string) => page.getByRole("article", { name })
const sharedGroup = (page: Page, name: string) => page.getByRole("group", { name: `The organization's shared credential for ${name}` })

const listingOf = async (listingId: string) => (ok(await asAdmin("plugin.org.list", { limit: 200 })).listings as Array<any>).find((l) => l.listingId === listingId)

describe("an organization's shared secret on the integrations page", () => {
  it("entered once, it serves this workspace and a second one, each told so, until a workspace's own secret overrides it there", async () => {
    const { page, errors } = await openAs(admin, `${MAIN}/settings/integrations`)
    const card = listingCard(page, "Keyed Shared")
    const shared = sharedGroup(page, "Keyed Shared")
    await shared.getByText("No secret entered").waitFor()
    await shared.getByLabel("Shared secret of Keyed Shared, for every workspace").fill(SHARED_KEY)
    await shared.getByRole("button", { name: "Save shared secret" }).click()
    await page.getByRole("status").filter({ hasText: "The organization's shared secret for Keyed Shared is saved." }).waitFor()
    await shared.getByText("Active", { exact: true }).waitFor()
    await shared.getByText("This workspace uses the organization's shared credential").waitFor()
    // the workspace has none of its own, and connects with the shared one
    await card.getByRole("group", { name: "This workspace's credential for Keyed Shared" }).getByText("No secret entered").waitFor()
    await card.getByRole("button", { name: "Enable Keyed Shared in this workspace" }).click()
    await page.getByRole("status").filter({ hasText: "Keyed Shared is enabled in this workspace; the server is healthy." }).waitFor()
    expect(keyed.requests.at(-1)?.headers["x-api-key"]).toBe(SHARED_KEY)
    expect(await page.content()).not.toContain(SHARED_KEY)

    // the second workspace's Admin sees it serving there too
    const other = await openAs(secondAdmin, `${SECOND}/settings/integrations`)
    const there = sharedGroup(other.page, "Keyed Shared")
    await there.getByText("Active", { exact: true }).waitFor()
    await there.getByText("This workspace uses the organization's shared credential").waitFor()
    await listingCard(other.page, "Keyed Shared").getByRole("button", { name: "Enable Keyed Shared in this workspace" }).click()
    await other.page.getByRole("status").filter({ hasText: "the server is healthy" }).waitFor()

    // this workspace's own secret wins here, and only here
    await card.getByLabel("Secret for Keyed Shared").fill(OWN_KEY)
    await card.getByRole("button", { name: "Save secret" }).click()
    await page.getByRole("status").filter({ hasText: "The secret for Keyed Shared is saved; the server is healthy." }).waitFor()
    await shared.getByText("This workspace's own credential overrides the organization's shared one here.").waitFor()
    expect(keyed.requests.at(-1)?.headers["x-api-key"]).toBe(OWN_KEY)
    await other.page.reload()
    await sharedGroup(other.page, "Keyed Shared").getByText("This workspace uses the organization's shared credential").waitFor()
    expect(errors).toEqual([])
    expect(other.errors).toEqual([])
  })
})

describe("an organization's shared OAuth connection", () => {
  let page: Page
  let errors: Array<string>

  beforeAll(async () => {
    ;({ page, errors } = await openAs(admin, `${MAIN}/settings/integrations`))
  })

  it("connected once for the organization, through the authorization server's pages; the workspace connects with it", async () => {
    const shared = sharedGroup(page, "OAuth Shared")
    await shared.getByText("Not connected").waitFor()
    await shared.getByRole("button", { name: "Connect the whole organization to OAuth Shared" }).click()
    await authorizeAtProvider(page, authServer.issuer, ALICE_AT_PROVIDER.email)
    await page.waitForURL((url) => url.pathname === `${MAIN}/settings/integrations` && url.searchParams.get("connected") === oauthListingId)
    await page.getByRole("status").filter({ hasText: "Connected OAuth Shared: its credential is active." }).waitFor()
    const again = sharedGroup(page, "OAuth Shared")
    await again.getByText("Active", { exact: true }).waitFor()
    await again.getByText("This workspace uses the organization's shared credential").waitFor()
    const card = listingCard(page, "OAuth Shared")
    // the workspace's own is still to connect
    expect(await card.getByRole("button", { name: "Connect OAuth Shared", exact: true }).count()).toBe(1)
    await card.getByRole("button", { name: "Enable OAuth Shared in this workspace" }).click()
    await page.getByRole("status").filter({ hasText: "OAuth Shared is enabled in this workspace; the server is healthy." }).waitFor()
    expect((await listingOf(oauthListingId)).credential).toBeNull()
  })

  it("tokens revoked at the server: the notice leads to the re-authentication page in the Admin's workspace, where Reconnect for the organization makes it active again", async () => {
    expect(await authServer.revokeAllTokens()).toBeGreaterThan(0)
    await eventually(() => listingOf(oauthListingId), (l) => l.sharedCredential?.status === "needs_reauth", 20_000)
    await page.reload()
    const notice = await noticeFromBell(page, "OAuth Shared needs you to sign in again")
    expect(await notice.textContent()).toContain("shared connection to OAuth Shared stopped working")
    await notice.getByRole("link", { name: "OAuth Shared needs you to sign in again" }).click()

    // a page of the app, in a workspace of the Admin's: not "Page not found"
    await page.waitForURL((url) => url.pathname === `${MAIN}/settings/integrations/reauth/${oauthListingId}`)
    await page.getByRole("heading", { name: "Re-authenticate", level: 1 }).waitFor()
    const panel = page.getByRole("region", { name: "OAuth Shared" })
    await panel.getByText("The organization's shared credential could not be refreshed, so workspaces without their own cannot use OAuth Shared, this one included.").waitFor()
    await sharedGroup(page, "OAuth Shared").getByText("Needs re-authentication").waitFor()
    expect(await page.getByText("Page not found").count()).toBe(0)

    await sharedGroup(page, "OAuth Shared").getByRole("button", { name: "Reconnect the whole organization to OAuth Shared" }).click()
    await authorizeAtProvider(page, authServer.issuer, ALICE_AT_PROVIDER.email)
    await page.waitForURL((url) => url.pathname === `${MAIN}/settings/integrations/reauth/${oauthListingId}` && url.searchParams.get("connected") === oauthListingId)
    await sharedGroup(page, "OAuth Shared").getByText("Active", { exact: true }).waitFor()
    await page.getByRole("region", { name: "OAuth Shared" }).getByText("The connection works").waitFor()
    expect((await listingOf(oauthListingId)).sharedCredential.status).toBe("active")
    // and the mail's link is the same page
    const mail = (await sink.received(1)).find((m) => m.to[0] === admin.email && m.decoded.includes("OAuth Shared needs you to sign in again"))
    expect(mail?.decoded).toContain(`${node.config.baseUrl}${MAIN}/settings/integrations/reauth/${oauthListingId}`)
    expect(errors).toEqual([])
  })
})
