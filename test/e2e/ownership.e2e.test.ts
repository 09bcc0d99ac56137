/**
 * Who may read what, capability by capability (issue 22; docs/decisions.md, "Whose is this"):
 * every capability that takes an id, called first by people who did not make the record, then by
 * the one who did. A person's own records (conversations, runs and their replies, approvals,
 * questions, A2A tasks, notices) answer only that person: a colleague (another Member of the
 * workspace) and the organization's Owner get what an unknown id gets. Workspace records
 * (automations and their runs, documents, files) are the workspace's people's to read; a
 * credential is its Owners' and Admins' (spec 5 rule 12). A person of another organization gets
 * an unknown id's answer in their own workspace, and 403 naming this one.
 *
 * Outcomes are written `<status> <reason or code>`; A2A answers its JSON-RPC error code.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, Runtime } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrgActor } from "../../actors/org/actor.ts"
import { AddMember, CreateOrganization, CreateWorkspace, SetWorkspaceRole } from "../../actors/org/protocol.ts"
import { text } from "../support/a2aFixtures.ts"
import { streamChat, type StreamedTurn, waitForEvent } from "../support/chat.ts"
import { connectMcp } from "../support/mcp.ts"
import { addPerson, callWithCookie, cliLogin, type Person, signIn } from "../support/people.ts"
import { addKey } from "../support/places.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { asPerson, type Caller, ok, overMcp, runWaitingOnPerson } from "../support/plugins.ts"
import { call, eventually, type Reply } from "./client.ts"

let node: TestNode

/** Someone who calls: over REST with a session, over A2A with a key of theirs. */
interface Someone {
  readonly rest: Caller
  readonly a2aKey: string
}

type Who = "alice" | "bob" | "owner" | "admin" | "eve" | "eveHere"
const people = {} as Record<Who, Someone>
/** Bob's MCP client (a CLI login): a colleague over MCP is answered as over REST. */
let bobMcp: Client
/** Alice's turn waiting on her question; it ends once she answers. */
let waitingTurn: Promise<StreamedTurn>
/** The ids of what Alice (and, for the credential, the Admin) made. */
const made = {} as Record<
  "conversationId" | "runId" | "approvalId" | "questionId" | "taskId" | "automationId" | "automationRunId" | "notificationId" | "documentId" | "fileId" | "listingId",
  string
>

/** A person of another organization: its Owner, signed in, calling in their own workspace and naming this one. */
const otherOrganizationOwner = async (): Promise<{ readonly eve: Someone; readonly eveHere: Someone }> => {
  const suffix = randomUUID().slice(0, 8)
  const place = { orgId: `org_other_${suffix}`, workspaceId: `wsp_other_${suffix}` }
  const eve = await addPerson(node, "eve")
  const meta = () => ({ commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })
  await Runtime.runPromise(node.runtime)(
    Effect.gen(function* () {
      yield* node.host.send(OrgActor, place.orgId, new CreateOrganization({ orgId: place.orgId, slug: `other-${suffix}`, name: "Other" }), meta())
      yield* node.host.send(OrgActor, place.orgId, new AddMember({ orgId: place.orgId, userId: eve.userId, role: "owner" }), meta())
      yield* node.host.send(OrgActor, place.orgId, new CreateWorkspace({ ...place, slug: "main", name: "Main" }), meta())
      yield* node.host.send(OrgActor, place.orgId, new SetWorkspaceRole({ ...place, userId: eve.userId, role: "admin" }), meta())
    }) as Effect.Effect<void, unknown, never>
  )
  const { cookie } = await signIn(node.baseUrl, eve)
  const a2aKey = (await addKey(node, place, eve.userId, "eve's key")).raw
  const at = (path: string): Caller => (capability, input) => callWithCookie(node.baseUrl, cookie, `/v1/${path}/${capability.replaceAll(".", "/")}`, input)
  return { eve: { rest: at(`other-${suffix}/main`), a2aKey }, eveHere: { rest: at(`${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`), a2aKey } }
}

const someone = async (person: Person): Promise<Someone> => ({ rest: await asPerson(node, person), a2aKey: await cliLogin(node, person) })

const a2a = async (key: string, method: string, params: unknown) => {
  const response = await fetch(`${node.baseUrl}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
  })
  return response.json() as Promise<{ result?: any; error?: { code: number } }>
}

/** A reply as the table writes it: `200`, `200 found:false` (an answer route's not found), or `<status> <reason or code>`. */
const outcome = (reply: Reply) =>
  reply.status === 200
    ? reply.body?.found === false ? "200 found:false" : "200"
    : `${reply.status} ${reply.body?.error?.reason ?? reply.body?.error?.code}`

beforeAll(async () => {
  node = await startTestNode({ authTokenEncryptionKey: randomBytes(32) })
  const alice = await addPerson(node, "alice", { org: "member", workspace: "member" })
  const bob = await addPerson(node, "bob", { org: "member", workspace: "member" })
  people.alice = await someone(alice)
  people.bob = await someone(bob)
  people.owner = await someone(await addPerson(node, "owner", { org: "owner" }))
  people.admin = await someone(await addPerson(node, "admin", { org: "member", workspace: "admin" }))
  Object.assign(people, await otherOrganizationOwner())
  bobMcp = await connectMcp(node.baseUrl, people.bob.a2aKey, "svc-e2e-ownership")
  const { cookie } = await signIn(node.baseUrl, alice)

  // Alice's turn, her call parked for approval, and her turn waiting on her answer
  const turn = await streamChat(node, { content: "a private thought" }, { cookie })
  made.conversationId = turn.done.conversationPublicId
  made.runId = turn.done.runId
  ok(await call(node, "schema.define_label", { label: "Note", properties: {} }))
  const { nodeId } = ok(await call(node, "node.create", { label: "Note", properties: {} }))
  const parked = await streamChat(node, { content: `/tool node__delete {"nodeId":"${nodeId}"}` }, { cookie })
  made.approvalId = parked.events.find((e) => e.type === "approval-required").approvalId
  const events: Array<any> = []
  waitingTurn = streamChat(node, { content: "/ask Which colour? | red | blue" }, { cookie, onEvent: (e) => events.push(e) })
  made.questionId = (await waitForEvent(events, (e) => e.type === "question")).id

  // her A2A task, waiting on her answer
  const task = await a2a(people.alice.a2aKey, "message/send", { message: { kind: "message", role: "user", messageId: randomUUID(), parts: text("/ask Ship it | yes | no") } })
  expect(task.result?.status.state).toBe("input-required")
  made.taskId = task.result.id

  // her automation, its run waiting on her, and the notice telling her so
  const fired = await runWaitingOnPerson(people.alice.rest)
  made.automationId = fired.automationId
  made.automationRunId = fired.runId
  const notices = await eventually(() => people.alice.rest("notifications.list", {}), (reply) => reply.body?.notifications?.length > 0)
  made.notificationId = ok(notices).notifications[0].notificationId

  // her document and file
  made.documentId = ok(await people.alice.rest("document.create", { title: "Notes", content: "mine, in the workspace" })).documentId
  const form = new FormData()
  form.append("file", new Blob(["a file of the workspace"], { type: "text/plain" }), "notes.txt")
  const upload = await fetch(`${node.baseUrl}/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/assistant/attachments/upload`, {
    method: "POST",
    headers: { cookie },
    body: form
  })
  made.fileId = ((await upload.json()) as any).files[0].id

  // a server the Owner allowed, whose secret the workspace's Admin enters
  made.listingId = ok(await people.owner.rest("plugin.org.install", {
    name: "com.test/keyed",
    endpointUrl: "https://mcp.example.test/mcp",
    transport: "streamable-http",
    authKind: "secret",
    authConfig: { header: "X-Api-Key", valuePrefix: "" }
  })).listingId
  ok(await people.owner.rest("plugin.org.set_enabled", { listingId: made.listingId, enabled: true }))
}, 120_000)

afterAll(async () => {
  await bobMcp?.close()
  await node?.stop()
})

interface Row {
  readonly record: string
  /** Who made the record. */
  readonly maker: Who
  /** The capability (the A2A method), named in the row. */
  readonly capability: string
  /** A REST capability's input; also on MCP when `mcp`, where Bob is answered as over REST. */
  readonly input?: () => Record<string, unknown>
  readonly mcp: boolean
  readonly call: (who: Someone) => Promise<string>
  /** What Bob, a Member of the same workspace, gets. */
  readonly colleague: string
  /** What the organization's Owner gets. */
  readonly owner: string
  /** What the other organization's Owner gets in their own workspace. */
  readonly stranger: string
  /** And naming this workspace (A2A names none: the key does). */
  readonly strangerHere?: string
}

const rest = (capability: string, input: () => Record<string, unknown>) => ({
  capability,
  input,
  call: async (who: Someone) => outcome(await who.rest(capability, input()))
})

const rpc = (method: string, params: () => Record<string, unknown>) => ({
  capability: method,
  mcp: false,
  call: async (who: Someone) => {
    const answer = await a2a(who.a2aKey, method, params())
    return answer.error === undefined ? "200" : String(answer.error.code)
  }
})

const personal = (notFound: string) => ({ colleague: notFound, owner: notFound, stranger: notFound, strangerHere: "403 not_a_member" })
const shared = (notFound: string) => ({ colleague: "200", owner: "200", stranger: notFound, strangerHere: "403 not_a_member" })

// callers are asked in this order, the maker last: a write by someone else must change nothing the maker then does
const rows: ReadonlyArray<Row> = [
  { record: "conversation", maker: "alice", mcp: true, ...rest("conversation.get", () => ({ conversationId: made.conversationId })), ...personal("404 conversation_not_found") },
  { record: "run", maker: "alice", mcp: true, ...rest("run.get", () => ({ runId: made.runId })), ...personal("404 run_not_found") },
  { record: "reply", maker: "alice", mcp: true, ...rest("assistant.reply", () => ({ runId: made.runId })), ...personal("404 run_not_found") },
  {
    record: "approval",
    maker: "alice",
    mcp: false,
    ...rest("agent.approvals.resolve", () => ({ approvalId: made.approvalId, decision: "denied" })),
    // spec 3.2: one owned by someone else is 409 approval_expired
    ...personal("409 approval_expired"),
    stranger: "404 approval_not_found"
  },
  { record: "question", maker: "alice", mcp: false, ...rest("assistant.question.answer", () => ({ questionId: made.questionId, answer: "blue" })), ...personal("200 found:false") },
  { record: "A2A task (get)", maker: "alice", ...rpc("tasks/get", () => ({ id: made.taskId })), colleague: "-32001", owner: "-32001", stranger: "-32001" },
  { record: "A2A task (cancel)", maker: "alice", ...rpc("tasks/cancel", () => ({ id: made.taskId })), colleague: "-32001", owner: "-32001", stranger: "-32001" },
  { record: "automation", maker: "alice", mcp: true, ...rest("automation.get", () => ({ automationId: made.automationId })), ...shared("404 automation_not_found") },
  { record: "run of an automation", maker: "alice", mcp: true, ...rest("automation.get_run", () => ({ runId: made.automationRunId })), ...shared("404 run_not_found") },
  { record: "notification", maker: "alice", mcp: true, ...rest("notifications.mark", () => ({ notificationId: made.notificationId, mark: "read" })), ...personal("404 notification_not_found") },
  { record: "document", maker: "alice", mcp: true, ...rest("document.read", () => ({ documentId: made.documentId })), ...shared("404 document_not_found") },
  { record: "file", maker: "alice", mcp: true, ...rest("assistant.attachments.download", () => ({ fileId: made.fileId })), ...shared("404 file_not_found") },
  {
    record: "credential",
    maker: "admin",
    mcp: true,
    ...rest("plugin.credential.set_secret", () => ({ listingId: made.listingId, secret: "sk-test-secret" })),
    ...shared("404 listing_not_found"),
    // spec 5 rule 12: Members manage no plugins
    colleague: "403 forbidden"
  }
]

describe("who may read what: the maker, a colleague, the organization's Owner, another organization's person", () => {
  it.each(rows)("$record ($capability)", async (row) => {
    const seen: Record<string, string | undefined> = {}
    if (row.strangerHere !== undefined) seen.strangerHere = await row.call(people.eveHere)
    seen.stranger = await row.call(people.eve)
    seen.colleague = await row.call(people.bob)
    seen.owner = await row.call(people.owner)
    seen.maker = await row.call(people[row.maker])
    expect(seen).toEqual({ maker: "200", colleague: row.colleague, owner: row.owner, stranger: row.stranger, strangerHere: row.strangerHere })
  })

  it.each(rows.filter((row) => row.mcp))("over MCP, the colleague is answered as over REST: $record ($capability)", async (row) => {
    const input = row.input!()
    const overRest = await people.bob.rest(row.capability, input)
    const overMcpTool = await overMcp(bobMcp, row.capability, input)
    expect(overMcpTool).toEqual({ refused: overRest.status !== 200, body: overRest.body })
  })

  it("Alice's waiting turn ends once she answered her question", async () => {
    expect((await waitingTurn).done.reply).toContain("blue")
  })
})
