/**
 * Who the plugin and marketplace e2e suites act as: an Owner, an Admin, a Member and a Viewer of the
 * bootstrap workspace, each calling capabilities over REST with a session cookie, and the Owner's MCP
 * SDK client on a CLI login.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { expect } from "vitest"
import type { Reply } from "../e2e/client.ts"
import { connectMcp } from "./mcp.ts"
import { addPerson, callWithCookie, cliLogin, type Person, signIn } from "./people.ts"
import type { AppConfig } from "../../src/platform/Config.ts"
import type { TestNode } from "./platform.ts"
import type { RegistryServer } from "./registryServer.ts"

/** A capability called over REST as one person: `POST /v1/{org}/{workspace}/<capability as a path>`. */
export type Caller = (capability: string, input: unknown) => Promise<Reply>

export interface PluginPeople {
  readonly asOwner: Caller
  readonly asAdmin: Caller
  readonly asMember: Caller
  readonly asViewer: Caller
  /** The Owner's MCP client; the suite closes it. */
  readonly ownerMcp: Client
  /** The Owner's CLI login (`cli_session_v1`), a bearer key as the CLI sends it. */
  readonly ownerCli: string
}

/** `workspaceSlug`: a workspace of the bootstrap organization other than the bootstrap one. */
export const asPerson = async (node: TestNode, person: Person, workspaceSlug: string = node.bootstrap.workspaceSlug): Promise<Caller> => {
  const cookie = (await signIn(node.baseUrl, person)).cookie
  const place = `/v1/${node.bootstrap.orgSlug}/${workspaceSlug}`
  return (capability, input) => callWithCookie(node.baseUrl, cookie, `${place}/${capability.replaceAll(".", "/")}`, input)
}

/** Adds the four people to the node, signs each in, and connects the Owner's MCP client. */
export const signInPluginPeople = async (node: TestNode, mcpClientName: string): Promise<PluginPeople> => {
  const owner = await addPerson(node, "owner", { org: "owner" })
  return {
    asOwner: await asPerson(node, owner),
    asAdmin: await asPerson(node, await addPerson(node, "admin", { org: "member", workspace: "admin" })),
    asMember: await asPerson(node, await addPerson(node, "member", { org: "member", workspace: "member" })),
    asViewer: await asPerson(node, await addPerson(node, "viewer", { org: "member", workspace: "viewer" })),
    ...(await (async () => {
      const ownerCli = await cliLogin(node, owner)
      return { ownerCli, ownerMcp: await connectMcp(node.baseUrl, ownerCli, mcpClientName) }
    })())
  }
}

/** A marketplace whose default seed is the local registry, synced only when a test asks. */
export const localSeedMarketplace = (upstream: RegistryServer): AppConfig["marketplace"] => ({
  defaultRegistryUrl: upstream.url,
  githubRawBaseUrl: upstream.rawBaseUrl,
  syncIntervalSeconds: 0,
  pageSize: 100,
  leaseMs: 60_000
})

/** The body of a 200 reply (the test fails with the body otherwise). */
export const ok = (reply: Reply) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body
}

/** A tool call over MCP: the structured result, or the error body of a refusal. */
export const overMcp = async (client: Client, capability: string, args: Record<string, unknown>) => {
  const result = (await client.callTool({ name: capability, arguments: args })) as CallToolResult
  return result.isError === true
    ? { refused: true, body: JSON.parse((result.content[0] as { text: string }).text) }
    : { refused: false, body: result.structuredContent as any }
}

/**
 * An enabled API-triggered automation fired once by `caller`, its run waiting at a `human_input`
 * step asking "Go ahead?" of the caller (then pinging): a run with a person to answer, and its notice.
 */
export const runWaitingOnPerson = async (caller: Caller) => {
  const { automationId } = ok(
    await caller("automation.create", {
      name: "Ask before pinging",
      trigger: { type: "api" },
      steps: [
        { name: "approve", stepType: "human_input", config: { prompt: "Go ahead?" } },
        { name: "ping", stepType: "tool", config: { capability: "system.ping" } }
      ],
      enabled: true
    })
  )
  const { runId } = ok(await caller("automation.trigger", { automationId }))
  return { automationId: automationId as string, runId: runId as string }
}
