/**
 * Billing against a real node (real Postgres): the operator grants credits and suspends through
 * the function `svc billing` runs, the Owner and a workspace's Admin set caps and budgets through
 * the capabilities over HTTP, metering charges turns through the node's actor host, and each
 * refusal of `checkAssistantSpend` (and `checkModelKeyLimit`) is reached from the read models, in
 * the spec's order. Last, the real `svc billing` command line, with the node stopped (without
 * Kafka the command line decides itself).
 */
import { Cause, Effect, Either, Runtime } from "effect"
import postgres from "postgres"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { describeFailure } from "../../gateway/errors.ts"
import { MAX_BALANCE } from "../../actors/billing/errors.ts"
import type { PaidBy } from "../../actors/billing/events.ts"
import { chargeTurn, Charges, checkAssistantSpend, checkModelKeyLimit } from "../../src/billing/TurnCharges.ts"
import { grantCredits, setBillingSuspended } from "../../src/billing/BillingOperator.ts"
import type { Db } from "../../streams/Db.ts"
import type { ActorHost } from "../../streams/ActorHost.ts"
import { addPerson, bootstrapPlace, callWithCookie, signIn } from "../support/people.ts"
import { runCli } from "../support/cli.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

let node: TestNode
let run: <A, E>(effect: Effect.Effect<A, E, Db | ActorHost | Charges>) => Promise<A>
let orgId: string
let workspaceId: string
const cookies = { owner: "", admin: "", member: "" }

const NEXT_MONTH = () => {
  const now = new Date()
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 1))
}

/** A capability as one of the people, over HTTP. */
const as = (who: keyof typeof cookies, capability: string, input: unknown) =>
  callWithCookie(node.baseUrl, cookies[who], `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/${capability.replaceAll(".", "/")}`, input)

const billing = async () => {
  const reply = await as("owner", "org.billing.get", {})
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

/** The refusal of a check, as its tag and what the gateway answers for it; "ok" when it passed. */
const outcome = async (effect: Effect.Effect<void, { readonly _tag: string }, Db | ActorHost>) => {
  const result = await run(Effect.either(effect))
  if (Either.isRight(result)) return "ok"
  const { status, code } = describeFailure(Cause.fail(result.left))
  return `${result.left._tag} ${status} ${code}`
}

const spend = (paidBy: PaidBy, now = new Date()) => outcome(checkAssistantSpend({ orgId, workspaceId, paidBy, now }))

const charge = (runId: string, totalTokens: number, paidBy: PaidBy) =>
  run(chargeTurn({ orgId, workspaceId, runId, usage: { totalTokens }, paidBy, meta: { commandId: "replaced", at: new Date().toISOString(), actor: "system" } }))

beforeAll(async () => {
  node = await startTestNode()
  const runPromise = Runtime.runPromise(node.runtime as Runtime.Runtime<Db | ActorHost | Charges>)
  // as a request of this node would: its reads see what the node acknowledged before
  run = (effect) => node.host.awaitProjected(node.host.unprojected(), 10_000).then(() => runPromise(effect))
  ;({ orgId, workspaceId } = await bootstrapPlace(node))
  cookies.owner = (await signIn(node.baseUrl, await addPerson(node, "owner", { org: "owner" }))).cookie
  cookies.admin = (await signIn(node.baseUrl, await addPerson(node, "admin", { org: "member", workspace: "admin" }))).cookie
  cookies.member = (await signIn(node.baseUrl, await addPerson(node, "member", { org: "member", workspace: "member" }))).cookie
})

let stopped = false

afterAll(async () => {
  if (!stopped) await node?.stop()
})


const cli = (args: ReadonlyArray<string>) => runCli(node, args)

describe("billing", () => {
  it("a new organization is unmetered and uncapped: every check passes", async () => {
    expect(await spend("operator")).toBe("ok")
    expect(await spend("organization")).toBe("ok")
    expect(await outcome(checkModelKeyLimit({ orgId, now: new Date() }))).toBe("ok")
    expect(await billing()).toMatchObject({
      credits: null,
      suspended: false,
      assistantMonthlyCap: null,
      modelKeyDailyLimit: null,
      assistantSpentThisMonth: 0,
      modelKeySpentToday: 0,
      workspaces: [{ workspaceId, slug: node.bootstrap.workspaceSlug, monthlyBudget: null, spentThisMonth: 0 }]
    })
  })

  it("the operator's grant turns metering on; an unknown organization or a bad amount is refused", async () => {
    expect(await run(grantCredits(node.bootstrap.orgSlug, 1000))).toEqual({ orgId, credits: 1000, suspended: false })
    expect((await billing()).credits).toBe(1000)
    const refusal = async (effect: Effect.Effect<unknown, unknown, Db | ActorHost>) => {
      const result = await run(Effect.either(effect))
      return Either.isLeft(result) ? (result.left as { reason?: string }).reason : "granted"
    }
    expect(await refusal(grantCredits("no-such-org", 10))).toBe("organization_not_found")
    expect(await refusal(grantCredits(node.bootstrap.orgSlug, 0))).toBe("invalid_amount")
    expect(await refusal(grantCredits(node.bootstrap.orgSlug, 1.5))).toBe("invalid_amount")
    const tooMuch = await run(Effect.either(grantCredits(node.bootstrap.orgSlug, MAX_BALANCE)))
    expect(Either.isLeft(tooMuch) && tooMuch.left._tag).toBe("CreditsLimitExceeded")
  })

  it("a charge moves the balance and the month's spend, once per run", async () => {
    await charge("tse_run1", 300, "operator")
    await charge("tse_run1", 300, "operator")
    expect(await billing()).toMatchObject({ credits: 700, assistantSpentThisMonth: 300, modelKeySpentToday: 0 })
    const [row] = await node.db.sql`select credits, assistant_spent from ${node.db.table("billing_accounts")} where org_id = ${orgId}`
    expect(row).toEqual({ credits: 700, assistant_spent: 300 })
  })

  it("the Owner sets caps; a workspace's Admin sets its budget; others may not", async () => {
    expect((await as("member", "org.billing.set_caps", { assistantMonthlyCap: 1 })).status).toBe(403)
    expect((await as("admin", "org.billing.set_caps", { assistantMonthlyCap: 1 })).status).toBe(403)
    expect((await as("member", "org.billing.get", {})).status).toBe(403)
    expect((await as("member", "workspace.budget.set", { monthlyBudget: 1 })).status).toBe(403)
    const caps = await as("owner", "org.billing.set_caps", { assistantMonthlyCap: 2000, modelKeyDailyLimit: 100 })
    expect(caps).toEqual({ status: 200, body: { assistantMonthlyCap: 2000, modelKeyDailyLimit: 100 } })
    const budget = await as("admin", "workspace.budget.set", { monthlyBudget: 500 })
    expect(budget).toEqual({ status: 200, body: { workspaceId, monthlyBudget: 500 } })
    expect((await as("owner", "org.billing.set_caps", { assistantMonthlyCap: -1 })).status).toBe(400)
    expect(await spend("operator")).toBe("ok")
  })

  it("the organization's key stops at its daily limit, the workspace at its budget", async () => {
    await charge("tse_run2", 250, "organization")
    expect(await billing()).toMatchObject({
      credits: 700,
      assistantSpentThisMonth: 550,
      modelKeySpentToday: 250,
      workspaces: [{ workspaceId, monthlyBudget: 500, spentThisMonth: 550 }]
    })
    expect(await outcome(checkModelKeyLimit({ orgId, now: new Date() }))).toBe("ModelKeyLimitReached 402 assistant_model_key_limit")
    expect(await spend("organization")).toBe("WorkspaceBudgetSpent 402 workspace_budget_spent")
  })

  it("the month's cap comes before the workspace's budget", async () => {
    expect((await as("owner", "org.billing.set_caps", { assistantMonthlyCap: 500 })).body).toEqual({ assistantMonthlyCap: 500, modelKeyDailyLimit: 100 })
    expect(await spend("organization")).toBe("AssistantSpendCap 402 assistant_spend_cap")
  })

  it("credits used up come before the cap, for operator-paid turns only", async () => {
    await charge("tse_run3", 800, "operator")
    expect((await billing()).credits).toBe(-100)
    expect(await spend("operator")).toBe("InsufficientCredits 402 insufficient_credits")
    expect(await spend("organization")).toBe("AssistantSpendCap 402 assistant_spend_cap")
  })

  it("suspension comes first, and resuming lifts only it", async () => {
    expect(await run(setBillingSuspended(node.bootstrap.orgSlug, true))).toEqual({ orgId, credits: -100, suspended: true })
    expect(await spend("organization")).toBe("BillingSuspended 402 billing_suspended")
    expect(await spend("operator")).toBe("BillingSuspended 402 billing_suspended")
    expect((await billing()).suspended).toBe(true)
    await run(setBillingSuspended(node.bootstrap.orgSlug, false))
    expect(await spend("operator")).toBe("InsufficientCredits 402 insufficient_credits")
  })

  it("spend of an earlier month or day counts as zero; credits do not roll over", async () => {
    expect(await spend("organization", NEXT_MONTH())).toBe("ok")
    expect(await outcome(checkModelKeyLimit({ orgId, now: NEXT_MONTH() }))).toBe("ok")
    expect(await spend("operator", NEXT_MONTH())).toBe("InsufficientCredits 402 insufficient_credits")
    await run(grantCredits(node.bootstrap.orgSlug, 100_000))
    expect(await spend("operator", NEXT_MONTH())).toBe("ok")
  })

  // four CLI processes one after the other, each starting on the node's data: more than the default bound
  it("the real `svc billing` command line grants, suspends and resumes", async () => {
    const slug = node.bootstrap.orgSlug
    await node.stop()
    stopped = true
    expect(await cli(["billing", "grant", slug, "many"])).toMatchObject({ code: 1, stderr: expect.stringContaining("usage: svc") })
    expect(await cli(["billing", "grant", slug, "50"])).toMatchObject({ code: 0, stdout: `organization ${slug}: credits 99950, active\n` })
    expect(await cli(["billing", "suspend", slug])).toMatchObject({ code: 0, stdout: `organization ${slug}: credits 99950, suspended\n` })
    expect(await cli(["billing", "resume", slug])).toMatchObject({ code: 0, stdout: `organization ${slug}: credits 99950, active\n` })
    const sql = postgres(node.config.databaseUrl!, { onnotice: () => {} })
    try {
      const [row] = await sql`select credits::int, suspended from ${sql(`${node.config.dbSchema}.billing_accounts`)} where org_id = ${orgId}`
      expect(row).toEqual({ credits: 99950, suspended: false })
    } finally {
      await sql.end()
    }
  }, 180_000)
})
