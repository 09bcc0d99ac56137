/**
 * What a caller gets wrong, end to end over HTTP: every bad request is answered with the JSON error
 * shape `{ error: { code, reason?, message } }` and changes nothing (not one record on the log,
 * not even an audit record). Also: whoami and its 401s, the limits of an organization key, and
 * routes that do not exist.
 */
import { randomBytes, randomUUID } from "node:crypto"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CreateApiKey } from "../../actors/apikey/protocol.ts"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { mintApiKey, newPublicId } from "../../src/identity/ApiKeyToken.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { bearer, call, expectError, logCount, type Reply, send, sleep } from "./client.ts"

let node: TestNode
let existingNodeId: string

beforeAll(async () => {
  node = await startTestNode()
  const defined = await call(node, "schema.define_label", {
    label: "Ticket",
    properties: {
      title: { type: "string", required: true },
      priority: { type: "number" },
      kind: { type: "enum", values: ["bug", "feature"] }
    }
  })
  expect(defined.status).toBe(200)
  const created = await call(node, "node.create", { label: "Ticket", properties: { title: "Existing", kind: "bug" } })
  expect(created.status).toBe(200)
  existingNodeId = created.body.nodeId
})

afterAll(async () => {
  await node?.stop()
})

const MiB = 1024 * 1024

/** `POST` to a capability path with a raw body and the workspace key. */
const postRaw = (path: string, body: RequestInit["body"]) =>
  send(node, `/v1/acme/main/${path}`, {
    method: "POST",
    headers: { ...bearer(node.bootstrap.workspaceKey), "content-type": "application/json" },
    body,
    // needed by fetch for a streamed body; harmless for the others
    duplex: "half"
  } as RequestInit)

/** A body that arrives chunked (no content-length), `size` bytes of valid JSON in 64 KiB pieces. */
const chunkedJson = (size: number) => {
  const text = `{"label":"Ticket","properties":{"title":"${"x".repeat(size - 40)}"}}`
  const bytes = new TextEncoder().encode(text)
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024))
      controller.close()
    }
  })
}

/** A well-formed key (`svc_` and 64 base64url characters) that no one was ever given. */
const unknownKey = `svc_${randomBytes(48).toString("base64url")}`

interface BadCase {
  readonly name: string
  readonly request: () => Promise<Reply>
  readonly status: number
  readonly code: string
  readonly reason: string | undefined
  /** Words the message must contain. */
  readonly mentions?: ReadonlyArray<string>
}

const badCases: ReadonlyArray<BadCase> = [
  // the body
  { name: "malformed JSON", request: () => postRaw("node/create", "{not json"), status: 400, code: "bad_request", reason: "invalid_json" },
  { name: "an empty body", request: () => postRaw("node/create", ""), status: 400, code: "bad_request", reason: "invalid_json" },
  {
    name: "a body over 1 MiB with content-length",
    request: () => postRaw("node/create", JSON.stringify({ label: "Ticket", properties: { title: "x".repeat(MiB) } })),
    status: 413,
    code: "payload_too_large",
    reason: undefined
  },
  {
    name: "a chunked body growing over 1 MiB",
    request: () => postRaw("node/create", chunkedJson(MiB + 64 * 1024)),
    status: 413,
    code: "payload_too_large",
    reason: undefined
  },
  // the route
  {
    name: "an unknown capability",
    request: () => call(node, "nope.nothing", {}),
    status: 404,
    code: "not_found",
    reason: "unknown_capability",
    // the path it was asked for, not an undefined capability's name
    mentions: ["POST /v1/acme/main/nope/nothing"]
  },
  {
    name: "another organization in the path",
    request: () => call(node, "node.create", { label: "Ticket", properties: { title: "t" } }, { orgSlug: "other" }),
    status: 403,
    code: "forbidden",
    reason: "key_scope_mismatch",
    mentions: ["other/main", "acme/main"]
  },
  {
    name: "another workspace of the same organization in the path",
    request: () => call(node, "node.create", { label: "Ticket", properties: { title: "t" } }, { workspaceSlug: "other" }),
    status: 403,
    code: "forbidden",
    reason: "key_scope_mismatch",
    mentions: ["acme/other", "acme/main"]
  },
  // the credential
  {
    name: "no Authorization header",
    request: () => call(node, "node.create", { label: "Ticket", properties: { title: "t" } }, { key: null }),
    status: 401,
    code: "unauthorized",
    reason: "missing_credential"
  },
  {
    name: "a malformed key",
    request: () => call(node, "node.create", { label: "Ticket", properties: { title: "t" } }, { key: "abc" }),
    status: 401,
    code: "unauthorized",
    reason: "malformed_credential"
  },
  {
    name: "a well-formed key nobody holds",
    request: () => call(node, "node.create", { label: "Ticket", properties: { title: "t" } }, { key: unknownKey }),
    status: 401,
    code: "unauthorized",
    reason: "invalid_credential"
  },
  // node properties
  {
    name: "a property of the wrong type",
    request: () => call(node, "node.create", { label: "Ticket", properties: { title: "t", priority: "high" } }),
    status: 400,
    code: "bad_request",
    reason: "invalid_property_type",
    mentions: ["priority", "number"]
  },
  {
    name: "an enum value the label does not declare",
    request: () => call(node, "node.create", { label: "Ticket", properties: { title: "t", kind: "chore" } }),
    status: 400,
    code: "bad_request",
    reason: "invalid_enum_value",
    mentions: ["chore", "bug", "feature"]
  },
  {
    name: "a property the label does not declare",
    request: () => call(node, "node.create", { label: "Ticket", properties: { title: "t", colour: "red" } }),
    status: 400,
    code: "bad_request",
    reason: "unknown_property",
    mentions: ["colour"]
  },
  {
    name: "a required property missing on create",
    request: () => call(node, "node.create", { label: "Ticket", properties: { priority: 1 } }),
    status: 400,
    code: "bad_request",
    reason: "missing_property",
    mentions: ["title"]
  },
  {
    name: "a required property removed on update",
    request: () => call(node, "node.update", { nodeId: existingNodeId, properties: { title: null } }),
    status: 400,
    code: "bad_request",
    reason: "missing_property",
    mentions: ["title"]
  },
  {
    name: "a value of the wrong type on update",
    request: () => call(node, "node.update", { nodeId: existingNodeId, properties: { priority: true } }),
    status: 400,
    code: "bad_request",
    reason: "invalid_property_type",
    mentions: ["priority"]
  },
  {
    name: "a label the workspace does not define",
    request: () => call(node, "node.create", { label: "Ghost", properties: { title: "t" } }),
    status: 400,
    code: "bad_request",
    reason: "unknown_label",
    mentions: ["Ghost"]
  },
  // the capability's input schema
  {
    name: "an input field the capability does not take",
    request: () => call(node, "node.create", { label: "Ticket", properties: { title: "t" }, extra: true }),
    status: 400,
    code: "bad_request",
    reason: "invalid_input",
    mentions: ["extra"]
  },
  {
    name: "node.list with limit 0",
    request: () => call(node, "node.list", { limit: 0 }),
    status: 400,
    code: "bad_request",
    reason: "invalid_input"
  },
  {
    name: "node.list with a cursor it never returned",
    request: () => call(node, "node.list", { cursor: "not a cursor!" }),
    status: 400,
    code: "bad_request",
    reason: "invalid_cursor"
  },
  {
    name: "node.list with base64url garbage as the cursor",
    request: () => call(node, "node.list", { cursor: "zzzz" }),
    status: 400,
    code: "bad_request",
    reason: "invalid_cursor"
  },
  {
    name: "a capability named with dots instead of slashes",
    request: () => postRaw("node.list", "{}"),
    status: 404,
    code: "not_found",
    reason: "unknown_capability",
    mentions: ["/v1/acme/main/node.list"]
  },
  // record decoding would take a `__proto__` key as the prototype and drop it: refused before
  {
    name: "a property named __proto__ on create",
    request: () => postRaw("node/create", '{"label":"Ticket","properties":{"title":"t","__proto__":"x"}}'),
    status: 400,
    code: "bad_request",
    reason: "invalid_input",
    mentions: ["__proto__"]
  },
  {
    name: "a label property named __proto__",
    request: () => postRaw("schema/define_label", '{"label":"Proto","properties":{"__proto__":{"type":"string"}}}'),
    status: 400,
    code: "bad_request",
    reason: "invalid_input",
    mentions: ["__proto__"]
  }
]

describe("bad input changes nothing", () => {
  it("a valid request, by contrast, appends to the log (the count below can move)", async () => {
    const before = await logCount(node)
    const reply = await call(node, "node.create", { label: "Ticket", properties: { title: "Control" } })
    expect(reply.status).toBe(200)
    // the node's creation and the invocation's audit record
    expect(await logCount(node)).toBe(before + 2)
  })

  it.each(badCases)("$name: $status $code $reason", async ({ request, status, code, reason, mentions }) => {
    const before = await logCount(node)
    const reply = await request()
    expectError(reply, status, code, reason)
    for (const word of mentions ?? []) expect(reply.body.error.message).toContain(word)
    // anything written asynchronously would land within this
    await sleep(300)
    expect(await logCount(node)).toBe(before)
  })

  it("leaves the node a rejected update named unchanged", async () => {
    const reply = await call(node, "node.get", { nodeId: existingNodeId })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ version: 1, properties: { title: "Existing", kind: "bug" } })
  })
})

describe("the body is read only for a caller who may send it", () => {
  it("answers a stranger's malformed body 401, not 400", async () => {
    const reply = await send(node, "/v1/acme/main/node/create", { method: "POST", body: "{not json" })
    expectError(reply, 401, "unauthorized", "missing_credential")
  })
})

describe("GET /v1/auth/whoami", () => {
  const whoami = (headers: Record<string, string> = {}) => send(node, "/v1/auth/whoami", { headers })

  it("names a workspace key's key, organization and workspace, and no person", async () => {
    const reply = await whoami(bearer(node.bootstrap.workspaceKey))
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({
      authenticated: true,
      apiKeyId: expect.stringMatching(/^aky_/),
      orgId: expect.stringMatching(/^org_/),
      workspaceId: expect.stringMatching(/^wsp_/),
      userId: null
    })
  })

  it("answers workspaceId null for an organization key of the same organization", async () => {
    const workspace = await whoami(bearer(node.bootstrap.workspaceKey))
    const org = await whoami(bearer(node.bootstrap.orgKey))
    expect(org.status).toBe(200)
    expect(org.body).toEqual({
      authenticated: true,
      apiKeyId: expect.stringMatching(/^aky_/),
      orgId: workspace.body.orgId,
      workspaceId: null,
      userId: null
    })
    expect(org.body.apiKeyId).not.toBe(workspace.body.apiKeyId)
  })

  it("answers 401 missing_credential without a key", async () => {
    expectError(await whoami(), 401, "unauthorized", "missing_credential")
  })

  it("answers 401 malformed_credential for a key that is not one", async () => {
    expectError(await whoami({ authorization: "Bearer abc" }), 401, "unauthorized", "malformed_credential")
    expectError(await whoami({ authorization: `Basic ${node.bootstrap.workspaceKey}` }), 401, "unauthorized", "malformed_credential")
  })

  it("answers 401 invalid_credential for a well-formed key nobody holds", async () => {
    expectError(await whoami(bearer(unknownKey)), 401, "unauthorized", "invalid_credential")
  })

  it("answers 401 expired_credential for a key past its expiry", async () => {
    // setup only: mint a key that expired a minute ago, the way Bootstrap mints keys
    const me = await whoami(bearer(node.bootstrap.workspaceKey))
    const [owner] = await node.db.sql`select user_id from ${node.db.table("org_members")} where org_id = ${me.body.orgId} and role = 'owner'`
    const token = mintApiKey()
    const keyId = newPublicId("aky")
    const at = new Date().toISOString()
    await Effect.runPromise(
      node.host.send(
        ApiKeyActor,
        keyId,
        new CreateApiKey({
          keyId,
          orgId: me.body.orgId,
          workspaceId: me.body.workspaceId,
          createdBy: owner.user_id,
          name: "expired test key",
          lookupId: token.lookupId,
          secretHash: token.secretHash,
          scopes: {},
          expiresAt: new Date(Date.now() - 60_000).toISOString()
        }),
        { commandId: randomUUID(), at, actor: "system" }
      )
    )

    expectError(await whoami(bearer(token.raw)), 401, "unauthorized", "expired_credential")
    const before = await logCount(node)
    expectError(await call(node, "node.list", {}, { key: token.raw }), 401, "unauthorized", "expired_credential")
    await sleep(300)
    expect(await logCount(node)).toBe(before)
  })
})

describe("an organization key (spec 5, rule 3)", () => {
  it("holds no role in its own organization's workspace: 403 forbidden on workspace data", async () => {
    const reply = await call(node, "node.list", {}, { key: node.bootstrap.orgKey })
    expectError(reply, 403, "forbidden", undefined)
  })

  it("names no other organization: 403 key_scope_mismatch naming both", async () => {
    const reply = await call(node, "node.list", {}, { key: node.bootstrap.orgKey, orgSlug: "other" })
    expectError(reply, 403, "forbidden", "key_scope_mismatch")
    expect(reply.body.error.message).toContain("other/main")
    expect(reply.body.error.message).toContain("acme")
  })
})

describe("routes that do not exist", () => {
  it("answers an unknown API path, or a method the app does not serve, with 404 in the JSON error shape", async () => {
    expectError(await send(node, "/v1/nope"), 404, "not_found", "route_not_found")
    expectError(await send(node, "/api/nope"), 404, "not_found", "route_not_found")
    expectError(await send(node, "/nope", { method: "POST", body: "{}" }), 404, "not_found", "route_not_found")
  })

  it("answers a path with a malformed percent-escape with a 4xx JSON error, writing nothing", async () => {
    const before = await logCount(node)
    const reply = await send(node, "/v1/%E0%A4%A/main/node/list", { method: "POST", headers: bearer(node.bootstrap.workspaceKey), body: "{}" })
    expect(reply.status).toBeGreaterThanOrEqual(400)
    expect(reply.status).toBeLessThan(500)
    expectError(reply, reply.status, reply.status === 404 ? "not_found" : "bad_request", reply.body.error?.reason)
    await sleep(300)
    expect(await logCount(node)).toBe(before)
  })

  it("answers a POST under /v1 that names no workspace with 404", async () => {
    expectError(await send(node, "/v1/acme", { method: "POST", headers: bearer(node.bootstrap.workspaceKey), body: "{}" }), 404, "not_found", "route_not_found")
  })
})
