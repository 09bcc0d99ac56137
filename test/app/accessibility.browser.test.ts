/**
 * Every page of the app checked by axe-core (the rules of WCAG 2.1 A and AA: names and labels,
 * landmarks and heading order, colour contrast, ARIA use) in a real Chromium, on a desktop and a
 * phone-width screen, signed in as an Owner who sees every page, with a conversation (a tool call,
 * a parked approval), an automation waiting on a person and its notice to show.
 */
import { createRequire } from "node:module"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, newContext, signInThroughPage } from "../support/browser.ts"
import { streamChat } from "../support/chat.ts"
import { addPerson, type Person, signIn } from "../support/people.ts"
import { asPerson, ok, runWaitingOnPerson } from "../support/plugins.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

const AXE_SOURCE = createRequire(import.meta.url).resolve("axe-core/axe.min.js")

let node: TestNode
let browser: Browser
let owner: Person
let conversation: string
let automationPages: ReadonlyArray<string>

beforeAll(async () => {
  node = await startTestNode()
  browser = await launchBrowser()
  owner = await addPerson(node, "allyowner", { org: "owner", workspace: "admin" })
  // pages with something on them: a conversation with a tool call and a parked approval, an
  // automation waiting on a person at its first step, and so a notice for the bell
  const { cookie } = await signIn(node.baseUrl, owner)
  const caller = await asPerson(node, owner)
  const asOwner = async (capability: string, input: unknown) => ok(await caller(capability, input))
  const first = await streamChat(node, { content: "/tool system__ping {}" }, { cookie })
  conversation = first.done.conversationPublicId
  await asOwner("schema.define_label", { label: "Note", properties: { title: { type: "string" } } })
  const { nodeId } = await asOwner("node.create", { label: "Note", properties: { title: "to delete" } })
  await streamChat(node, { content: `/tool node__delete {"nodeId":"${nodeId}"}`, conversationId: conversation }, { cookie })
  const { automationId, runId } = await runWaitingOnPerson(caller)
  automationPages = [`/acme/main/automations/${automationId}`, `/acme/main/automations/${automationId}/runs/${runId}`]
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

const PAGES = [
  "/sign-in",
  "/acme/main/chat",
  "/acme/main/approvals",
  "/acme/main/automations",
  "/acme/main/automations/new",
  "/acme/main/marketplace",
  "/acme/main/settings/integrations",
  "/acme/main/notifications",
  "/acme/main/settings/keys",
  "/acme/main/settings/security",
  "/acme/main/audit",
  "/acme/main/cluster",
  "/acme/main/billing",
  "/device"
]

interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
}

const audit = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  await page.addScriptTag({ path: AXE_SOURCE })
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Array<Violation> }> } }).axe
    const result = await axe.run(globalThis, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }))
  })
}

const settle = async (page: Page) => {
  await page.locator("h1").first().waitFor()
  // the page's first answers are in: no loading line left
  await expect.poll(() => page.getByRole("status").filter({ hasText: /^Loading/ }).count(), { timeout: 10_000 }).toBe(0)
}

describe("accessibility (axe-core, WCAG 2.1 A and AA)", () => {
  for (const phone of [false, true]) {
    it(`every page passes${phone ? " on a 390 px screen" : ""}`, async () => {
      const context = await newContext(browser, node.baseUrl, { phone, bypassCsp: true })
      const page = await context.newPage()
      const found: Record<string, ReadonlyArray<string>> = {}
      await page.goto("/sign-in")
      await settle(page)
      const signIn = await audit(page)
      if (signIn.length > 0) found["/sign-in"] = signIn.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
      await signInThroughPage(page, owner)
      for (const path of [...PAGES.slice(1), `/acme/main/chat/${conversation}`, ...automationPages]) {
        await page.goto(path)
        await settle(page)
        const violations = await audit(page)
        if (violations.length > 0) found[path] = violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
      }
      expect(found).toEqual({})
      await context.close()
    }, 120_000)
  }
})
