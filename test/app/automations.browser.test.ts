/**
 * The Automations pages in a real Chromium, against a real node whose assistant is an
 * OpenAI-compatible model peer on loopback (test/support/openaiServer.ts) scripted to call
 * automation.create: what the assistant made waits disabled for a person's Enable, the person
 * enables it and runs it, and the run's step timeline appears. Also the editor: a schedule's next
 * runs previewed in the chosen zone, an event trigger with a condition tree saved and shown again,
 * steps reordered from the keyboard, a human_input step's assignee chosen among the workspace's people
 * (typed as a user id, with the reason, when they cannot be loaded), a call a run parked for approval
 * approved from the run's page, and the server's refusal shown in words.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { launchBrowser, newContext, signInThroughPage, watchForPageErrors } from "../support/browser.ts"
import { type OpenAiServer, startOpenAiServer } from "../support/openaiServer.ts"
import { addPerson, type Person } from "../support/people.ts"
import { asPerson, ok, runWaitingOnPerson } from "../support/plugins.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call } from "../e2e/client.ts"

let model: OpenAiServer
let node: TestNode
let browser: Browser
let owner: Person
let reviewer: Person
let place: string

beforeAll(async () => {
  model = await startOpenAiServer()
  node = await startTestNode({
    assistant: {
      ...loadConfig({}).assistant,
      openaiBaseUrl: model.url,
      openaiApiKey: "sk-test",
      operatorTiers: { fast: "openai:gpt-4o-mini", balanced: "openai:gpt-5-test", precise: "openai:o3" }
    },
    // the model server listens on this machine
    outboundAllow: parseOutboundAllow("127.0.0.1")
  })
  browser = await launchBrowser()
  owner = await addPerson(node, "automator", { org: "owner" })
  reviewer = await addPerson(node, "reviewer", { org: "member", workspace: "member" })
  place = `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
  const defined = await call(node, "schema.define_label", {
    label: "Ticket",
    properties: { title: { type: "string" }, status: { type: "enum", values: ["open", "pending", "closed"] }, priority: { type: "number" } }
  })
  expect(defined.status).toBe(200)
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await model?.close()
})

/** A signed-in page of the owner on `path`, failing on any page error; `prepare` runs before the page first loads. */
const openAs = async (path: string, prepare?: (page: Page) => Promise<unknown>): Promise<{ page: Page; errors: Array<string> }> => {
  const context = await newContext(browser, node.baseUrl)
  const page = await context.newPage()
  // failed requests the browser logs: who is signed in, asked before signing in (401), and a save the server refuses where a test provokes one (400)
  const errors = watchForPageErrors(page, [/status of 401/, /status of 400/])
  await prepare?.(page)
  await signInThroughPage(page, owner, { next: `${place}${path}` })
  return { page, errors }
}

const automationsOf = async () => (await call(node, "automation.list", { limit: 100 })).body.automations as Array<any>

describe("automations in the app", () => {
  it("create an automation from chat (disabled) and enable it as a person", async () => {
    model.script(
      {
        kind: "tool",
        name: "automation__create",
        arguments: {
          name: "Ping on demand",
          description: "Pings the platform when fired",
          trigger: { type: "api" },
          steps: [{ name: "ping", stepType: "tool", config: { capability: "system.ping" } }],
          enabled: true
        }
      },
      { kind: "text", text: "I made the automation Ping on demand. A person has to enable it before it runs." }
    )
    const { page, errors } = await openAs("/chat")
    await page.getByLabel("Message").fill("Make me an automation that pings the platform when I fire it")
    await page.getByRole("button", { name: "Send" }).click()
    await expect.poll(() => page.getByRole("log").textContent(), { timeout: 20_000 }).toContain("A person has to enable it")

    // the assistant asked for enabled: true; an AI origin gets it disabled
    const made = (await automationsOf()).find((a) => a.name === "Ping on demand")
    expect(made).toMatchObject({ enabled: false, origin: "ai" })

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Automations" }).click()
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Ping on demand" }) })
    await expect.poll(() => row.textContent()).toContain("Disabled")
    expect(await row.textContent()).toContain("waiting for a person's Enable")
    expect(await row.textContent()).toContain("Never")

    await row.getByRole("link", { name: "Ping on demand" }).click()
    await page.getByRole("heading", { level: 1, name: "Ping on demand" }).waitFor()
    await page.getByRole("heading", { name: "Disabled", exact: true }).waitFor()
    expect(await page.locator(".warn-note").textContent()).toContain("waiting for a person's Enable")
    // a disabled automation cannot be run from its page
    expect(await page.getByRole("button", { name: "Run now" }).isDisabled()).toBe(true)

    await page.getByRole("button", { name: "Enable", exact: true }).click()
    await page.getByRole("heading", { name: "Enabled", exact: true }).waitFor()
    expect(await page.getByText("Enabled by you.").isVisible()).toBe(true)
    expect(await page.getByText("waiting for a person's Enable").count()).toBe(0)
    expect((await call(node, "automation.get", { automationId: made.automationId })).body.enabled).toBe(true)

    // fired (automation.trigger) from its page: the run's step timeline appears and follows it to its end
    await page.getByLabel("Payload as JSON").fill('{"from": "the app"}')
    await page.getByRole("button", { name: "Run now" }).click()
    const timeline = page.getByRole("table", { name: "Step timeline" })
    const pingRow = timeline.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /ping/ }) })
    await expect.poll(() => pingRow.textContent(), { timeout: 15_000 }).toContain("Succeeded")
    expect(await pingRow.textContent()).toMatch(/^1\. ping \(tool\)1Succeeded\d/)
    await pingRow.getByText("Output").click()
    expect(await pingRow.locator("pre").textContent()).toContain('"pong": true')
    const runs = page.getByRole("region", { name: "Runs" })
    expect(await runs.getByRole("row").nth(1).textContent()).toContain('API call with {"from":"the app"}')

    // the list shows it enabled, with its last run
    await page.getByRole("link", { name: "All automations" }).click()
    await expect.poll(() => row.textContent()).toContain("Enabled")
    expect(await row.textContent()).toContain("Succeeded")
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("previews a schedule's next runs in the chosen time zone, and says why an expression is not one", async () => {
    const { page, errors } = await openAs("/automations/new")
    await page.getByRole("radio", { name: "A schedule" }).check()
    await page.getByLabel("Cron expression").fill("0 9 * * *")
    await page.getByLabel("Time zone").selectOption("UTC")
    const preview = page.getByRole("region", { name: "Next runs" })
    const firstRun = preview.locator("time").first()
    await expect.poll(() => firstRun.getAttribute("datetime")).toMatch(/T09:00:00\.000Z$/)
    expect(await preview.locator("li").count()).toBe(5)
    const inUtc = await preview.textContent()

    await page.getByLabel("Time zone").selectOption("Asia/Tokyo")
    // 09:00 in Tokyo is midnight UTC
    await expect.poll(() => firstRun.getAttribute("datetime")).toMatch(/T00:00:00\.000Z$/)
    expect(await preview.textContent()).not.toBe(inUtc)
    expect(await preview.locator("li").first().textContent()).toContain("in Asia/Tokyo")

    await page.getByLabel("Cron expression").fill("61 * * * *")
    await expect.poll(() => preview.textContent()).toContain("'61 * * * *' is not a five-field cron expression")
    await page.getByLabel("Cron expression").fill("0 9 * * 1 2")
    await expect.poll(() => preview.textContent()).toContain("is not a five-field cron expression")

    // saved, the schedule is what the person chose
    await page.getByLabel("Cron expression").fill("30 8 * * 1-5")
    await page.getByLabel("Name", { exact: true }).fill("Weekday mornings in Tokyo")
    await page.getByRole("button", { name: "Create automation" }).click()
    await page.getByRole("heading", { level: 1, name: "Weekday mornings in Tokyo" }).waitFor()
    expect(await page.getByText("On schedule 30 8 * * 1-5 (Asia/Tokyo)").isVisible()).toBe(true)
    const saved = (await automationsOf()).find((a) => a.name === "Weekday mornings in Tokyo")
    expect(saved).toMatchObject({ enabled: false, origin: "human", trigger: { type: "schedule", cronExpression: "30 8 * * 1-5", timezone: "Asia/Tokyo" } })
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("builds an event trigger with a condition tree from the schema registry, saves it and shows it again", async () => {
    const { page, errors } = await openAs("/automations/new")
    await page.getByLabel("Name", { exact: true }).fill("Urgent open tickets")
    await page.getByLabel("Entity type").selectOption("Ticket")
    await page.getByLabel("Event", { exact: true }).selectOption("node.created")

    await page.getByRole("button", { name: "Add condition to group g1" }).click()
    // the registry's properties, and for an enum the operators it admits
    await page.getByLabel("Property of condition c1").selectOption("status")
    const operators = await page.getByLabel("Operator of condition c1").locator("option").allTextContents()
    expect(operators).toEqual(["equals (eq)", "does not equal (neq)", "changed (changed)", "is set (exists)", "is not set (not_exists)", "is one of (in)", "is none of (not_in)"])
    await page.getByLabel("Operator of condition c1").selectOption("in")
    const values = page.getByRole("group", { name: "Values of condition c1" })
    await values.getByLabel("open").check()
    await values.getByLabel("pending").check()

    // a nested group: priority above 3, or a title mentioning fire
    await page.getByRole("button", { name: "Add group to group g1" }).click()
    await page.getByLabel("How group g2 combines").selectOption("or")
    await page.getByRole("button", { name: "Add condition to group g2" }).click()
    await page.getByLabel("Property of condition c2").selectOption("priority")
    expect(await page.getByLabel("Operator of condition c2").locator("option").allTextContents()).toContain("is greater than (gt)")
    await page.getByLabel("Operator of condition c2").selectOption("gt")
    await page.getByLabel("Value of condition c2").fill("3")
    await page.getByRole("button", { name: "Add condition to group g2" }).click()
    await page.getByLabel("Property of condition c3").selectOption("title")
    await page.getByLabel("Operator of condition c3").selectOption("contains")
    await page.getByLabel("Value of condition c3").fill("fire")
    // changed takes no value
    await page.getByRole("button", { name: "Add condition to group g1" }).click()
    await page.getByLabel("Property of condition c4").selectOption("title")
    await page.getByLabel("Operator of condition c4").selectOption("exists")
    expect(await page.getByLabel("Value of condition c4").count()).toBe(0)

    await page.getByLabel("New step's type").selectOption("tool")
    await page.getByRole("button", { name: "Add step" }).click()
    await page.getByLabel("Name (step 1)").fill("read it")
    await page.getByLabel("Capability (step 1)").fill("node.get")
    await page.getByLabel("Input as JSON (step 1)").fill('{"nodeId": "{{trigger.nodeId}}"}')
    await page.getByRole("button", { name: "Create automation" }).click()
    await page.getByRole("heading", { level: 1, name: "Urgent open tickets" }).waitFor()
    expect(await page.getByText("When a Ticket is created, if 4 conditions hold").isVisible()).toBe(true)

    const saved = (await automationsOf()).find((a) => a.name === "Urgent open tickets")
    expect(saved.trigger).toEqual({
      type: "event",
      entityType: "Ticket",
      eventType: "node.created",
      conditions: {
        kind: "group",
        id: "g1",
        combinator: "and",
        children: [
          { kind: "condition", id: "c1", property: "status", operator: "in", value: ["open", "pending"] },
          {
            kind: "group",
            id: "g2",
            combinator: "or",
            children: [
              { kind: "condition", id: "c2", property: "priority", operator: "gt", value: 3 },
              { kind: "condition", id: "c3", property: "title", operator: "contains", value: "fire" }
            ]
          },
          { kind: "condition", id: "c4", property: "title", operator: "exists" }
        ]
      }
    })
    expect(saved.steps).toEqual([{ name: "read it", stepType: "tool", config: { capability: "node.get", input: { nodeId: "{{trigger.nodeId}}" } } }])

    // opened again, the settings show what was saved
    await page.reload()
    await page.getByRole("heading", { level: 1, name: "Urgent open tickets" }).waitFor()
    expect(await page.getByLabel("Entity type").inputValue()).toBe("Ticket")
    expect(await page.getByLabel("How group g2 combines").inputValue()).toBe("or")
    expect(await page.getByLabel("Value of condition c2").inputValue()).toBe("3")
    expect(await page.getByRole("group", { name: "Values of condition c1" }).getByLabel("pending").isChecked()).toBe(true)
    expect(await page.getByRole("group", { name: "Values of condition c1" }).getByLabel("closed").isChecked()).toBe(false)
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("answers a run's human_input step from the run's deep link (as its notice links to it)", async () => {
    const asOwner = await asPerson(node, owner)
    const { automationId, runId } = await runWaitingOnPerson(asOwner)

    const { page, errors } = await openAs(`/automations/${automationId}/runs/${runId}`)
    const timeline = page.getByRole("table", { name: "Step timeline" })
    const answer = page.getByLabel("Your answer to 'approve'")
    await answer.waitFor()
    expect(await timeline.getByRole("row").nth(1).textContent()).toContain("Waiting for a person")
    expect(await timeline.textContent()).toContain("Go ahead?Asked of you")
    await answer.fill("yes, go")
    await page.getByRole("button", { name: "Respond" }).click()

    const pingRow = timeline.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /ping/ }) })
    await expect.poll(() => pingRow.textContent(), { timeout: 15_000 }).toContain("Succeeded")
    expect(await timeline.getByRole("row").nth(1).textContent()).toMatch(/^1\. approve \(human_input\)1Succeeded/)
    // the runs list refreshes on its own after the timeline: the run's row follows
    await expect.poll(() => page.getByRole("region", { name: "Runs" }).getByRole("row").nth(1).textContent(), { timeout: 15_000 }).toContain("Succeeded")
    expect(ok(await asOwner("automation.get_run", { runId }))).toMatchObject({ status: "succeeded", steps: [expect.objectContaining({ name: "approve", output: expect.objectContaining({ response: "yes, go" }) }), expect.anything()] })
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("approves, from the run's page, a call its step parked for the approval of the person it acts for", async () => {
    const asOwner = await asPerson(node, owner)
    const hire = { name: "hire", stepType: "tool", config: { capability: "agent.create", input: { slug: "hired-in-app", name: "Hired in the app" } } }
    const { automationId } = ok(await asOwner("automation.create", { name: "Hire once approved", trigger: { type: "api" }, steps: [hire], enabled: true }))
    const { runId } = ok(await asOwner("automation.trigger", { automationId }))

    const { page, errors } = await openAs(`/automations/${automationId}/runs/${runId}`)
    const timeline = page.getByRole("table", { name: "Step timeline" })
    const approve = page.getByRole("button", { name: "Approve" })
    await approve.waitFor()
    expect(await timeline.textContent()).toContain("Waits for approval to call agent.create")
    expect(await timeline.textContent()).toContain("Asked of you")
    await approve.click()

    await expect.poll(() => timeline.getByRole("row").nth(1).textContent(), { timeout: 15_000 }).toMatch(/^1\. hire \(tool\)1Succeeded/)
    expect(ok(await asOwner("agent.get", { slug: "hired-in-app" }))).toMatchObject({ slug: "hired-in-app" })
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("reorders steps from the keyboard and shows the server's refusal in words", async () => {
    const { page, errors } = await openAs("/automations/new")
    await page.getByLabel("Name", { exact: true }).fill("Two steps")
    await page.getByRole("radio", { name: "An API call" }).check()
    expect(await page.getByText("automation/trigger").isVisible()).toBe(true)

    await page.getByLabel("New step's type").selectOption("tool")
    await page.getByRole("button", { name: "Add step" }).click()
    await page.getByLabel("Name (step 1)").fill("first")
    await page.getByLabel("Capability (step 1)").fill("no.such_thing")
    await page.getByLabel("New step's type").selectOption("human_input")
    await page.getByRole("button", { name: "Add step" }).click()
    // a new step's name takes the focus
    expect(await page.getByLabel("Name (step 2)").evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true)
    await page.keyboard.type("-ask")
    expect(await page.getByLabel("Name (step 2)").inputValue()).toBe("step 2-ask")
    await page.getByLabel("Question (step 2)").fill("Go ahead?")
    // the assignee is one of the workspace's people, by name and email, "Me" first
    const assignee = page.getByLabel("Assignee (step 2)")
    await expect.poll(() => assignee.locator("option").allTextContents()).toEqual([
      `Me (automator, ${owner.email})`,
      `Owner (${node.bootstrap.ownerEmail})`,
      `reviewer (${reviewer.email})`,
      "The automation's owner"
    ])
    await assignee.selectOption({ label: `reviewer (${reviewer.email})` })

    // moved up with the keyboard: the focus stays with the step that moved
    await page.getByRole("button", { name: "Move step 2 up" }).focus()
    await page.keyboard.press("Enter")
    expect(await page.getByLabel("Name (step 1)").inputValue()).toBe("step 2-ask")
    expect(await page.getByLabel("Name (step 2)").inputValue()).toBe("first")
    expect(await page.getByRole("button", { name: "Move step 1 down" }).evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true)

    await page.getByRole("button", { name: "Create automation" }).click()
    const refusal = page.getByRole("alert")
    await expect.poll(() => refusal.textContent()).toContain("Not saved: step 'first': no capability no.such_thing may run in a playbook (unknown_capability)")
    expect((await automationsOf()).some((a) => a.name === "Two steps")).toBe(false)

    // JSON that does not parse is said before anything is sent
    await page.getByLabel("Capability (step 2)").fill("system.ping")
    await page.getByLabel("Input as JSON (step 2)").fill("{not json")
    await page.getByRole("button", { name: "Create automation" }).click()
    await expect.poll(() => refusal.textContent()).toContain("Step 'first': its input is not JSON")

    await page.getByLabel("Input as JSON (step 2)").fill("")
    await page.getByRole("button", { name: "Create automation" }).click()
    await page.getByRole("heading", { level: 1, name: "Two steps" }).waitFor()
    const saved = (await automationsOf()).find((a) => a.name === "Two steps")
    expect(saved.steps.map((s: any) => [s.name, s.stepType])).toEqual([["step 2-ask", "human_input"], ["first", "tool"]])
    expect(saved.steps[0].config).toMatchObject({ prompt: "Go ahead?", assignee: reviewer.userId })
    expect(errors).toEqual([])
    await page.context().close()
  })

  it("falls back to typing the assignee's user id when the workspace's people cannot be loaded, and says why", async () => {
    // the workspace's people answer 503 (as a node that cannot reach its read models would)
    const { page, errors } = await openAs("/automations/new", (page) =>
      page.route("**/workspace/members/list", (route) =>
        route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ error: { code: "unavailable", message: "the directory is down" } }) })
      )
    )
    await page.getByLabel("New step's type").selectOption("human_input")
    await page.getByRole("button", { name: "Add step" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("the workspace's people could not be loaded: the directory is down")
    const assignee = page.getByRole("textbox", { name: "Assignee (step 1)" })
    await page.getByRole("button", { name: "Assign step 1 to me" }).click()
    expect(await assignee.inputValue()).toBe(owner.userId)
    expect(errors.filter((e) => !/status of 503/.test(e))).toEqual([])
    await page.context().close()
  })
})
