/**
 * Regenerates docs/screenshots/: a PNG of every page of the web app, as its Owner sees it, on a
 * real node (real Postgres, the built app) seeded through the public API with realistic data by
 * real peers on loopback: an OpenAI-compatible model scripted to answer, call a tool and ask to
 * delete a ticket (parked for approval); a registry serving the vendored seed, one of its servers
 * pointed at a real MCP server, installed and enabled; an MCP server behind a real OAuth
 * authorization server, connected and then revoked there, so its re-authentication notice is
 * real; automations with runs; API keys (one rotated); a workspace budget and the turns' spend.
 *
 * `npm run screenshots` (DATABASE_URL as the tests use it). Builds the app first when app/dist is
 * missing or older than app/src. Exits non-zero, naming the page, when one shows an error alert,
 * throws, or does not load; prints the files written.
 */
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, readdirSync, statSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import postgres from "postgres"
import type { Browser, BrowserContext, Locator, Page } from "playwright-core"
import { loadConfig } from "../src/platform/Config.ts"
import { catalogServerId } from "../src/marketplace/CatalogEntry.ts"
import { OAUTH_CALLBACK_PATH } from "../src/marketplace/OAuth.ts"
import { DEFAULT_SEED_REGISTRY_ID } from "../src/marketplace/RegistrySettings.ts"
import { parseOutboundAllow } from "../src/platform/Outbound.ts"
import { launchBrowser, newContext, signInThroughPage } from "../test/support/browser.ts"
import { streamChat } from "../test/support/chat.ts"
import { databaseUrl } from "../test/support/env.ts"
import { introspectingAdmit, type McpTestServer, startMcpTestServer } from "../test/support/mcpServer.ts"
import { type OidcServer, startOidcServer } from "../test/support/oidcServer.ts"
import { type OpenAiServer, startOpenAiServer } from "../test/support/openaiServer.ts"
import { addPerson, callWithCookie, type Person, signIn } from "../test/support/people.ts"
import { freePort, startTestNode, type TestNode } from "../test/support/platform.ts"
import { type RegistryServer, startRegistryServer } from "../test/support/registryServer.ts"
import { type SmtpSink, startSmtpSink } from "../test/support/smtpSink.ts"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const OUT = path.join(ROOT, "docs/screenshots")

// ---------------------------------------------------------------------------------------------
// the app, built

const newestUnder = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const full = path.join(dir, entry.name)
    return Math.max(newest, entry.isDirectory() ? newestUnder(full) : statSync(full).mtimeMs)
  }, 0)

const ensureAppBuilt = () => {
  const index = path.join(ROOT, "app/dist/index.html")
  let builtAt = 0
  try {
    builtAt = statSync(index).mtimeMs
  } catch {
    // not built yet
  }
  const sources = Math.max(newestUnder(path.join(ROOT, "app/src")), statSync(path.join(ROOT, "app/index.html")).mtimeMs)
  if (builtAt >= sources) return
  console.log(builtAt === 0 ? "building the app (app/dist is missing)" : "building the app (app/src changed since app/dist was built)")
  const build = spawnSync("npm", ["run", "build:app"], { cwd: ROOT, stdio: "inherit" })
  if (build.status !== 0) throw new Error(`npm run build:app failed (exit ${build.status})`)
}

// ---------------------------------------------------------------------------------------------
// the peers and the node

/** The account the OAuth authorization server knows. */
const ALICE = { sub: "alice", email: "alice@tasks.example" }
const RESOURCE_SERVER = { id: "tasks-resource-server", secret: randomBytes(16).toString("hex") }
/** The seed server given a remote on the local MCP server (its tools: echo and add). */
const TEMPLATE_SERVER = "io.github.mcpdotdirect/template-mcp-server"

interface Peers {
  readonly model: OpenAiServer
  readonly upstream: RegistryServer
  readonly template: McpTestServer
  readonly authServer: OidcServer
  readonly tasks: McpTestServer
  readonly sink: SmtpSink
}

const startPeers = async (): Promise<Peers> => {
  const model = await startOpenAiServer()
  const template = await startMcpTestServer()
  const authServer = await startOidcServer({
    accounts: [ALICE],
    clients: [{ client_id: RESOURCE_SERVER.id, client_secret: RESOURCE_SERVER.secret, redirect_uris: ["http://127.0.0.1/unused"] }],
    oauth: { scopes: ["tasks:read"], accessTokenTtlSeconds: 4 }
  })
  const tasks = await startMcpTestServer({
    authorizationServer: authServer.issuer,
    scopes: ["tasks:read"],
    admit: introspectingAdmit(authServer.issuer, RESOURCE_SERVER.id, RESOURCE_SERVER.secret)
  })
  const upstream = await startRegistryServer()
  upstream.change(TEMPLATE_SERVER, {
    title: "MCP Server Template",
    remotes: [{ type: "streamable-http", url: template.mcpUrl }]
  })
  upstream.setReadme(
    "mcpdotdirect/template-mcp-server",
    "# MCP Server Template\n\nA starting point for your own MCP server.\n\n## Tools\n\n- `echo`: answers with the text it is given\n- `add`: adds two numbers\n\n## Running it\n\nServe it over **Streamable HTTP** and add its URL to your organization.\n"
  )
  const sink = await startSmtpSink()
  return { model, upstream, template, authServer, tasks, sink }
}

const startNode = async (peers: Peers): Promise<TestNode> => {
  const port = await freePort()
  const assistant = loadConfig({}).assistant
  return startTestNode({
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    assistant: {
      ...assistant,
      openaiBaseUrl: peers.model.url,
      openaiApiKey: "sk-screenshots",
      operatorTiers: { fast: "openai:gpt-4o-mini", balanced: "openai:gpt-5", precise: "openai:o3" },
      defaultTier: "balanced"
    },
    outboundAllow: parseOutboundAllow("127.0.0.1"),
    authTokenEncryptionKey: randomBytes(32),
    marketplace: { defaultRegistryUrl: peers.upstream.url, githubRawBaseUrl: peers.upstream.rawBaseUrl, syncIntervalSeconds: 0, pageSize: 100, leaseMs: 60_000 },
    mail: { smtpUrl: peers.sink.url, from: "Alerts <alerts@svc.test>" },
    plugins: { denylist: [], refreshLeadSeconds: 2, refreshCheckSeconds: 1 }
  })
}

// ---------------------------------------------------------------------------------------------
// seeding through the public API, as the Owner

type Caller = (capability: string, input: unknown) => Promise<any>

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Reads until `done` holds of the value, or fails saying what it waited for. */
const until = async <A>(what: string, read: () => Promise<A>, done: (value: A) => boolean, timeoutMs = 20_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`seeding: ${what} did not happen within ${timeoutMs / 1000} s (last: ${JSON.stringify(value)})`)
    await sleep(500)
  }
}

/** A capability (by name, or a route of its own) of the bootstrap workspace as the signed-in person; the body of its 200 answer. */
const callerFor = (node: TestNode, cookie: string): Caller => async (capability, input) => {
  const place = `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
  const reply = await callWithCookie(node.baseUrl, cookie, `${place}/${capability.replaceAll(".", "/")}`, input)
  if (reply.status !== 200) throw new Error(`seeding: ${capability} answered ${reply.status}: ${JSON.stringify(reply.body)}`)
  return reply.body
}

interface Seeded {
  readonly conversationId: string
  readonly runAutomationId: string
  readonly runId: string
  readonly serverId: string
  readonly reauthPath: string
  readonly deviceLink: string
  /** When seeding ended: the audit log is shown up to then, not the reads of taking the pictures. */
  readonly seededAt: string
}

const ticketLabel = {
  label: "Ticket",
  properties: { title: { type: "string" }, status: { type: "enum", values: ["open", "closed"] }, priority: { type: "number" } }
}

/**
 * A conversation: a reply written after a tool call, then a call to delete a ticket parked for
 * approval; and a colleague's call parked too (the Owner sees it read-only in the inbox).
 */
const seedConversation = async (node: TestNode, peers: Peers, cookie: string, as: Caller): Promise<string> => {
  await as("schema.define_label", ticketLabel)
  await as("schema.define_label", { label: "Note", properties: { title: { type: "string" } } })
  const ticket = async (title: string, status: string, priority: number) =>
    (await as("node.create", { label: "Ticket", properties: { title, status, priority } })).nodeId as string
  await ticket("Billing export fails for March", "open", 1)
  const darkMode = await ticket("Dark mode for the dashboard", "open", 3)
  const vat = await ticket("Invoice PDF shows the wrong VAT", "closed", 2)

  peers.model.script(
    { kind: "tool", name: "node__list", arguments: { label: "Ticket" } },
    {
      kind: "text",
      text: "Two tickets are still open: \"Billing export fails for March\" (priority 1) and \"Dark mode for the dashboard\" (priority 3). The billing export is the urgent one; \"Invoice PDF shows the wrong VAT\" is already closed."
    }
  )
  const first = await streamChat(node, { content: "Which tickets are still open?" }, { cookie })
  if (first.done?.conversationPublicId === undefined) throw new Error(`seeding: the first turn did not end (${JSON.stringify(first.body ?? first.events.at(-1))})`)
  const conversationId = first.done.conversationPublicId as string

  peers.model.script(
    { kind: "tool", name: "node__delete", arguments: { nodeId: darkMode } },
    // the model is told the call waits for the person
    { kind: "text", text: "Deleting a ticket needs your approval: approve the request above and \"Dark mode for the dashboard\" is deleted." }
  )
  const second = await streamChat(node, { content: "Delete the dark mode ticket, it duplicates one in the design backlog.", conversationId }, { cookie })
  if (!second.events.some((event) => event.type === "approval-required")) throw new Error("seeding: the delete was not parked for approval")

  const colleague = await addPerson(node, "grace", { org: "member", workspace: "member" })
  peers.model.script(
    { kind: "tool", name: "node__delete", arguments: { nodeId: vat } },
    { kind: "text", text: "Deleting a ticket needs your approval: approve the request above and \"Invoice PDF shows the wrong VAT\" is deleted." }
  )
  const theirs = await streamChat(node, { content: "The VAT ticket is fixed and closed; delete it." }, { cookie: (await signIn(node.baseUrl, colleague)).cookie })
  if (!theirs.events.some((event) => event.type === "approval-required")) throw new Error("seeding: the colleague's delete was not parked for approval")
  return conversationId
}

/** Four automations: event, schedule, and two fired by the API (one ran to its end, one waits for the Owner). */
const seedAutomations = async (peers: Peers, as: Caller) => {
  await as("automation.create", {
    name: "Triage urgent tickets",
    description: "Summarises every new priority-1 ticket for the on-call engineer",
    trigger: { type: "event", entityType: "Ticket", eventType: "node.created", conditions: { kind: "condition", id: "p", property: "priority", operator: "lte", value: 1 } },
    steps: [
      { name: "read", stepType: "tool", config: { capability: "node.get", input: { nodeId: "{{trigger.nodeId}}" } } },
      { name: "summarise", stepType: "prompt", config: { prompt: "Summarise the ticket {{steps.read.output.properties.title}} for the on-call engineer", tier: "fast" } }
    ],
    enabled: true
  })
  await as("automation.create", {
    name: "Weekly ticket digest",
    description: "Monday morning digest of the week's tickets",
    trigger: { type: "schedule", cronExpression: "0 9 * * 1", timezone: "Europe/Berlin" },
    steps: [
      { name: "tickets", stepType: "tool", config: { capability: "node.list", input: { label: "Ticket" } } },
      { name: "digest", stepType: "prompt", config: { prompt: "Write this week's ticket digest for the team." } }
    ],
    enabled: true
  })
  const morning = await as("automation.create", {
    name: "Morning summary",
    description: "Checks the platform and summarises the open tickets for a team",
    trigger: { type: "api" },
    steps: [
      { name: "check", stepType: "tool", config: { capability: "system.ping" } },
      { name: "tickets", stepType: "tool", config: { capability: "node.list", input: { label: "Ticket" } } },
      { name: "summary", stepType: "agent", config: { agentSlug: "assistant", prompt: "Summarise the open tickets for the {{trigger.payload.team}} team" } }
    ],
    enabled: true
  })
  peers.model.script({ kind: "text", text: "Two tickets are open for the support team: the March billing export (urgent) and dark mode for the dashboard." })
  const { runId } = await as("automation.trigger", { automationId: morning.automationId, payload: { team: "support" } })
  await until("the Morning summary run", () => as("automation.get_run", { runId }), (run) => run.status === "succeeded" || run.status === "failed")

  const signOff = await as("automation.create", {
    name: "Release sign-off",
    description: "Asks a person before a release is recorded as shipped",
    trigger: { type: "api" },
    steps: [
      { name: "sign off", stepType: "human_input", config: { prompt: "Ship {{trigger.payload.release}} to production?" } },
      { name: "record", stepType: "tool", config: { capability: "node.create", input: { label: "Note", properties: { title: "Shipped {{trigger.payload.release}}" } } } }
    ],
    enabled: true
  })
  const waiting = await as("automation.trigger", { automationId: signOff.automationId, payload: { release: "v2.4" } })
  await until("the Release sign-off run to wait", () => as("automation.get_run", { runId: waiting.runId }), (run) => run.status === "waiting")
  return { runAutomationId: morning.automationId as string, runId: runId as string }
}

/** A catalog server installed and enabled; an OAuth server connected, then revoked at its authorization server. */
const seedIntegrations = async (node: TestNode, peers: Peers, cookie: string, as: Caller) => {
  await as("plugin.registry.sync", { registryId: DEFAULT_SEED_REGISTRY_ID, wait: true })
  const serverId = catalogServerId(DEFAULT_SEED_REGISTRY_ID, TEMPLATE_SERVER, "0.0.1-seed")
  const template = await as("plugin.org.install", { catalogServerId: serverId })
  await as("plugin.org.set_enabled", { listingId: template.listingId, enabled: true })
  await as("plugin.workspace.set_enabled", { listingId: template.listingId, enabled: true })

  const tasks = await as("plugin.org.install", { name: "com.example/team-tasks", title: "Team Tasks", endpointUrl: peers.tasks.mcpUrl, transport: "streamable-http", authKind: "oauth" })
  await as("plugin.org.set_enabled", { listingId: tasks.listingId, enabled: true })
  const started = await as("plugin.oauth.start", { listingId: tasks.listingId })
  const redirect = await peers.authServer.login(started.authorizationUrl, ALICE.email)
  const callback = await fetch(`${node.baseUrl}${OAUTH_CALLBACK_PATH}${new URL(redirect).search}`, { headers: { accept: "application/json", cookie } })
  if (callback.status !== 200) throw new Error(`seeding: the OAuth callback answered ${callback.status}: ${await callback.text()}`)
  await as("plugin.workspace.set_enabled", { listingId: tasks.listingId, enabled: true })
  // its refresh now fails: the refresh watcher marks it needs_reauth and notifies the Owner
  await peers.authServer.revokeAllTokens()
  return { serverId, tasksListingId: tasks.listingId as string }
}

/** The re-authentication route the Owner's notice about a listing leads to. */
const reauthNoticeOf = async (as: Caller, listingId: string) => {
  const about = (n: any) => n.subject?.listingId === listingId
  const notices = await until("the re-authentication notice", () => as("notifications.list", {}), (body) => body.notifications.some(about))
  return notices.notifications.find(about).deepLink as string
}

const seedKeysAndSpend = async (as: Caller) => {
  await as("create_api_key", { name: "CI deploys" })
  await as("create_api_key", { name: "Finance exports", level: "organization", expiresInDays: 365 })
  const bot = await as("create_api_key", { name: "Support bot", expiresInDays: 90 })
  // rotation has a route of its own (spec: api-keys/rotate)
  await as("api-keys/rotate", { keyPublicId: bot.publicId })
  await as("workspace.budget.set", { monthlyBudget: 250_000 })
  await as("org.billing.set_caps", { assistantMonthlyCap: 2_000_000, modelKeyDailyLimit: 100_000 })
}

/** A CLI login waiting for a person: the address its user opens. */
const seedDeviceLogin = async (node: TestNode): Promise<string> => {
  const response = await fetch(`${node.baseUrl}/v1/auth/device/code`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ clientName: "svc-cli on laptop" }) })
  if (response.status !== 200) throw new Error(`seeding: a CLI login answered ${response.status}: ${await response.text()}`)
  const { verification_uri_complete } = (await response.json()) as { verification_uri_complete: string }
  const url = new URL(verification_uri_complete)
  return `${url.pathname}${url.search}`
}

const seed = async (node: TestNode, peers: Peers, owner: Person): Promise<Seeded> => {
  const { cookie } = await signIn(node.baseUrl, owner)
  const as = callerFor(node, cookie)
  const conversationId = await seedConversation(node, peers, cookie, as)
  // first, so that the refresh watcher's notice comes while the rest is seeded
  const { serverId, tasksListingId } = await seedIntegrations(node, peers, cookie, as)
  const automations = await seedAutomations(peers, as)
  await seedKeysAndSpend(as)
  const reauthPath = await reauthNoticeOf(as, tasksListingId)
  const seededAt = new Date().toISOString()
  return { conversationId, ...automations, serverId, reauthPath, deviceLink: await seedDeviceLogin(node), seededAt }
}

// ---------------------------------------------------------------------------------------------
// the pages

interface Shot {
  readonly file: string
  readonly path: string
  /** What shows that the page has its data (a placeholder page lacks it: a warning, not a failure). */
  readonly ready?: (page: Page) => Locator
  /** What a person does on the page before it is taken. */
  readonly act?: (page: Page) => Promise<void>
  /** Only the screen, not the whole page. */
  readonly screenOnly?: boolean
}

const shotsOf = (place: string, seeded: Seeded): ReadonlyArray<Shot> => [
  {
    file: "chat.png",
    path: `${place}/chat/${seeded.conversationId}`,
    ready: (page) => page.getByRole("log").getByRole("region", { name: /Approval requested/ }),
    screenOnly: true
  },
  { file: "approvals.png", path: `${place}/approvals`, ready: (page) => page.getByRole("region", { name: /Approval requested/ }).first() },
  { file: "automations.png", path: `${place}/automations`, ready: (page) => page.getByRole("link", { name: "Release sign-off" }) },
  {
    file: "automation-new.png",
    path: `${place}/automations/new`,
    act: async (page) => {
      await page.getByLabel("Name", { exact: true }).fill("Weekly ticket digest")
      await page.getByLabel("Description", { exact: true }).fill("Monday morning digest of the week's tickets")
      await page.getByRole("radio", { name: "A schedule" }).check()
      await page.getByLabel("Cron expression").fill("0 9 * * 1")
      await page.getByLabel("Time zone").selectOption("Europe/Berlin")
    },
    ready: (page) => page.getByRole("region", { name: "Next runs" }).locator("li").nth(4)
  },
  {
    file: "automation-run.png",
    path: `${place}/automations/${seeded.runAutomationId}/runs/${seeded.runId}`,
    // the agent step's answer, unfolded
    act: (page) => page.getByRole("table", { name: "Step timeline" }).getByText("Output").last().click(),
    ready: (page) => page.getByRole("table", { name: "Step timeline" })
  },
  { file: "marketplace.png", path: `${place}/marketplace`, ready: (page) => page.getByRole("region", { name: "MCP servers" }).getByRole("listitem").first() },
  { file: "marketplace-server.png", path: `${place}/marketplace/${encodeURIComponent(seeded.serverId)}`, ready: (page) => page.getByRole("region", { name: "README" }) },
  { file: "integrations.png", path: `${place}/settings/integrations`, ready: (page) => page.getByRole("article", { name: "Team Tasks" }) },
  { file: "integrations-reauth.png", path: seeded.reauthPath, ready: (page) => page.getByRole("region", { name: "Team Tasks" }) },
  { file: "notifications.png", path: `${place}/notifications`, ready: (page) => page.getByRole("heading", { name: "Team Tasks needs you to sign in again" }) },
  { file: "keys.png", path: `${place}/settings/keys`, ready: (page) => page.getByText("Support bot").first() },
  {
    file: "security.png",
    path: `${place}/settings/security`,
    act: (page) => page.getByRole("button", { name: "Set up two-factor sign-in" }).click(),
    ready: (page) => page.getByLabel(/secret/i).first()
  },
  { file: "device.png", path: seeded.deviceLink },
  { file: "audit.png", path: `${place}/audit?until=${encodeURIComponent(seeded.seededAt)}`, ready: (page) => page.getByRole("table").first() },
  { file: "billing.png", path: `${place}/billing`, ready: (page) => page.getByText("gpt-5").first() }
]

/** Page failures as they happen: uncaught errors, and API answers of 500 and above. */
const watch = (page: Page) => {
  const failures: Array<string> = []
  page.on("pageerror", (error) => failures.push(`uncaught error: ${error.message}`))
  page.on("response", (response) => {
    if (response.status() >= 500) failures.push(`${response.request().method()} ${new URL(response.url()).pathname} answered ${response.status()}`)
  })
  return failures
}

/** Whole pages are cut at this height: a long list says what it is in its first screens. */
const MAX_HEIGHT = 2000

const loadingGone = async (page: Page, timeoutMs: number) => {
  const loading = page.getByRole("status").filter({ hasText: /^Loading .*…$/ })
  const deadline = Date.now() + timeoutMs
  while ((await loading.count()) > 0) {
    if (Date.now() > deadline) return false
    await page.waitForTimeout(100)
  }
  return true
}

/** Visible alerts' words. */
const alertsOn = async (page: Page) => {
  const texts: Array<string> = []
  for (const alert of await page.getByRole("alert").all()) {
    const text = ((await alert.isVisible()) ? (await alert.textContent()) ?? "" : "").trim()
    if (text !== "") texts.push(text)
  }
  return texts
}

class Camera {
  readonly written: Array<string> = []
  readonly failures: Array<string> = []
  readonly warnings: Array<string> = []

  /** Takes the page as it is now, failing it if it shows an alert or failed meanwhile. */
  async take(page: Page, pageFailures: Array<string>, file: string, options: { readonly fullPage: boolean; readonly ready?: Locator } = { fullPage: true }) {
    if (options.ready !== undefined) {
      await options.ready.waitFor({ timeout: 10_000 }).catch(() => this.warnings.push(`${file}: what shows the page's data did not appear (a placeholder page?)`))
    }
    if (!(await loadingGone(page, 10_000))) this.warnings.push(`${file}: still loading after 10 s`)
    // the last paint (fonts, a query settling)
    await page.waitForTimeout(300)
    for (const alert of await alertsOn(page)) this.failures.push(`${file} (${new URL(page.url()).pathname}) shows an error: ${alert}`)
    for (const failure of pageFailures.splice(0)) this.failures.push(`${file} (${new URL(page.url()).pathname}): ${failure}`)
    const target = path.join(OUT, file)
    const { width } = page.viewportSize()!
    const height = options.fullPage ? Math.min(MAX_HEIGHT, (await page.evaluate("document.documentElement.scrollHeight")) as number) : undefined
    await page.screenshot({
      path: target,
      scale: "css",
      animations: "disabled",
      caret: "hide",
      ...(height === undefined ? {} : { fullPage: true, clip: { x: 0, y: 0, width, height } })
    })
    this.written.push(path.relative(ROOT, target))
  }

  /** Opens `shot.path` in `page` and takes it; a page that does not answer or shows no title fails. */
  async visit(page: Page, pageFailures: Array<string>, shot: Shot) {
    const response = await page.goto(shot.path)
    if (response === null || !response.ok()) {
      this.failures.push(`${shot.file}: ${shot.path} did not load (${response?.status() ?? "no answer"})`)
      return
    }
    const title = page.getByRole("heading", { level: 1 }).first()
    if (!(await title.waitFor({ timeout: 15_000 }).then(() => true, () => false))) {
      this.failures.push(`${shot.file}: ${shot.path} showed no page title within 15 s`)
      return
    }
    if (shot.act !== undefined) {
      await shot.act(page).catch((error: Error) => this.warnings.push(`${shot.file}: could not fill the page in (${error.message.split("\n")[0]})`))
    }
    await this.take(page, pageFailures, shot.file, { fullPage: shot.screenOnly !== true, ...(shot.ready === undefined ? {} : { ready: shot.ready(page) }) })
  }
}

const capture = async (browser: Browser, node: TestNode, owner: Person, seeded: Seeded, camera: Camera) => {
  const place = `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
  const contexts: Array<BrowserContext> = []
  try {
    const desktop = await newContext(browser, node.baseUrl)
    contexts.push(desktop)
    const page = await desktop.newPage()
    const failures = watch(page)
    await camera.visit(page, failures, { file: "sign-in.png", path: "/sign-in", ready: (p) => p.getByRole("button", { name: "Sign in" }) })
    await signInThroughPage(page, owner)
    for (const shot of shotsOf(place, seeded)) await camera.visit(page, failures, shot)

    const phone = await newContext(browser, node.baseUrl, { phone: true })
    contexts.push(phone)
    const small = await phone.newPage()
    const smallFailures = watch(small)
    await signInThroughPage(small, owner)
    const chat = `${place}/chat/${seeded.conversationId}`
    await camera.visit(small, smallFailures, { file: "phone-chat.png", path: chat, ready: (p) => p.getByRole("log"), screenOnly: true })
    await small.getByRole("button", { name: "Menu" }).click()
    await camera.take(small, smallFailures, "phone-menu.png", { fullPage: false, ready: small.getByRole("navigation", { name: "Main" }).getByRole("link").first() })
  } finally {
    for (const context of contexts) await context.close()
  }
}

/** The node's schemas (`<dbSchema>` and those named after it), dropped once it has stopped. */
const dropSchemas = async (dbSchema: string) => {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    const schemas = await sql`select nspname from pg_namespace where nspname = ${dbSchema} or nspname like ${`${dbSchema}\\_%`}`
    for (const { nspname } of schemas) await sql`drop schema if exists ${sql(nspname)} cascade`
  } finally {
    await sql.end()
  }
}

const main = async () => {
  ensureAppBuilt()
  mkdirSync(OUT, { recursive: true })
  const peers = await startPeers()
  let node: TestNode | undefined
  let browser: Browser | undefined
  const camera = new Camera()
  try {
    node = await startNode(peers)
    const owner = await addPerson(node, "ada", { org: "owner" })
    console.log(`seeding a node on ${node.baseUrl} (schema ${node.config.dbSchema})`)
    const seeded = await seed(node, peers, owner)
    browser = await launchBrowser()
    await capture(browser, node, owner, seeded, camera)
  } finally {
    await browser?.close()
    await node?.stop()
    await Promise.all([peers.model.close(), peers.upstream.close(), peers.template.close(), peers.tasks.close(), peers.authServer.close(), peers.sink.close()])
    if (node !== undefined) await dropSchemas(node.config.dbSchema)
  }
  for (const file of camera.written) console.log(`wrote ${file}`)
  for (const warning of camera.warnings) console.warn(`warning: ${warning}`)
  if (camera.failures.length > 0) {
    console.error(`\n${camera.failures.length} page(s) failed:\n${camera.failures.map((f) => `  - ${f}`).join("\n")}`)
    process.exitCode = 1
  }
}

main().then(
  // the node's pools and timers would keep the process alive
  () => process.exit(),
  (error: unknown) => {
    console.error(`screenshots failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
    process.exit(1)
  }
)
