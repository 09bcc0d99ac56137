/**
 * In-app notices: a `human_input` step's assignee finds it in `notifications.list` (their own, in the
 * organization), open until someone answers; a key cannot read a person's notices.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addPerson, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, expectError } from "./client.ts"

let node: TestNode
let owner: Person
let ownerCookie: string
let memberCookie: string

beforeAll(async () => {
  node = await startTestNode()
  owner = await addPerson(node, "owner", { org: "owner" })
  ownerCookie = (await signIn(node.baseUrl, owner)).cookie
  memberCookie = (await signIn(node.baseUrl, await addPerson(node, "member", { org: "member", workspace: "member" }))).cookie
}, 60_000)
afterAll(async () => node?.stop())

const place = () => `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
const as = (cookie: string, capability: string, input: unknown) => callWithCookie(node.baseUrl, cookie, `${place()}/${capability.replaceAll(".", "/")}`, input)

const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean) => {
  for (let i = 0; i < 100; i++) {
    const value = await read()
    if (done(value)) return value
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("the condition never held")
}

describe("notifications.list", () => {
  it("shows a waiting step's notice to its assignee until someone answers", async () => {
    const automation = await as(ownerCookie, "automation.create", {
      name: "ask the owner",
      trigger: { type: "api" },
      steps: [{ name: "approve", stepType: "human_input", config: { prompt: "Ship {{trigger.payload.release}}?" } }],
      enabled: true
    })
    expect(automation.status).toBe(200)
    const fired = await as(ownerCookie, "automation.trigger", { automationId: automation.body.automationId, payload: { release: "v2" } })
    expect(fired.status).toBe(200)

    const open = await until(
      () => as(ownerCookie, "notifications.list", {}),
      (reply) => reply.body.notifications?.some((n: any) => n.subject.runId === fired.body.runId)
    )
    const notice = open.body.notifications.find((n: any) => n.subject.runId === fired.body.runId)
    expect(notice).toMatchObject({
      kind: "run",
      body: "Ship v2?",
      resolvedAt: null,
      subject: { automationId: automation.body.automationId, index: 0 },
      deepLink: `/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/automations/${automation.body.automationId}/runs/${fired.body.runId}`
    })
    // addressed to the owner: another member of the workspace sees none of it
    expect((await as(memberCookie, "notifications.list", {})).body.notifications).toEqual([])

    // any person of the workspace may answer
    expect((await as(memberCookie, "automation.respond", { runId: fired.body.runId, response: { ship: true } })).status).toBe(200)
    const run = await until(
      () => as(ownerCookie, "automation.get_run", { runId: fired.body.runId }),
      (reply) => reply.body.status === "succeeded"
    )
    expect(run.body.steps.at(-1).output).toMatchObject({ response: { ship: true } })
    const after = await until(
      () => as(ownerCookie, "notifications.list", { all: true }),
      (reply) => reply.body.notifications.some((n: any) => n.subject.runId === fired.body.runId && n.resolvedAt !== null)
    )
    expect(after.status).toBe(200)
    expect((await as(ownerCookie, "notifications.list", {})).body.notifications.filter((n: any) => n.subject.runId === fired.body.runId)).toEqual([])
  })

  it("is a person's: a key is refused", async () => {
    expectError(await call(node, "notifications.list", {}), 403, "forbidden", "session_required")
  })
})
