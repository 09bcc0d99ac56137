/**
 * The marketplace and integrations pages in a real Chromium against real peers: a local registry
 * serving the public seed (one server given a remote on a real MCP SDK server that wants an API
 * key, and a README with a script in it), a second MCP server protected by a real OAuth 2.1
 * authorization server (oidc-provider: dynamic registration, PKCE, refresh, revocation), and an
 * SMTP server for the re-authentication email. A workspace Admin finds the server in the catalog,
 * installs it to the organization, enables it there and in the workspace and enters its secret;
 * installs a capability pack; connects the OAuth server through the provider's own pages; when
 * its tokens are revoked at the server and the refresh watcher marks it `needs_reauth`, the bell
 * counts the notification, which leads to the re-authentication page, where Reconnect makes it
 * active again. A Member is shown none of it.
 */
import { randomBytes } from "node:crypto"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_SEED_REGISTRY_ID } from "../../src/marketplace/RegistrySettings.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { eventually } from "../e2e/client.ts"
import { authorizeAtProvider, launchBrowser, noticeFromBell, openAs as openAsIn } from "../support/browser.ts"
import { type McpTestServer, startMcpTestServer } from "../support/mcpServer.ts"
import { ALICE_AT_PROVIDER, type OidcServer, startOAuthProtectedMcp } from "../support/oidcServer.ts"
import { addPerson, type Person } from "../support/people.ts"
import { freePort, startTestNode, type TestNode } from "../support/platform.ts"
import { asPerson, type Caller, localSeedMarketplace, ok } from "../support/plugins.ts"
import { type RegistryServer, startRegistryServer } from "../support/registryServer.ts"
import { type SmtpSink, startSmtpSink } from "../support/smtpSink.ts"

const API_KEY = `sk-browser-${randomBytes(12).toString("hex")}`
/** The seed server given a remote on the keyed MCP server. */
const KEYED = "io.github.azure/azure-mcp"

let node: TestNode
let browser: Browser
let upstream: RegistryServer
let keyed: McpTestServer
let authServer: OidcServer
let oauthMcp: McpTestServer
let sink: SmtpSink
let admin: Person
let member: Person
let asAdmin: Caller
let oauthListingId: string

const WS = "/acme/main"

beforeAll(async () => {
  keyed = await startMcpTestServer({ admit: (headers) => headers["x-api-key"] === API_KEY })
  ;({ authServer, mcp: oauthMcp } = await startOAuthProtectedMcp())
  upstream = await startRegistryServer()
  upstream.change(KEYED, {
    title: "Keyed Notes",
    remotes: [{ type: "streamable-http", url: keyed.mcpUrl, headers: [{ name: "X-Api-Key", isSecret: true, value: "{api_key}" }] }]
  })
  upstream.setReadme("Azure/azure-mcp", "# Keyed Notes guide\n\nKeep your **API key** safe.\n\n<script>window.readmeRan = true</script>\n")
  sink = await startSmtpSink()
  // the authorization server sends the browser back to the node's own URL: known before it starts
  const port = await freePort()
  node = await startTestNode({
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    outboundAllow: parseOutboundAllow("127.0.0.1"),
    authTokenEncryptionKey: randomBytes(32),
    marketplace: localSeedMarketplace(upstream),
    mail: { smtpUrl: sink.url, from: "Alerts <alerts@svc.test>" },
    plugins: { denylist: [], refreshLeadSeconds: 2, refreshCheckSeconds: 1 }
  })
  browser = await launchBrowser()
  admin = await addPerson(node, "marketadmin", { org: "member", workspace: "admin" })
  member = await addPerson(node, "marketmember", { org: "member", workspace: "member" })
  asAdmin = await asPerson(node, admin)
  ok(await asAdmin("plugin.registry.sync", { registryId: DEFAULT_SEED_REGISTRY_ID, wait: true }))
  // the catalog never says OAuth (it is found at connect time): the OAuth server is a custom listing
  oauthListingId = ok(await asAdmin("plugin.org.install", { name: "com.test/oauth-notes", title: "OAuth Notes", endpointUrl: oauthMcp.mcpUrl, transport: "streamable-http", authKind: "oauth" })).listingId
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await Promise.all([keyed?.close(), oauthMcp?.close(), authServer?.close(), upstream?.close(), sink?.close()])
})

const openAs = (person: Person, next: string, options: { phone?: boolean } = {}) =>
  openAsIn(browser, node.baseUrl, person, next, { ...options, authorizationServer: authServer.issuer })

const listingCard = (page: Page, name: string) => page.getByRole("article", { name })

const listingOf = async (listingId: string) => (ok(await asAdmin("plugin.org.list", { limit: 200 })).listings as Array<any>).find((l) => l.listingId === listingId)

describe("marketplace and integrations", () => {
  let page: Page
  let errors: Array<string>

  beforeAll(async () => {
    ;({ page, errors } = await openAs(admin, `${WS}/chat`))
  })

  it("finds a server in the catalog, reads its sanitized README and installs it to the organization", async () => {
    const nav = page.getByRole("navigation", { name: "Main" })
    await nav.getByRole("link", { name: "Marketplace" }).click()
    await page.getByRole("heading", { name: "Marketplace", level: 1 }).waitFor()
    // servers and capability packs side by side
    const packs = page.getByRole("region", { name: "Capability packs" })
    await packs.getByRole("heading", { name: "Documents" }).waitFor()

    await page.getByRole("searchbox", { name: "Search" }).fill("keyed notes")
    await page.getByRole("button", { name: "Search", exact: true }).click()
    await page.waitForURL((url) => url.searchParams.get("search") === "keyed notes")
    const servers = page.getByRole("region", { name: "MCP servers" })
    const card = servers.getByRole("listitem").filter({ has: page.getByRole("link", { name: "Keyed Notes" }) })
    await card.waitFor()
    expect(await card.textContent()).toContain("API key or secret")
    expect(await card.textContent()).toContain("Streamable HTTP")
    expect(await card.textContent()).toContain(KEYED)
    // a filter that excludes it
    await page.getByLabel("Sign-in").selectOption("oauth")
    await servers.getByText("No server matches").waitFor()
    await page.getByLabel("Sign-in").selectOption("")
    await card.getByRole("link", { name: "Keyed Notes" }).click()

    await page.getByRole("heading", { name: "Keyed Notes", level: 1, exact: true }).waitFor()
    const readme = page.getByRole("region", { name: "README" })
    // its headings sit under the page's own (the README's first level is the page's third)
    await readme.getByRole("heading", { name: "Keyed Notes guide", level: 3 }).waitFor()
    expect(await readme.locator("strong").textContent()).toBe("API key")
    expect(await readme.locator("script").count()).toBe(0)
    expect(await page.evaluate("window.readmeRan === undefined")).toBe(true)
    expect(await page.getByRole("region", { name: "Remotes" }).textContent()).toContain("needs a secret in the X-Api-Key header")
    expect(await page.getByRole("region", { name: "Versions" }).getByRole("row").count()).toBeGreaterThan(1)

    await page.getByRole("button", { name: "Install to organization" }).click()
    await page.getByRole("status").filter({ hasText: "Keyed Notes is installed to the organization, disabled." }).waitFor()
    expect(await page.getByRole("button", { name: "Install to organization" }).count()).toBe(0)
    await page.getByRole("link", { name: "Enable it in Integrations" }).click()
    await page.getByRole("heading", { name: "Integrations", level: 1 }).waitFor()
  })

  it("enables the server for the organization and the workspace, and enters its secret, which is never shown again", async () => {
    const listing = listingCard(page, "Keyed Notes")
    await listing.getByText("Disabled for the organization").waitFor()
    expect(await listing.textContent()).toContain("No secret entered")
    await listing.getByRole("button", { name: "Enable Keyed Notes for the organization" }).click()
    await page.getByRole("status").filter({ hasText: "Keyed Notes is enabled for the organization." }).waitFor()

    await listing.getByRole("button", { name: "Enable Keyed Notes in this workspace" }).click()
    // no secret yet: the server refuses the platform
    await page.getByRole("status").filter({ hasText: "Keyed Notes is enabled in this workspace; the server is unhealthy." }).waitFor()
    await listing.getByText("plugin.credential.set_secret").waitFor()

    const secret = listing.getByLabel("Secret for Keyed Notes")
    expect(await secret.getAttribute("type")).toBe("password")
    await secret.fill(API_KEY)
    await listing.getByRole("button", { name: "Save secret" }).click()
    await page.getByRole("status").filter({ hasText: "The secret for Keyed Notes is saved; the server is healthy." }).waitFor()
    expect(await secret.inputValue()).toBe("")
    await listing.getByText("Active", { exact: true }).waitFor()
    expect(keyed.requests.some((r) => r.headers["x-api-key"] === API_KEY)).toBe(true)
    // never echoed back: not in the page, nor after a reload
    expect(await page.content()).not.toContain(API_KEY)
    await page.reload()
    await listingCard(page, "Keyed Notes").getByText("healthy", { exact: true }).waitFor()
    expect(await page.content()).not.toContain(API_KEY)
    expect(await listingCard(page, "Keyed Notes").getByRole("button", { name: "Replace secret" }).count()).toBe(1)
  })

  it("installs a capability pack from the marketplace", async () => {
    await page.getByRole("link", { name: "Find more in the marketplace" }).click()
    const packs = page.getByRole("region", { name: "Capability packs" })
    await packs.getByRole("button", { name: "Install to organization: Documents" }).click()
    await packs.getByRole("status").filter({ hasText: "Documents is installed to the organization, disabled." }).waitFor()
    await packs.getByRole("link", { name: "Enable it in Integrations" }).click()
    const pack = listingCard(page, "Documents")
    await pack.getByRole("button", { name: "Enable Documents for the organization" }).click()
    await pack.getByText("Enabled for the organization").waitFor()
    expect(await page.getByRole("region", { name: "Capability packs" }).getByRole("article").count()).toBe(1)
  })

  it("connects an OAuth server through the authorization server's pages", async () => {
    const listing = listingCard(page, "OAuth Notes")
    await listing.getByRole("button", { name: "Enable OAuth Notes for the organization" }).click()
    await listing.getByText("Enabled for the organization").waitFor()
    expect(await listing.textContent()).toContain("Not connected")
    await listing.getByRole("button", { name: "Connect OAuth Notes" }).click()
    await authorizeAtProvider(page, authServer.issuer, ALICE_AT_PROVIDER.email)
    await page.waitForURL((url) => url.pathname === `${WS}/settings/integrations` && url.searchParams.get("connected") === oauthListingId)
    await page.getByRole("status").filter({ hasText: "Connected OAuth Notes: its credential is active." }).waitFor()
    const connected = listingCard(page, "OAuth Notes")
    await connected.getByText("Active", { exact: true }).waitFor()
    await connected.getByRole("button", { name: "Enable OAuth Notes in this workspace" }).click()
    await page.getByRole("status").filter({ hasText: "OAuth Notes is enabled in this workspace; the server is healthy." }).waitFor()
  })

  it("tokens revoked at the server: the bell counts the notice, which leads to the re-authentication page, where Reconnect makes it active again", async () => {
    expect(await authServer.revokeAllTokens()).toBeGreaterThan(0)
    await eventually(() => listingOf(oauthListingId), (l) => l.credential?.status === "needs_reauth", 20_000)
    const bell = page.getByRole("link", { name: /^Notifications, \d+ unread$/ })
    // the bell polls; a reload shows it at once
    await page.reload()
    await bell.waitFor()
    expect(await bell.getAttribute("aria-label")).toBe("Notifications, 1 unread")
    await listingCard(page, "OAuth Notes").getByText("Needs re-authentication").waitFor()

    const notice = await noticeFromBell(page, "OAuth Notes needs you to sign in again")
    expect(await notice.textContent()).toContain("Unread")
    await notice.getByRole("link", { name: "OAuth Notes needs you to sign in again" }).click()

    await page.waitForURL((url) => url.pathname === `${WS}/settings/integrations/reauth/${oauthListingId}`)
    await page.getByRole("heading", { name: "Re-authenticate", level: 1 }).waitFor()
    const panel = page.getByRole("region", { name: "OAuth Notes" })
    await panel.getByText("Needs re-authentication").waitFor()
    // following it marked it read
    await page.getByRole("link", { name: "Notifications, none unread" }).waitFor()

    await panel.getByRole("button", { name: "Reconnect OAuth Notes" }).click()
    await authorizeAtProvider(page, authServer.issuer, ALICE_AT_PROVIDER.email)
    await page.waitForURL((url) => url.pathname === `${WS}/settings/integrations/reauth/${oauthListingId}` && url.searchParams.get("connected") === oauthListingId)
    await page.getByRole("status").filter({ hasText: "Connected OAuth Notes: its credential is active." }).waitFor()
    const again = page.getByRole("region", { name: "OAuth Notes" })
    await again.getByText("Active", { exact: true }).waitFor()
    await again.getByText("The connection works").waitFor()
    expect((await listingOf(oauthListingId)).credential.status).toBe("active")
    expect(errors).toEqual([])
  })

  it("a declined authorization comes back to the page it left, told why, and changes nothing", async () => {
    // a browser the authorization server does not know yet: its sign-in page is shown
    const fresh = await openAs(admin, `${WS}/settings/integrations/reauth/${oauthListingId}`)
    await fresh.page.getByRole("button", { name: "Reconnect OAuth Notes" }).click()
    const back = await authorizeAtProvider(fresh.page, authServer.issuer, "nobody@as.test")
    expect(back.pathname).toBe(`${WS}/settings/integrations/reauth/${oauthListingId}`)
    await fresh.page.getByRole("alert").filter({ hasText: "The connection was not made: the authorization server did not grant access" }).waitFor()
    await fresh.page.getByRole("region", { name: "OAuth Notes" }).getByText("Active", { exact: true }).waitFor()
    expect(fresh.errors).toEqual([])
  })
  it("adds a custom server declared without sign-in; enabling it finds it asks for OAuth, and Connect makes it active", async () => {
    await page.goto(`${WS}/settings/integrations`)
    const form = page.getByRole("region", { name: "Add a custom MCP server" })
    await form.getByLabel("Name", { exact: true }).fill("com.test/oauth-notes")
    await form.getByLabel("Title (optional)").fill("Found Notes")
    await form.getByLabel("Endpoint URL").fill(oauthMcp.mcpUrl)
    await form.getByLabel("Transport").selectOption("streamable-http")
    await form.getByLabel("Authentication").selectOption("none")
    // the name is taken: the server's refusal in words, and what was typed is kept
    await form.getByRole("button", { name: "Add server" }).click()
    await form.getByRole("alert").filter({ hasText: /The server was not added: .*com\.test\/oauth-notes/ }).waitFor()
    expect(await form.getByLabel("Endpoint URL").inputValue()).toBe(oauthMcp.mcpUrl)
    await form.getByLabel("Name", { exact: true }).fill("com.test/found-notes")
    await form.getByRole("button", { name: "Add server" }).click()
    await page.getByRole("status").filter({ hasText: "Found Notes is added to the organization, disabled" }).waitFor()
    expect(await form.getByLabel("Name", { exact: true }).inputValue()).toBe("")

    const listing = listingCard(page, "Found Notes")
    expect(await listing.textContent()).not.toContain("Connect")
    await listing.getByRole("button", { name: "Enable Found Notes for the organization" }).click()
    await listing.getByText("Enabled for the organization").waitFor()
    await listing.getByRole("button", { name: "Enable Found Notes in this workspace" }).click()
    await page.getByRole("status").filter({ hasText: "Found Notes is enabled in this workspace; the server needs authorization: connect it." }).waitFor()
    await listing.getByText("needs authorization", { exact: true }).waitFor()
    await listing.getByRole("group", { name: "This workspace's credential for Found Notes" }).getByText("Not connected").waitFor()
    const found = (ok(await asAdmin("plugin.org.list", { limit: 200 })).listings as Array<any>).find((l) => l.name === "com.test/found-notes")
    expect(found.authKind).toBe("oauth")

    await listing.getByRole("button", { name: "Connect Found Notes" }).click()
    await authorizeAtProvider(page, authServer.issuer, ALICE_AT_PROVIDER.email)
    await page.waitForURL((url) => url.pathname === `${WS}/settings/integrations` && url.searchParams.get("connected") === found.listingId)
    await page.getByRole("status").filter({ hasText: "Connected Found Notes: its credential is active." }).waitFor()
    const connected = listingCard(page, "Found Notes")
    await connected.getByText("Active", { exact: true }).waitFor()
    await connected.getByRole("button", { name: "Check the health of Found Notes" }).click()
    await page.getByRole("status").filter({ hasText: "Found Notes is healthy." }).waitFor()
    // the taken name's refusal is the only failed request
    expect(errors).toEqual(["console: Failed to load resource: the server responded with a status of 409 (Conflict)"])
  })
})

describe("those who may not manage plugins", () => {
  it("a Member sees no marketplace, no integrations and no install button, and is told so at their addresses", async () => {
    const { page, errors } = await openAs(member, `${WS}/chat`)
    const nav = page.getByRole("navigation", { name: "Main" })
    await nav.getByRole("link", { name: "Chat" }).waitFor()
    expect(await nav.getByRole("link", { name: "Marketplace" }).count()).toBe(0)
    expect(await nav.getByRole("link", { name: "Integrations" }).count()).toBe(0)
    for (const path of ["marketplace", "settings/integrations", `settings/integrations/reauth/${oauthListingId}`]) {
      await page.goto(`${WS}/${path}`)
      await page.getByRole("note").filter({ hasText: "Only organization Owners and workspace Admins manage plugins and integrations." }).waitFor()
      expect(await page.getByRole("button", { name: /Install|Enable|Connect|Reconnect|Uninstall/ }).count()).toBe(0)
    }
    expect(errors).toEqual([])
  })
})

describe("on a phone", () => {
  it("the marketplace and the integrations fit a 390 px screen", async () => {
    const { page } = await openAs(admin, `${WS}/marketplace`, { phone: true })
    await page.getByRole("region", { name: "Capability packs" }).getByRole("heading", { name: "Documents" }).waitFor()
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)
    await page.goto(`${WS}/settings/integrations`)
    await listingCard(page, "Keyed Notes").waitFor()
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)
  })
})
