/**
 * workspace.members.list: the people who can enter a workspace (its members with their workspace
 * role, and the organization's Owners), sorted by name, as an assignee picker offers them. A person
 * of another workspace sees only that workspace's people; an organization key reads none (spec 5
 * rule 3), on REST, MCP and the agent surface alike.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrgActor } from "../../actors/org/actor.ts"
import { CreateWorkspace, SetWorkspaceRole } from "../../actors/org/protocol.ts"
import { connectMcp } from "../support/mcp.ts"
import { addPerson, bootstrapPlace, callWithCookie, type Person, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, callAsAgent, eventually, expectError, type Reply } from "./client.ts"

let node: TestNode
let alice: Person
let vic: Person
let olga: Person
let dana: Person
let ownerUserId: string
const cookies: Record<string, string> = {}

beforeAll(async () => {
  node = await startTestNode()
  const { orgId } = await bootstrapPlace(node)
  alice = await addPerson(node, "alice", { org: "member", workspace: "member" })
  vic = await addPerson(node, "vic", { org: "member", workspace: "viewer" })
  olga = await addPerson(node, "olga", { org: "owner" })
  // an organization member of no workspace: nobody's list names them
  await addPerson(node, "carl", { org: "member" })
  dana = await addPerson(node, "dana", { org: "member" })
  const sideId = `wsp_${randomUUID().slice(0, 8)}`
  const meta = () => ({ commandId: randomUUID(), at: new Date().toISOString(), actor: "system" })
  await Runtime.runPromise(node.runtime)(Effect.gen(function* () {
    yield* node.host.send(OrgActor, orgId, new CreateWorkspace({ orgId, workspaceId: sideId, slug: "side", name: "Side" }), meta())
    yield* node.host.send(OrgActor, orgId, new SetWorkspaceRole({ orgId, workspaceId: sideId, userId: dana.userId, role: "admin" }), meta())
  }))
  for (const [name, person] of [["alice", alice], ["dana", dana]] as const) cookies[name] = (await signIn(node.baseUrl, person)).cookie
  const owner = await signIn(node.baseUrl, { email: node.bootstrap.ownerEmail!, password: node.bootstrap.ownerPassword! })
  cookies.owner = owner.cookie
  ownerUserId = (await callWithCookie(node.baseUrl, owner.cookie, "/v1/account/get", {})).body.userId
}, 60_000)

afterAll(async () => {
  await node?.stop()
})

const membersOf = (cookie: string, workspaceSlug = node.bootstrap.workspaceSlug): Promise<Reply> =>
  callWithCookie(node.baseUrl, cookie, `/v1/${node.bootstrap.orgSlug}/${workspaceSlug}/workspace/members/list`, {})
const ids = (reply: Reply): ReadonlyArray<string> => reply.body.members?.map((m: any) => m.userId) ?? []

describe("workspace.members.list", () => {
  it("a Member sees the workspace's members and the organization's Owners, sorted by name", async () => {
    const reply = await eventually(() => membersOf(cookies.alice), (r) => r.status === 200 && ids(r).length === 4)
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    const { members } = reply.body
    expect(members).toContainEqual({ userId: alice.userId, name: "alice", email: alice.email, workspaceRole: "member", orgRole: "member" })
    expect(members).toContainEqual({ userId: vic.userId, name: "vic", email: vic.email, workspaceRole: "viewer", orgRole: "member" })
    // an Owner enters every workspace, with or without a workspace role
    expect(members).toContainEqual({ userId: olga.userId, name: "olga", email: olga.email, workspaceRole: null, orgRole: "owner" })
    expect(members.find((m: any) => m.userId === ownerUserId)).toMatchObject({ email: node.bootstrap.ownerEmail, orgRole: "owner" })
    const names: Array<string> = members.map((m: any) => m.name.toLowerCase())
    expect(names).toEqual([...names].sort())
  })

  it("someone of another workspace sees only theirs, and is refused this one", async () => {
    const reply = await eventually(() => membersOf(cookies.dana, "side"), (r) => r.status === 200 && ids(r).includes(dana.userId))
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    expect([...ids(reply)].sort()).toEqual([dana.userId, olga.userId, ownerUserId].sort())
    expect(reply.body.members).toContainEqual({ userId: dana.userId, name: "dana", email: dana.email, workspaceRole: "admin", orgRole: "member" })
    expect(ids(await membersOf(cookies.alice))).not.toContain(dana.userId)
    expectError(await membersOf(cookies.dana), 403, "forbidden", undefined)
  })

  it("an organization key is refused 403 forbidden on REST, MCP and the agent surface alike", async () => {
    const overRest = await call(node, "workspace.members.list", {}, { key: node.bootstrap.orgKey })
    expectError(overRest, 403, "forbidden", undefined)
    const mcp = await connectMcp(node.baseUrl, node.bootstrap.orgKey, "svc-e2e-workspace-members")
    try {
      const result = (await mcp.callTool({ name: "workspace.members.list", arguments: { workspace: `${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}` } })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(overRest.body)
    } finally {
      await mcp.close()
    }
    const overAgent = await callAsAgent(node, node.bootstrap.orgKey, "workspace.members.list", {})
    expectError(overAgent, 403, "forbidden", undefined)
    expect(overAgent.body).toEqual(overRest.body)
    // while a workspace key reads it there
    expect((await callAsAgent(node, node.bootstrap.workspaceKey, "workspace.members.list", {})).status).toBe(200)
  })
})
