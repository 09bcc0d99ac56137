/**
 * The approvals inbox in a real Chromium: the workspace's parked calls, each with its capability,
 * input, who asked (by name) and its expiry; the person's own ones answered from there (and a link to their
 * conversation), another person's shown read-only with why, and one answered elsewhere meanwhile
 * refused in words; and nothing waiting said as such. Calls are parked by offline-model turns (`/tool node__delete ...`) over the API.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, newContext, signInThroughPage, watchForPageErrors } from "../support/browser.ts"
import { postJson, streamChat } from "../support/chat.ts"
import { addPerson, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call } from "../e2e/client.ts"

let node: TestNode
let browser: Browser
let asker: Person
let colleague: Person

beforeAll(async () => {
  node = await startTestNode()
  browser = await launchBrowser()
  asker = await addPerson(node, "asker", { org: "member", workspace: "member" })
  colleague = await addPerson(node, "colleague", { org: "member", workspace: "member" })
  await call(node, "schema.define_label", { label: "Note", properties: {} })
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await node?.stop()
})

const makeNote = async () => (await call(node, "node.create", { label: "Note", properties: {} })).body.nodeId as string

/** A turn of `person` whose call to delete `nodeId` is parked; its approval card and conversation. */
const park = async (person: Person, nodeId: string) => {
  const { cookie } = await signIn(node.baseUrl, person)
  const turn = await streamChat(node, { content: `/tool node__delete {"nodeId":"${nodeId}"}` }, { cookie })
  const card = turn.events.find((event) => event.type === "approval-required")
  return { cookie, approvalId: card.approvalId as string, conversationId: turn.done.conversationPublicId as string }
}

const openInbox = async (person: Person): Promise<{ page: Page; errors: Array<string> }> => {
  const page = await (await newContext(browser, node.baseUrl)).newPage()
  // the browser logs as failed requests: the account asked for before signing in (401), the refused answer (409)
  const errors = watchForPageErrors(page, [/status of 401/, /status of 409/])
  await signInThroughPage(page, person, { next: "/acme/main/approvals" })
  await page.getByRole("heading", { name: "Approvals", level: 1 }).waitFor()
  return { page, errors }
}

/** The inbox entry of the call that deletes `nodeId`. */
const entryFor = (page: Page, nodeId: string) => page.getByRole("region", { name: "Approval requested: node.delete" }).filter({ hasText: nodeId })

describe("the approvals inbox", () => {
  it("lists the workspace's waiting calls: one's own to answer, another person's read-only; an answered one leaves", async () => {
    const mine = await makeNote()
    const theirs = await makeNote()
    const answeredElsewhere = await makeNote()
    const own = await park(asker, mine)
    const colleagues = await park(colleague, theirs)
    const raced = await park(asker, answeredElsewhere)

    const { page, errors } = await openInbox(asker)
    const entry = entryFor(page, mine)
    await entry.waitFor()
    expect(await entry.textContent()).toMatch(/Asked by you at .+Expires /)
    const link = entry.getByRole("link", { name: "open its conversation" })
    expect(await link.getAttribute("href")).toBe(`/acme/main/chat/${own.conversationId}`)

    // another person's call: who asked, no buttons, and why
    const foreign = entryFor(page, theirs)
    expect(await foreign.textContent()).toMatch(/Asked by colleague at /)
    expect(await foreign.textContent()).toContain("Read-only: only the person who asked may answer this call.")
    expect(await foreign.getByRole("button").count()).toBe(0)
    expect(await foreign.getByRole("link").count()).toBe(0)

    // answered in another tab meanwhile: refused in words
    expect((await postJson(node, "agent/approvals/resolve", { approvalId: raced.approvalId, decision: "denied" }, { cookie: raced.cookie })).status).toBe(200)
    await entryFor(page, answeredElsewhere).getByRole("button", { name: "Approve" }).click()
    const outcomes = page.getByRole("status").filter({ hasText: "node.delete" })
    await expect.poll(() => outcomes.textContent()).toContain("This approval has expired or was already answered.")

    // deny one's own: it leaves the list, its outcome stays in view, and the call did not run
    await entry.getByRole("button", { name: "Deny" }).click()
    await expect.poll(() => outcomes.textContent()).toContain("Denied: the call did not run.")
    await expect.poll(() => entryFor(page, mine).count()).toBe(0)
    expect(await entryFor(page, answeredElsewhere).count()).toBe(0)
    expect(await entryFor(page, theirs).count()).toBe(1)
    expect((await call(node, "node.get", { nodeId: mine })).status).toBe(200)

    // once the colleague has answered theirs, nothing is waiting
    expect((await postJson(node, "agent/approvals/resolve", { approvalId: colleagues.approvalId, decision: "denied" }, { cookie: colleagues.cookie })).status).toBe(200)
    await page.reload()
    await page.getByText("Nothing is waiting for approval in this workspace.").waitFor()

    // its conversation tells the same
    await page.goto(`/acme/main/chat/${own.conversationId}`)
    const recorded = page.getByRole("log").getByRole("region", { name: "Approval requested: node.delete" })
    await expect.poll(() => recorded.getByRole("status").textContent()).toBe("Denied: the call did not run.")
    // the denied call (`denied` in the thread's turn result) shows once, as its card
    expect(await page.getByRole("log").getByRole("group", { name: "Tool call node.delete" }).count()).toBe(0)
    expect(errors).toEqual([])
    await page.context().close()
  })
})
