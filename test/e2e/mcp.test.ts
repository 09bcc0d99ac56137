/**
 * The MCP surface end to end (spec 4.2): the SDK's own client over Streamable HTTP against a real
 * node. Tools are the registry's MCP capabilities; a call passes the same checkpoint as REST, so
 * it leaves the same audit record (but for its surface) and is refused with the same code and
 * reason. Also: the 401s and their WWW-Authenticate challenge, and the protected-resource metadata.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { auditRows, comparableAudit } from "../support/audit.ts"
import { capability } from "../support/http.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { mcpInitialize as initialize } from "../support/mcp.ts"
import { addPerson, cliLogin } from "../support/people.ts"

let node: TestNode
let workspaceClient: Client
let orgClient: Client

const connect = async (key: string) => {
  const client = new Client({ name: "svc-e2e", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${node.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } })
  )
  return client
}

/** REST for the same capability, with the workspace key unless another is given. */
const rest = (name: string, input: unknown, key = node.bootstrap.workspaceKey) =>
  capability(node.baseUrl, key, node.bootstrap.orgSlug, node.bootstrap.workspaceSlug)(name, input)

const callTool = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult

/** The `{ error }` body an isError result carries in its text. */
const errorOf = (result: CallToolResult) => {
  expect(result.isError).toBe(true)
  const [content] = result.content
  expect(content.type).toBe("text")
  return JSON.parse((content as { text: string }).text)
}

const mcpInitialize = (headers: Record<string, string>) => initialize(node.baseUrl, headers)

const ticket = {
  label: "Ticket",
  properties: { title: { type: "string", required: true }, priority: { type: "enum", values: ["low", "high"] } }
}

beforeAll(async () => {
  node = await startTestNode()
  workspaceClient = await connect(node.bootstrap.workspaceKey)
  orgClient = await connect(node.bootstrap.orgKey)
})

afterAll(async () => {
  await workspaceClient?.close()
  await orgClient?.close()
  await node?.stop()
})

describe("tools", () => {
  it("lists the registry's MCP capabilities, each with an object input schema", async () => {
    const { tools } = await workspaceClient.listTools()
    const names = tools.map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(["auth.whoami", "schema.define_label", "schema.get", "node.create", "node.list"]))
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.inputSchema).not.toHaveProperty("$schema")
      expect(typeof tool.description).toBe("string")
    }
    const byName = new Map(tools.map((t) => [t.name, t]))
    // a workspace capability takes the optional place argument; one about the caller does not
    const create = byName.get("node.create")!
    expect(create.inputSchema.properties).toHaveProperty("workspace")
    expect(create.inputSchema.required).toEqual(["label", "properties"])
    expect(create.annotations).toMatchObject({ readOnlyHint: false })
    expect(byName.get("node.list")!.annotations).toMatchObject({ readOnlyHint: true })
    const whoami = byName.get("auth.whoami")!
    expect(whoami.inputSchema).toMatchObject({ type: "object", properties: {} })
    // references into $defs resolve from the root
    expect(byName.get("node.get")!.inputSchema).toMatchObject({ properties: { nodeId: { $ref: "#/$defs/NonEmptyString" } }, $defs: { NonEmptyString: { type: "string" } } })
  })

  it("lists only the tools the credential may call: no Owner-only tool for a Member, a key or an organization key", async () => {
    const ownerOnly = ["org.model_key.set", "org.model_key.clear", "org.model_tier.set", "org.model_tier.list"]
    const namesOf = async (client: Client) => (await client.listTools()).tools.map((t) => t.name)
    const member = await addPerson(node, "member", { org: "member", workspace: "member" })
    const owner = await addPerson(node, "owner", { org: "owner" })
    const memberClient = await connect(await cliLogin(node, member))
    const ownerClient = await connect(await cliLogin(node, owner))
    try {
      const byMember = await namesOf(memberClient)
      const byKey = await namesOf(workspaceClient)
      for (const names of [byMember, byKey]) {
        expect(names).toEqual(expect.arrayContaining(["auth.whoami", "node.create", "node.list"]))
        for (const name of ownerOnly) expect(names).not.toContain(name)
      }
      expect(await namesOf(ownerClient)).toEqual(expect.arrayContaining([...ownerOnly, "node.create"]))
      // spec 5 rule 3: an organization key reads no workspace data, so it is offered none of those tools
      expect(await namesOf(orgClient)).not.toContain("node.list")
      // what is not listed is still refused when called
      const refused = errorOf(await callTool(memberClient, "org.model_tier.list", {}))
      expect(refused.error.code).toBe("forbidden")
    } finally {
      await Promise.all([memberClient.close(), ownerClient.close()])
    }
  })

  it("defines a label and creates a node, with structured output", async () => {
    const defined = await callTool(workspaceClient, "schema.define_label", ticket)
    expect(defined.isError).toBeFalsy()
    expect(defined.structuredContent).toMatchObject({ label: "Ticket", version: 1, properties: { title: { type: "string", required: true } } })
    expect(JSON.parse((defined.content[0] as { text: string }).text)).toEqual(defined.structuredContent)

    const created = await callTool(workspaceClient, "node.create", { label: "Ticket", properties: { title: "Printer on fire", priority: "high" } })
    expect(created.isError).toBeFalsy()
    expect(created.structuredContent).toMatchObject({
      nodeId: expect.stringMatching(/^nod_/),
      label: "Ticket",
      properties: { title: "Printer on fire", priority: "high" },
      version: 1
    })

    // what MCP created, REST reads; naming the credential's own workspace is the same as naming none
    const nodeId = (created.structuredContent as { nodeId: string }).nodeId
    expect(await rest("node.get", { nodeId })).toEqual({ status: 200, body: created.structuredContent })
    const workspace = `${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
    const got = await callTool(workspaceClient, "node.get", { nodeId, workspace })
    expect(got.structuredContent).toEqual(created.structuredContent)
  })

  it("answers whoami for the credential", async () => {
    const ws = await callTool(workspaceClient, "auth.whoami", {})
    const org = await callTool(orgClient, "auth.whoami", {})
    expect(ws.structuredContent).toMatchObject({ authenticated: true, workspaceId: expect.any(String) })
    expect(org.structuredContent).toMatchObject({ authenticated: true, workspaceId: null })
  })

  it("refuses an unknown tool with JSON-RPC invalid params", async () => {
    const call = callTool(workspaceClient, "node.nothing", {})
    await expect(call).rejects.toBeInstanceOf(McpError)
    await expect(call).rejects.toMatchObject({ code: ErrorCode.InvalidParams })
  })
})

describe("one checkpoint", () => {
  it("leaves the same audit record over REST and MCP, but for the surface", async () => {
    const input = { label: "Ticket", properties: { title: "Same either way" } }
    const before = new Set((await auditRows(node, "node.create")).map((r) => r.invocation_id))
    const overRest = await rest("node.create", input)
    expect(overRest.status).toBe(200)
    const overMcp = await callTool(workspaceClient, "node.create", input)
    expect(overMcp.isError).toBeFalsy()

    const rows = (await auditRows(node, "node.create")).filter((r) => !before.has(r.invocation_id))
    expect(rows.map((r) => r.surface)).toEqual(["api", "mcp"])
    expect(comparableAudit(rows[1])).toEqual(comparableAudit(rows[0]))
    expect(comparableAudit(rows[0])).toMatchObject({ outcome: "succeeded", workspace_id: expect.any(String), api_key_id: expect.any(String) })
  })

  it("refuses what the credential may not do with REST's code and reason", async () => {
    // spec 5 rule 3: an organization key reads no workspace data
    const workspace = `${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}`
    const overRest = await rest("node.list", {}, node.bootstrap.orgKey)
    expect(overRest.status).toBe(403)
    const overMcp = errorOf(await callTool(orgClient, "node.list", { workspace }))
    expect(overMcp).toEqual(overRest.body)
    expect(overMcp.error.code).toBe("forbidden")
  })

  it("refuses another workspace with key_scope_mismatch, as REST does", async () => {
    const overRest = await capability(node.baseUrl, node.bootstrap.workspaceKey, "elsewhere", "main")("node.list", {})
    const overMcp = errorOf(await callTool(workspaceClient, "node.list", { workspace: "elsewhere/main" }))
    expect(overRest.status).toBe(403)
    expect(overMcp).toEqual(overRest.body)
    expect(overMcp.error.reason).toBe("key_scope_mismatch")
  })

  it("refuses invalid input with REST's bad_request, and a malformed workspace argument", async () => {
    const input = { label: "Ticket", limit: 0 }
    const overRest = await rest("node.list", input)
    const overMcp = errorOf(await callTool(workspaceClient, "node.list", input))
    expect(overRest.status).toBe(400)
    expect(overMcp).toEqual(overRest.body)
    expect(overMcp.error).toMatchObject({ code: "bad_request", reason: "invalid_input" })

    const unknownField = errorOf(await callTool(workspaceClient, "node.list", { colour: "red" }))
    expect(unknownField.error).toMatchObject({ code: "bad_request", reason: "invalid_input" })

    const badPlace = errorOf(await callTool(workspaceClient, "node.list", { workspace: "just-an-org" }))
    expect(badPlace.error).toMatchObject({ code: "bad_request", reason: "invalid_workspace" })
  })
})

describe("authentication and discovery", () => {
  const metadataUrl = () => `${node.config.baseUrl}/.well-known/oauth-protected-resource`

  it("answers a request with no bearer 401 with a challenge naming the resource metadata", async () => {
    const response = await mcpInitialize({})
    expect(response.status).toBe(401)
    const challenge = response.headers.get("www-authenticate")!
    expect(challenge).toMatch(/^Bearer /)
    expect(challenge).toContain(`resource_metadata="${metadataUrl()}"`)
    expect(challenge).not.toContain("error=")
    expect(((await response.json()) as any).error).toMatchObject({ code: "unauthorized", reason: "missing_credential", message: expect.any(String) })
  })

  it("answers a garbage or unknown bearer 401 invalid_token", async () => {
    // malformed, and well-formed but unknown
    for (const key of ["garbage", `svc_${randomBytes(48).toString("base64url")}`]) {
      const response = await mcpInitialize({ authorization: `Bearer ${key}` })
      expect(response.status).toBe(401)
      const challenge = response.headers.get("www-authenticate")!
      expect(challenge).toContain(`resource_metadata="${metadataUrl()}"`)
      expect(challenge).toContain('error="invalid_token"')
      const body: any = await response.json()
      expect(body.error.code).toBe("unauthorized")
      expect(["malformed_credential", "invalid_credential"]).toContain(body.error.reason)
    }
  })

  it("refuses an SDK client without a key", async () => {
    const client = new Client({ name: "svc-e2e", version: "1.0.0" })
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${node.baseUrl}/mcp`)))).rejects.toMatchObject({ code: 401 })
  })

  it("serves the protected-resource metadata (RFC 9728)", async () => {
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const response = await fetch(`${node.baseUrl}${path}`)
      expect(response.status).toBe(200)
      const document: any = await response.json()
      expect(document).toMatchObject({ resource: `${node.config.baseUrl}/mcp`, bearer_methods_supported: ["header"] })
      expect(document.authorization_servers ?? []).toEqual([])
    }
  })

  it("answers GET and DELETE 405: a stateless server has no stream or session", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${node.baseUrl}/mcp`, {
        method,
        headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}`, accept: "text/event-stream" }
      })
      expect(response.status).toBe(405)
      expect(response.headers.get("allow")).toBe("POST")
      expect(((await response.json()) as any).error.code).toBe(-32000)
    }
  })
})
