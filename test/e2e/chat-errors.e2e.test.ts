/**
 * The chat turn's errors over real HTTP (spec 7.1, 7.2, with 2.2, 4.1, 5 and 8).
 *
 * Before the stream opens (7.1) every refusal is a JSON error `{error: {code, reason?, message}}`
 * (429: `{error: "rate_limited"}` and `Retry-After`), the same status and body on the ask route,
 * and it records nothing: no run, no conversation, no message. After the stream opened (7.2) a
 * failure is one `error` event `{type, message, code, reason?}` and then the named event `done`
 * with `[DONE]`, nothing after; the ask route answers the same code as a JSON error.
 *
 * Billing and model settings belong to an organization, so each row that changes them gets an
 * organization of its own (made through the actors, as bootstrap does); the kill switch and the
 * rate limit are node settings, so each gets a node of its own.
 */
import { Effect, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { CreateApiKey } from "../../actors/apikey/protocol.ts"
import { OPERATOR } from "../../actors/apikey/purposes.ts"
import { OrgActor } from "../../actors/org/actor.ts"
import { AddMember, CreateOrganization, CreateWorkspace, SetWorkspaceRole } from "../../actors/org/protocol.ts"
import { mintApiKey, newPublicId } from "../../src/identity/ApiKeyToken.ts"
import { grantCredits, setBillingSuspended } from "../../src/billing/BillingOperator.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import { type ChatOptions, chatUrl, type StreamedTurn, streamChat } from "../support/chat.ts"
import { addPerson, bootstrapPlace, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { expectError } from "./client.ts"

type Route = "chat/stream" | "assistant/ask"
const BOTH: ReadonlyArray<Route> = ["chat/stream", "assistant/ask"]
const STREAM_ONLY: ReadonlyArray<Route> = ["chat/stream"]

/** A node with a chat rate limit no test here reaches (the default, 120 a minute, would be). */
const startNode = (assistant: Partial<ReturnType<typeof loadConfig>["assistant"]> = {}) =>
  startTestNode({ assistant: { ...loadConfig({}).assistant, chatRateLimitPerMinute: 100_000, ...assistant } })

let node: TestNode

const meta = () => ({ commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })

const runOn = (target: TestNode) => <A, E>(effect: Effect.Effect<A, E, any>): Promise<A> =>
  Runtime.runPromise(target.runtime)(effect as Effect.Effect<A, E, never>)

// ---------------------------------------------------------------------------------------------
// places, people and keys

/** An organization and workspace a key acts in, and the chat options that name them. */
interface Place {
  readonly orgId: string
  readonly orgSlug: string
  readonly workspaceId: string
  readonly workspaceSlug: string
  /** A workspace key of this workspace. */
  readonly key: string
  /** What `streamChat` and `post` need to call as this workspace's key. */
  readonly chat: ChatOptions
}

/** Mints a workspace (or organization) key straight through the API key actor. */
const mintKey = async (
  target: TestNode,
  fields: { orgId: string; workspaceId: string | null; createdBy: string; expiresAt?: string | null }
): Promise<string> => {
  const token = mintApiKey()
  const keyId = newPublicId("aky")
  await runOn(target)(target.host.send(ApiKeyActor, keyId, new CreateApiKey({
    keyId,
    orgId: fields.orgId,
    workspaceId: fields.workspaceId,
    createdBy: fields.createdBy,
    name: "chat errors test key",
    lookupId: token.lookupId,
    secretHash: token.secretHash,
    scopes: {},
    expiresAt: fields.expiresAt ?? null,
    customRole: null,
    machineId: null,
    supersedes: null
  }), meta()))
  return token.raw
}

const placeOf = (fields: Omit<Place, "chat">): Place => ({
  ...fields,
  chat: { key: fields.key, orgSlug: fields.orgSlug, workspaceSlug: fields.workspaceSlug }
})

/** A second workspace in the bootstrap organization, with a key made by a member of it. */
const otherWorkspace = async (target: TestNode, slug: string): Promise<Place> => {
  const [org] = await target.db.sql`select org_id from ${target.db.table("organizations")} where slug = ${target.bootstrap.orgSlug}`
  const orgId = org.org_id as string
  const workspaceId = `wsp_${slug}_${randomUUID().slice(0, 8)}`
  await runOn(target)(target.host.send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId, slug, name: slug }), meta()))
  const member = await addPerson(target, `${slug}-member`, { org: "member" })
  await runOn(target)(target.host.send(OrgActor, orgId, new SetWorkspaceRole({ orgId, workspaceId, userId: member.userId, role: "member" }), meta()))
  const key = await mintKey(target, { orgId, workspaceId, createdBy: member.userId })
  return placeOf({ orgId, orgSlug: target.bootstrap.orgSlug, workspaceId, workspaceSlug: slug, key })
}

/** A new organization of its own: workspace `main`, a signed-in Owner, and a workspace key. */
interface Organization extends Place {
  readonly owner: Person
  /** A capability as the organization's Owner (signed in), over HTTP. */
  readonly asOwner: (capability: string, input: unknown) => Promise<{ status: number; body: any }>
}

const newOrganization = async (name: string): Promise<Organization> => {
  const suffix = randomUUID().slice(0, 8)
  const orgId = `org_${name}_${suffix}`
  const orgSlug = `${name}-${suffix}`
  const workspaceId = `wsp_${name}_${suffix}`
  const workspaceSlug = "main"
  const owner = await addPerson(node, `${name}-owner`)
  await runOn(node)(
    Effect.gen(function* () {
      yield* node.host.send(OrgActor, orgId, new CreateOrganization({ orgId, slug: orgSlug, name }), meta())
      yield* node.host.send(OrgActor, orgId, new AddMember({ orgId, userId: owner.userId, role: "owner" }), meta())
      yield* node.host.send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId, slug: workspaceSlug, name: "Main" }), meta())
      yield* node.host.send(OrgActor, orgId, new SetWorkspaceRole({ orgId, workspaceId, userId: owner.userId, role: "admin" }), meta())
    })
  )
  const key = await mintKey(node, { orgId, workspaceId, createdBy: owner.userId })
  const { cookie } = await signIn(node.baseUrl, owner)
  const asOwner = async (capability: string, input: unknown) => {
    const reply = await callWithCookie(node.baseUrl, cookie, `/v1/${orgSlug}/${workspaceSlug}/${capability.replaceAll(".", "/")}`, input)
    expect(reply.status, `${capability}: ${JSON.stringify(reply.body)}`).toBe(200)
    return reply
  }
  return { ...placeOf({ orgId, orgSlug, workspaceId, workspaceSlug, key }), owner, asOwner }
}

// ---------------------------------------------------------------------------------------------
// requests and what they must answer

interface RawReply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly body: any
}

/** POST to a turn route and read the whole answer as text (a refusal's body is JSON). */
const post = async (target: TestNode, route: Route, body: unknown, options: ChatOptions = {}): Promise<RawReply> => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  const key = options.key === undefined ? target.bootstrap.workspaceKey : options.key
  if (options.cookie !== undefined) headers.cookie = options.cookie
  else if (key !== null) headers.authorization = `Bearer ${key}`
  const response = await fetch(chatUrl(target, route, options), { method: "POST", headers, body: options.rawBody ?? JSON.stringify(body) })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, text, body: parsed }
}

/** Runs, conversations and messages recorded on a node: what a refused request must not change. */
const recorded = async (target: TestNode) => {
  const count = async (table: string) => {
    const [row] = await target.db.sql`select count(*)::int as count from ${target.db.table(table)}`
    return row.count as number
  }
  return { runs: await count("runs"), conversations: await count("conversations"), messages: await count("messages") }
}

type Refusal = readonly [status: number, code: string, reason?: string]

/**
 * Sends the request to each route and asserts the JSON refusal of 7.1 on each: status, code,
 * reason, a message, content type JSON, the same body on every route, and nothing recorded.
 */
const expectRefused = async (
  body: unknown,
  [status, code, reason]: Refusal,
  options: ChatOptions & { readonly target?: TestNode; readonly routes?: ReadonlyArray<Route> } = {}
): Promise<RawReply> => {
  const target = options.target ?? node
  const before = await recorded(target)
  const replies: Array<RawReply> = []
  for (const route of options.routes ?? BOTH) {
    const reply = await post(target, route, body, options)
    expect(reply.headers.get("content-type"), `${route}: ${reply.text.slice(0, 300)}`).toBe("application/json")
    expectError(reply, status, code, reason)
    replies.push(reply)
  }
  for (const reply of replies.slice(1)) expect(reply.body).toEqual(replies[0].body)
  expect(await recorded(target)).toEqual(before)
  return replies[0]
}

/** 7.2: the stream opened; one `error` event with this code (and reason), then `done` `[DONE]`, nothing after. */
const expectStreamFailure = (turn: StreamedTurn, code: string, reason?: string, options: { readonly runStarted: boolean } = { runStarted: true }) => {
  expect(turn.status, JSON.stringify(turn.body)).toBe(200)
  expect(turn.headers.get("content-type")).toBe("text/event-stream")
  const error = { type: "error", message: expect.stringMatching(/\S/), code, ...(reason === undefined ? {} : { reason }) }
  expect(turn.events.filter((e) => e.type === "error")).toEqual([error])
  // every event has its id, 1..n: the error is the last data event, done comes after it
  expect(turn.sequence.slice(-2)).toEqual([
    { kind: "data", data: error, id: String(turn.events.length) },
    { kind: "named", event: "done", data: "[DONE]", id: String(turn.events.length + 1) }
  ])
  expect(turn.done).toBe("[DONE]")
  if (options.runStarted) expect(turn.events[0]).toEqual({ type: "run", runId: expect.stringMatching(/^tse_/) })
  else expect(turn.events).toEqual([error])
}

/** The ask route's answer to a failure after the turn started: a JSON error with the 7.2 code. */
const expectAskFailure = (reply: RawReply, status: number, code: string, reason?: string) => {
  expect(reply.headers.get("content-type")).toBe("application/json")
  expectError(reply, status, code, reason)
}

/** A turn that must succeed. */
const chat = async (body: unknown, options: ChatOptions = {}) => {
  const turn = await streamChat(node, body, options)
  expect(turn.status, JSON.stringify(turn.body)).toBe(200)
  expect(turn.done, JSON.stringify(turn.events.at(-1))).toMatchObject({ runId: expect.stringMatching(/^tse_/) })
  return turn.done
}

const runStatusOf = async (runId: string, options: ChatOptions = {}) => (await post(node, "assistant/reply" as Route, { runId }, options)).body.runStatus

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])

/** Uploads one file to a workspace; its `gen_` id. */
const upload = async (place: Pick<Place, "orgSlug" | "workspaceSlug" | "key">, name: string, type: string, bytes: Uint8Array) => {
  const form = new FormData()
  form.append("file", new Blob([bytes], { type }), name)
  const response = await fetch(`${node.baseUrl}/v1/${place.orgSlug}/${place.workspaceSlug}/assistant/attachments/upload`, {
    method: "POST",
    headers: { authorization: `Bearer ${place.key}` },
    body: form
  })
  const body: any = await response.json()
  expect(response.status, JSON.stringify(body)).toBe(200)
  return body.files[0].id as string
}

// ---------------------------------------------------------------------------------------------

let main: Place
let other: Place

beforeAll(async () => {
  node = await startNode()
  const [row] = await node.db.sql`
    select o.org_id, w.workspace_id from ${node.db.table("organizations")} o join ${node.db.table("workspaces")} w using (org_id)
    where o.slug = ${node.bootstrap.orgSlug} and w.slug = ${node.bootstrap.workspaceSlug}`
  main = placeOf({
    orgId: row.org_id,
    orgSlug: node.bootstrap.orgSlug,
    workspaceId: row.workspace_id,
    workspaceSlug: node.bootstrap.workspaceSlug,
    key: node.bootstrap.workspaceKey
  })
  other = await otherWorkspace(node, "other")
})

afterAll(async () => {
  await node?.stop()
})

describe("7.1 400 bad_request: invalid JSON or a field that breaks its rule (2.2, 8)", () => {
  const text = (n: number) => "x".repeat(n)
  const genIds = (n: number) => Array.from({ length: n }, (_, i) => `gen_${i.toString(16).padStart(32, "0")}`)
  const rows: ReadonlyArray<{ readonly name: string; readonly body?: unknown; readonly raw?: string; readonly reason: string; readonly routes?: ReadonlyArray<Route> }> = [
    { name: "a body that is not JSON", raw: '{"content": "hello"', reason: "invalid_json" },
    { name: "no content", body: {}, reason: "invalid_input" },
    { name: "empty content", body: { content: "" }, reason: "invalid_input" },
    { name: "content that is not a string", body: { content: 42 }, reason: "invalid_input" },
    { name: "content of 32769 characters", body: { content: text(32769) }, reason: "invalid_input" },
    { name: "content of 32769 characters outside the BMP", body: { content: "😀".repeat(32769) }, reason: "invalid_input" },
    { name: "an unknown field", body: { content: "hello", colour: "teal" }, reason: "invalid_input" },
    { name: "goal.maxRounds 0", body: { content: "hello", goal: { statement: "done", maxRounds: 0 } }, reason: "invalid_input" },
    { name: "goal.maxRounds 5", body: { content: "hello", goal: { statement: "done", maxRounds: 5 } }, reason: "invalid_input" },
    { name: "goal.maxRounds 2.5", body: { content: "hello", goal: { statement: "done", maxRounds: 2.5 } }, reason: "invalid_input" },
    { name: "goal.statement of 2001 characters", body: { content: "hello", goal: { statement: text(2001) } }, reason: "invalid_input" },
    { name: "11 attachments", body: { content: "hello", attachments: genIds(11) }, reason: "invalid_input" },
    { name: "a turnId that is not a UUID", body: { content: "hello", turnId: "turn-1" }, reason: "invalid_input" },
    // the ask route refuses the model override fields before the schema sees them (next row)
    { name: "an effort not in the list", body: { content: "hello", effort: "extreme" }, reason: "invalid_input", routes: STREAM_ONLY },
    { name: "a model override on the ask route", body: { content: "hello", tier: "fast" }, reason: "model_override_not_allowed", routes: ["assistant/ask"] }
  ]

  it.each(rows)("$name", async ({ body, raw, reason, routes }) => {
    await expectRefused(body, [400, "bad_request", reason], { rawBody: raw, routes })
  })

  it("the limits themselves are accepted: 32768 characters (code points), a statement of 2000, maxRounds 1 and 4", async () => {
    const longest = await chat({ content: text(32768) })
    expect(longest.reply).toBe(`You said: ${text(32768)}`)
    const emoji = await post(node, "assistant/ask", { content: "😀".repeat(32768) })
    expect(emoji.status, emoji.text.slice(0, 300)).toBe(200)
    await chat({ content: "/goal-after 1", goal: { statement: text(2000), maxRounds: 1 } })
    await chat({ content: "/goal-after 1", goal: { statement: "done", maxRounds: 4 } })
  })
})

describe("7.1 400 attachment_refused: an attached file breaks a rule (reason names it)", () => {
  it("an unknown gen_ id is attachment_not_found", async () => {
    await expectRefused({ content: "read this", attachments: [`gen_${"0".repeat(32)}`] }, [400, "attachment_refused", "attachment_not_found"])
  })

  it("a file of another workspace is attachment_not_found, as if there were none", async () => {
    const theirs = await upload(other, "notes.txt", "text/plain", Buffer.from("their notes\n"))
    await expectRefused({ content: "read this", attachments: [theirs] }, [400, "attachment_refused", "attachment_not_found"])
    // the same id is a good attachment in its own workspace
    await chat({ content: "read this", attachments: [theirs] }, other.chat)
  })
})

describe("7.1 401 unauthorized: credential missing, invalid or expired", () => {
  let revokedKey: string
  let expiredKey: string

  beforeAll(async () => {
    const keeper = await addPerson(node, "keeper", { org: "owner" })
    const { cookie } = await signIn(node.baseUrl, keeper)
    const path = (route: string) => `/v1/${main.orgSlug}/${main.workspaceSlug}/${route}`
    const created = await callWithCookie(node.baseUrl, cookie, path("create_api_key"), { name: "soon revoked" })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const revoked = await callWithCookie(node.baseUrl, cookie, path("api-keys/revoke"), { keyPublicId: created.body.publicId }, "DELETE")
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200)
    revokedKey = created.body.rawKey
    expiredKey = await mintKey(node, { orgId: main.orgId, workspaceId: main.workspaceId, createdBy: keeper.userId, expiresAt: new Date(Date.now() - 60_000).toISOString() })
  })

  const rows: ReadonlyArray<{ readonly name: string; readonly options: () => ChatOptions; readonly reason: string }> = [
    { name: "no credential", options: () => ({ key: null }), reason: "missing_credential" },
    { name: "a malformed credential", options: () => ({ key: "not-a-key" }), reason: "malformed_credential" },
    { name: "a malformed session cookie", options: () => ({ cookie: "svc_session=garbage" }), reason: "malformed_credential" },
    { name: "an unknown key", options: () => ({ key: mintApiKey().raw }), reason: "invalid_credential" },
    { name: "a revoked key", options: () => ({ key: revokedKey }), reason: "invalid_credential" },
    { name: "an expired key", options: () => ({ key: expiredKey }), reason: "expired_credential" }
  ]

  it.each(rows)("$name", async ({ options, reason }) => {
    await expectRefused({ content: "hello" }, [401, "unauthorized", reason], options())
  })
})

describe("7.1 403 forbidden: the caller may not ask", () => {
  it("no_principal: a key the operator issued resolves to no person", async () => {
    const key = await mintKey(node, { orgId: main.orgId, workspaceId: main.workspaceId, createdBy: OPERATOR })
    await expectRefused({ content: "hello" }, [403, "forbidden", "no_principal"], { key })
  })

  it("no_principal: a workspace key whose creator is not a member of the organization", async () => {
    const stranger = await addPerson(node, "stranger")
    const key = await mintKey(node, { orgId: main.orgId, workspaceId: main.workspaceId, createdBy: stranger.userId })
    await expectRefused({ content: "hello" }, [403, "forbidden", "no_principal"], { key })
  })

  it("key_scope_mismatch: the path names another workspace or another organization, and the message names both", async () => {
    const elsewhere = await newOrganization("elsewhere")
    const workspace = await expectRefused({ content: "hello" }, [403, "forbidden", "key_scope_mismatch"], { workspaceSlug: other.workspaceSlug })
    expect(workspace.body.error.message).toContain(`${main.orgSlug}/${other.workspaceSlug}`)
    expect(workspace.body.error.message).toContain(`${main.orgSlug}/${main.workspaceSlug}`)
    const organization = await expectRefused({ content: "hello" }, [403, "forbidden", "key_scope_mismatch"], { orgSlug: elsewhere.orgSlug })
    expect(organization.body.error.message).toContain(elsewhere.orgSlug)
    expect(organization.body.error.message).toContain(main.orgSlug)
  })

  // spec 5.3 and 5.6: asking needs organization Owner, workspace Admin or workspace Member
  const roleRows: ReadonlyArray<{ readonly name: string; readonly options: () => Promise<ChatOptions> }> = [
    { name: "an organization key (Org member)", options: async () => ({ key: node.bootstrap.orgKey }) },
    { name: "an Org member with no role in the workspace", options: async () => ({ cookie: (await signIn(node.baseUrl, await addPerson(node, "orgmember", { org: "member" }))).cookie }) },
    { name: "a workspace Viewer", options: async () => ({ cookie: (await signIn(node.baseUrl, await addPerson(node, "viewer", { org: "member", workspace: "viewer" }))).cookie }) }
  ]

  it.each(roleRows)("a role ask_assistant does not grant: $name", async ({ options }) => {
    await expectRefused({ content: "hello" }, [403, "forbidden"], await options())
  })

  describe("kill_switch: the operator stopped the assistant", () => {
    let stopped: TestNode
    beforeAll(async () => {
      stopped = await startNode({ killSwitch: true })
    })
    afterAll(async () => {
      await stopped?.stop()
    })

    it("refuses every turn on both routes", async () => {
      await expectRefused({ content: "hello" }, [403, "forbidden", "kill_switch"], { target: stopped })
      await expectRefused({ content: "hello", tier: "fast" }, [403, "forbidden", "kill_switch"], { target: stopped, routes: STREAM_ONLY })
    })
  })
})

describe("7.1 404 and 409: the model a turn would run on", () => {
  let org: Organization

  beforeAll(async () => {
    org = await newOrganization("models")
    await org.asOwner("org.model_key.set", { family: "openai", apiKey: "sk-test-0123456789abcdef", models: ["gpt-4o-mini"] })
    await org.asOwner("org.model_tier.set", { slug: "restricted", model: "openai:gpt-4o", sharedKey: false })
    await org.asOwner("org.model_tier.set", { slug: "claude", model: "anthropic:claude-sonnet-4-5", sharedKey: false })
    await org.asOwner("org.model_tier.set", { slug: "old", model: "offline:old", sharedKey: true, archived: true })
    await org.asOwner("org.model_tier.set", { slug: "empty", model: null, sharedKey: true })
  })

  const rows: ReadonlyArray<{ readonly name: string; readonly body: Record<string, unknown>; readonly refusal: Refusal }> = [
    { name: "a tier slug the organization does not have", body: { tier: "nope" }, refusal: [404, "not_found", "model_tier_not_found"] },
    { name: "a tier whose model the organization's key may not run", body: { tier: "restricted" }, refusal: [409, "conflict", "model_tier_key_cannot_serve"] },
    { name: "a tier of a family the organization holds no key for", body: { tier: "claude" }, refusal: [409, "conflict", "model_tier_key_cannot_serve"] },
    { name: "an archived tier", body: { tier: "old" }, refusal: [409, "conflict", "model_tier_archived"] },
    { name: "a tier with no model", body: { tier: "empty" }, refusal: [409, "conflict", "model_tier_unmapped"] },
    { name: "a model of no known family", body: { model: "mystery-1" }, refusal: [409, "conflict", "model_family_unknown"] }
  ]

  it.each(rows)("$name", async ({ body, refusal }) => {
    await expectRefused({ content: "hello", ...body }, refusal, { ...org.chat, routes: STREAM_ONLY })
  })

  it("model_tier_key_missing: the tier pays with the organization's own key and none is set; as the default tier, on both routes", async () => {
    const keyless = await newOrganization("keyless")
    await keyless.asOwner("org.model_tier.set", { slug: "own", model: "openai:gpt-4o", sharedKey: false })
    await expectRefused({ content: "hello", tier: "own" }, [409, "conflict", "model_tier_key_missing"], { ...keyless.chat, routes: STREAM_ONLY })
    await keyless.asOwner("org.model_tier.set", { slug: "own", model: "openai:gpt-4o", sharedKey: false, default: true })
    await expectRefused({ content: "hello" }, [409, "conflict", "model_tier_key_missing"], keyless.chat)
  })

  it("an unmapped default tier is refused on both routes", async () => {
    const unmapped = await newOrganization("unmapped")
    await unmapped.asOwner("org.model_tier.set", { slug: "later", model: null, sharedKey: true, default: true })
    await expectRefused({ content: "hello" }, [409, "conflict", "model_tier_unmapped"], unmapped.chat)
  })
})

/**
 * The organization's billing once a finished turn's charge shows: charging reacts to the turn's end,
 * off its path to `done`, so a limit can lag by that one charge (docs/decisions.md).
 */
const charged = async (org: { asOwner: (name: string, input: unknown) => Promise<{ body: any }> }, shows: (billing: any) => boolean) => {
  const deadline = Date.now() + 10_000
  for (;;) {
    const billing = (await org.asOwner("org.billing.get", {})).body
    if (shows(billing) || Date.now() > deadline) return billing
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("7.1 402: a billing or spend limit stops the turn", () => {
  it("insufficient_credits: the operator granted credits and a turn spent them (one credit per token)", async () => {
    const org = await newOrganization("credits")
    await runOn(node)(grantCredits(org.orgSlug, 1))
    await chat({ content: "spend the only credit" }, org.chat)
    expect((await charged(org, (billing) => billing.credits <= 0)).credits).toBeLessThanOrEqual(0)
    await expectRefused({ content: "one more" }, [402, "insufficient_credits"], org.chat)
    // only an operator-paid turn needs credits: a turn on the organization's own (offline) tier runs
    await org.asOwner("org.model_tier.set", { slug: "own", model: "offline:own", sharedKey: false })
    await chat({ content: "on our own tier", tier: "own" }, org.chat)
    await runOn(node)(grantCredits(org.orgSlug, 1_000_000))
    await chat({ content: "credits again" }, org.chat)
  })

  it("billing_suspended: the operator suspended the organization; resuming lets turns run", async () => {
    const org = await newOrganization("suspended")
    await runOn(node)(setBillingSuspended(org.orgSlug, true))
    await expectRefused({ content: "hello" }, [402, "billing_suspended"], org.chat)
    await runOn(node)(setBillingSuspended(org.orgSlug, false))
    await chat({ content: "hello" }, org.chat)
  })

  it("assistant_spend_cap: this month's assistant spend reached the organization's cap", async () => {
    const org = await newOrganization("capped")
    await org.asOwner("org.billing.set_caps", { assistantMonthlyCap: 1 })
    await chat({ content: "reach the cap" }, org.chat)
    expect((await charged(org, (billing) => billing.assistantSpentThisMonth >= 1)).assistantSpentThisMonth).toBeGreaterThanOrEqual(1)
    await expectRefused({ content: "one more" }, [402, "assistant_spend_cap"], org.chat)
    await org.asOwner("org.billing.set_caps", { assistantMonthlyCap: null })
    await chat({ content: "uncapped" }, org.chat)
  })

  it("workspace_budget_spent: this month's spend in the workspace reached its budget", async () => {
    const org = await newOrganization("budget")
    await org.asOwner("workspace.budget.set", { monthlyBudget: 1 })
    await chat({ content: "spend the budget" }, org.chat)
    await charged(org, (billing) => billing.assistantSpentThisMonth >= 1)
    await expectRefused({ content: "one more" }, [402, "workspace_budget_spent"], org.chat)
    await org.asOwner("workspace.budget.set", { monthlyBudget: null })
    await chat({ content: "no budget" }, org.chat)
  })
})

describe("7.1 429 rate_limited: the workspace sent too many chat requests, or a key too many turns", () => {
  let limited: TestNode
  beforeAll(async () => {
    limited = await startNode({ chatRateLimitPerMinute: 2, keyRateLimitPerMinute: 2 })
  })
  afterAll(async () => {
    await limited?.stop()
  })

  const expectRateLimited = async (options: ChatOptions) => {
    const before = await recorded(limited)
    for (const route of BOTH) {
      const refused = await post(limited, route, { content: "three" }, options)
      expect(refused.status).toBe(429)
      expect(refused.headers.get("content-type")).toBe("application/json")
      expect(refused.text).toBe('{"error":"rate_limited"}')
      expect(refused.headers.get("retry-after")).toMatch(/^[1-9]\d*$/)
    }
    expect(await recorded(limited)).toEqual(before)
  }

  it("a person: the third request in a minute is 429 {error: rate_limited} with Retry-After, on both routes, recording nothing; a key of the workspace is not held back", async () => {
    const person = await addPerson(limited, "chatty", { org: "member", workspace: "member" })
    const session = { cookie: (await signIn(limited.baseUrl, person)).cookie }
    const first = await streamChat(limited, { content: "one" }, session)
    expect(first.done).toMatchObject({ runId: expect.stringMatching(/^tse_/) })
    const second = await post(limited, "assistant/ask", { content: "two" }, session)
    expect(second.status, second.text).toBe(200)
    await expectRateLimited(session)
    // a key's turns take from its own budget (issue 24), not the workspace's chat requests
    const { orgId, workspaceId } = await bootstrapPlace(limited)
    const key = await mintKey(limited, { orgId, workspaceId, createdBy: person.userId })
    const keys = await streamChat(limited, { content: "mine" }, { key })
    expect(keys.done).toMatchObject({ runId: expect.stringMatching(/^tse_/) })
  })

  it("a key: its third turn in a minute is refused the same way; another key, of another workspace, is not held back", async () => {
    const { orgId, workspaceId } = await bootstrapPlace(limited)
    const person = await addPerson(limited, "integrator", { org: "member", workspace: "member" })
    const key = await mintKey(limited, { orgId, workspaceId, createdBy: person.userId })
    expect((await streamChat(limited, { content: "one" }, { key })).done).toMatchObject({ runId: expect.stringMatching(/^tse_/) })
    const second = await post(limited, "assistant/ask", { content: "two" }, { key })
    expect(second.status, second.text).toBe(200)
    await expectRateLimited({ key })
    const elsewhere = await otherWorkspace(limited, "elsewhere")
    const theirs = await streamChat(limited, { content: "mine" }, elsewhere.chat)
    expect(theirs.done).toMatchObject({ runId: expect.stringMatching(/^tse_/) })
  })
})

describe("7.2 conversation_not_found: conversationId names no conversation in this workspace", () => {
  const rows: ReadonlyArray<{ readonly name: string; readonly conversationId: () => Promise<string> }> = [
    { name: "an unknown cnv_ id", conversationId: async () => `cnv_${"0".repeat(32)}` },
    { name: "an unknown UUID", conversationId: async () => randomUUID() },
    { name: "neither form", conversationId: async () => "my-conversation" },
    { name: "a conversation of another workspace", conversationId: async () => (await chat({ content: "ours" }, other.chat)).conversationPublicId },
    {
      // the workspace key acts for the bootstrap Owner: a Member's conversation is not theirs to continue (its history would reach their turn)
      name: "another person's conversation in this workspace",
      conversationId: async () => {
        const member = await addPerson(node, "someone", { org: "member", workspace: "member" })
        return (await chat({ content: "mine alone" }, { cookie: (await signIn(node.baseUrl, member)).cookie })).conversationPublicId
      }
    }
  ]

  it.each(rows)("$name", async ({ conversationId }) => {
    const ref = await conversationId()
    const before = await recorded(node)
    expectStreamFailure(await streamChat(node, { content: "go on", conversationId: ref }), "conversation_not_found", undefined, { runStarted: false })
    expectAskFailure(await post(node, "assistant/ask", { content: "go on", conversationId: ref }), 404, "conversation_not_found")
    expect(await recorded(node)).toEqual(before)
  })

  it("after a failed turn, the next message with the same conversationId continues the conversation", async () => {
    const first = await chat({ content: "remember the word teal" })
    const failed = await streamChat(node, { content: "/fail", conversationId: first.conversationPublicId })
    expectStreamFailure(failed, "model_call_failed")
    const retry = await chat({ content: "/memory", conversationId: first.conversationPublicId })
    expect(retry.conversationId).toBe(first.conversationId)
    // the first turn's two messages and the failed turn's question
    expect(retry.reply).toBe("I see 3 earlier messages. Summary: none.")
  })
})

describe("7.2 the model call fails after the stream opened", () => {
  let ownKey: Organization
  beforeAll(async () => {
    ownKey = await newOrganization("ownkey")
    await ownKey.asOwner("org.model_tier.set", { slug: "own", model: "offline:own", sharedKey: false, default: true })
  })

  const rows: ReadonlyArray<{ readonly name: string; readonly content: string; readonly code: string; readonly place?: () => Place }> = [
    { name: "the provider fails the call", content: "/fail", code: "model_call_failed" },
    { name: "the operator's provider account is out of balance", content: "/fail balance", code: "platform_provider_balance" },
    { name: "out of balance on the organization's own key is theirs to fix", content: "/fail balance", code: "model_call_failed", place: () => ownKey }
  ]

  it.each(rows)("$code: $name", async ({ content, code, place }) => {
    const options = (place?.() ?? main).chat
    const turn = await streamChat(node, { content }, options)
    expectStreamFailure(turn, code)
    expect(await runStatusOf(turn.events[0].runId, options)).toBe("failed")
    expectAskFailure(await post(node, "assistant/ask", { content }, options), 502, code)
  })
})

describe("7.2 assistant_model_key_limit: the organization's model key reached its daily limit", () => {
  it("a turn reaches the limit; the next turn on the organization's key fails in the stream", async () => {
    const org = await newOrganization("keylimit")
    await org.asOwner("org.model_tier.set", { slug: "own", model: "offline:own", sharedKey: false, default: true })
    await org.asOwner("org.billing.set_caps", { modelKeyDailyLimit: 1 })
    await chat({ content: "use the key" }, org.chat)
    expect((await charged(org, (billing) => billing.modelKeySpentToday >= 1)).modelKeySpentToday).toBeGreaterThanOrEqual(1)
    const turn = await streamChat(node, { content: "and again" }, org.chat)
    expectStreamFailure(turn, "assistant_model_key_limit")
    expect(await runStatusOf(turn.events[0].runId, org.chat)).toBe("failed")
    expectAskFailure(await post(node, "assistant/ask", { content: "and again" }, org.chat), 402, "assistant_model_key_limit")
    // the operator's tiers do not use the organization's key
    await chat({ content: "on the operator's tier", tier: "fast" }, org.chat)
  })
})

describe("7.2 attachment_refused: a file breaks a rule while the turn reads it", () => {
  it("an image for the offline model, which reads none, is unsupported_by_model; a text file is read", async () => {
    const image = await upload(main, "pixel.png", "image/png", PNG)
    const turn = await streamChat(node, { content: "what is in it?", attachments: [image] })
    expectStreamFailure(turn, "attachment_refused", "unsupported_by_model")
    expect(await runStatusOf(turn.events[0].runId)).toBe("failed")
    expectAskFailure(await post(node, "assistant/ask", { content: "what is in it?", attachments: [image] }), 400, "attachment_refused", "unsupported_by_model")
    const notes = await upload(main, "notes.txt", "text/plain", Buffer.from("plain notes\n"))
    await chat({ content: "read the notes", attachments: [notes] })
  })
})
