/**
 * The AI SDK's `useChat` (from @ai-sdk/react) in a real Chromium against the real `chat/ui` route:
 * a test page (test/app/usechat/) built here with Vite and served by the node as its web app, a
 * person signed in by cookie, and the built-in offline model answering. A streamed answer, a tool
 * call with its output, an approval approved and one denied, a question answered, a stop, and a
 * reload that resumes the running turn.
 */
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import react from "@vitejs/plugin-react"
import type { Browser, Page } from "playwright-core"
import { build } from "vite"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, newContext, watchForPageErrors } from "../support/browser.ts"
import { addPerson, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call } from "../e2e/client.ts"
import { postJson } from "../support/chat.ts"

let node: TestNode
let browser: Browser
let person: Person
let cookie: string

beforeAll(async () => {
  const outDir = await mkdtemp(path.join(tmpdir(), "usechat-page-"))
  await build({
    root: fileURLToPath(new URL("./usechat", import.meta.url)),
    configFile: false,
    logLevel: "error",
    plugins: [react()],
    base: "/",
    build: { outDir, emptyOutDir: true, target: "es2022", modulePreload: { polyfill: false }, reportCompressedSize: false }
  })
  node = await startTestNode({ appDir: outDir })
  browser = await launchChromium()
  person = await addPerson(node, "chatter", { org: "member", workspace: "member" })
  cookie = (await signIn(node.baseUrl, person)).cookie
  await call(node, "schema.define_label", { label: "Note", properties: {} })
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

/** The test page on a chat of its own, signed in as the person; the page's unexpected errors. */
const openChat = async (chatId: string): Promise<{ page: Page; errors: Array<string> }> => {
  const context = await newContext(browser, node.baseUrl)
  const [name, value] = [cookie.slice(0, cookie.indexOf("=")), cookie.slice(cookie.indexOf("=") + 1)]
  await context.addCookies([{ name, value, url: node.baseUrl }])
  const page = await context.newPage()
  // zod (inside the SDK) probes whether the page may eval; the node's CSP refuses, and the browser logs the refusal
  const errors = watchForPageErrors(page, [/unsafe-eval/, /Note that 'script-src' was not explicitly set/])
  await page.goto(`/?org=${node.bootstrap.orgSlug}&ws=${node.bootstrap.workspaceSlug}&chat=${chatId}`)
  await page.getByRole("status").filter({ hasText: "Status: ready" }).waitFor()
  return { page, errors }
}

const send = async (page: Page, text: string) => {
  await page.getByRole("textbox", { name: "Message" }).fill(text)
  await page.getByRole("button", { name: "Send" }).click()
}

const ready = (page: Page) => page.getByRole("status").filter({ hasText: "Status: ready" }).waitFor()

const reply = (page: Page) => page.getByRole("listitem", { name: "assistant message" }).last()

let chats = 0
const newChatId = () => `page-${Date.now().toString(36)}-${++chats}`

describe("useChat against chat/ui", () => {
  it("streams an answer, then a tool call with its output", async () => {
    const { page, errors } = await openChat(newChatId())
    await send(page, "hello there")
    await reply(page).getByText("You said: hello there").waitFor()
    await ready(page)
    expect(await reply(page).textContent()).toMatch(/Tokens: \d+/)

    await send(page, "/tool system__ping {}")
    const tool = reply(page).getByRole("region", { name: "Tool system.ping" })
    await tool.getByText("output-available").waitFor()
    expect(await tool.getByLabel("Tool output").textContent()).toBe('{"pong":true}')
    await ready(page)
    expect(await page.getByRole("listitem", { name: "user message" }).count()).toBe(2)
    expect(errors).toEqual([])
  })

  it("an approval approved runs the call; one denied shows as denied and runs nothing", async () => {
    const { page, errors } = await openChat(newChatId())
    const notes = await Promise.all([0, 1].map(async () => (await call(node, "node.create", { label: "Note", properties: {} })).body.nodeId as string))
    for (const [nodeId, button, state] of [[notes[0], "Approve", "output-available"], [notes[1], "Deny", "output-denied"]] as const) {
      await send(page, `/tool node__delete {"nodeId":"${nodeId}"}`)
      const tool = reply(page).getByRole("region", { name: "Tool node.delete" })
      await tool.getByText("approval-requested").waitFor()
      await ready(page)
      await tool.getByRole("button", { name: button }).click()
      await tool.getByText(state).waitFor()
      await ready(page)
    }
    expect(await reply(page).getByLabel("Tool output").count()).toBe(0)
    expect(await page.getByRole("listitem", { name: "assistant message" }).first().getByLabel("Tool output").textContent()).toMatch(/"status":"succeeded"/)
    expect((await call(node, "node.get", { nodeId: notes[0] })).status).toBe(404)
    expect((await call(node, "node.get", { nodeId: notes[1] })).status).toBe(200)
    expect(errors).toEqual([])
  })

  it("a question is answered from its part, and the turn goes on with the answer", async () => {
    const { page, errors } = await openChat(newChatId())
    await send(page, "/ask Which colour? | red | blue")
    const question = reply(page).getByRole("region", { name: "Question: Which colour?" })
    await question.getByRole("button", { name: "blue" }).click()
    await question.getByText("(answered)").waitFor()
    await reply(page).getByText('Tool ask_user returned: {"answer":"blue"}', { exact: false }).waitFor()
    await ready(page)
    expect(errors).toEqual([])
  })

  it("stop ends the running turn with its partial reply", async () => {
    const chatId = newChatId()
    const { page, errors } = await openChat(chatId)
    await send(page, "/long 60\n/slow 80")
    await reply(page).locator(".text").waitFor()
    await page.getByRole("button", { name: "Stop" }).click()
    await ready(page)
    const partial = (await reply(page).locator(".text").textContent()) ?? ""
    expect(partial.split(" ").length).toBeLessThan(60)
    // the turn itself stopped, not only the page's request: its run says so, and nothing is left to resume
    const runId = await reply(page).getAttribute("data-run-id")
    const runStatus = async () => (await postJson(node, "assistant/reply", { runId }, { cookie })).body.runStatus
    await expect.poll(runStatus, { timeout: 10_000 }).toBe("stopped")
    expect((await fetch(`${node.baseUrl}/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/chat/ui/${chatId}/stream`, { headers: { cookie } })).status).toBe(204)
    // the aborted request is logged by the browser
    expect(errors.filter((error) => !/abort/i.test(error))).toEqual([])
  })

  it("a reload resumes the running turn, to its end", async () => {
    const chatId = newChatId()
    const { page, errors } = await openChat(chatId)
    await send(page, "/long 40\n/slow 100")
    await reply(page).locator(".text").waitFor()
    await page.reload()
    // after the reload the page holds no message until the resumed stream brings the running turn's
    await reply(page).locator(".text").waitFor()
    await ready(page)
    const text = (await reply(page).locator(".text").textContent()) ?? ""
    expect(text.split(" ")).toHaveLength(40)
    expect(errors.filter((error) => !/abort/i.test(error))).toEqual([])
  })
})
