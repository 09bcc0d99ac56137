/**
 * `GET /openapi.json`: served without a credential, a valid OpenAPI 3.1 document (checked by
 * swagger-parser), with every REST capability of the registry at its route, and schemas that accept
 * what the node really answers.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openApiDocument } from "../../gateway/openapi.ts"
import { registry } from "../../bin/App.ts"
import { makeRegistry, restRouteOf } from "../../src/checkpoint/Capability.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, send } from "./client.ts"
import { fixtureCapability } from "../support/capabilities.ts"

let node: TestNode
let document: any
/** The document with every `$ref` resolved, as a client generator sees it. */
let resolved: any

beforeAll(async () => {
  node = await startTestNode()
  const served = await send(node, "/openapi.json")
  expect(served.status).toBe(200)
  document = served.body
  resolved = await SwaggerParser.dereference(structuredClone(document))
})

afterAll(async () => {
  await node?.stop()
})

const validator = new AjvJsonSchemaValidator()
const expectValid = (schema: object, value: unknown) => {
  const result = validator.getValidator(schema)(value)
  expect(result.errorMessage).toBeUndefined()
  expect(result.valid).toBe(true)
}

const PLACE = "/v1/{orgSlug}/{workspaceSlug}"

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document, with no definitions left where OpenAPI cannot resolve them", async () => {
    expect(document.openapi).toBe("3.1.0")
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeDefined()
    expect(JSON.stringify(document)).not.toContain("#/$defs/")
    expect(JSON.stringify(document)).toContain("#/components/schemas/Int")
  })

  it("has every REST capability of the registry at its method and path, and no capability of another surface only", () => {
    const rest = registry.all.filter((c) => c.surfaces.includes("api"))
    expect(rest.length).toBeGreaterThan(40)
    for (const capability of rest) {
      const route = restRouteOf(capability)
      const path = capability.scope === "principal" ? `/v1/${route.path}` : `${PLACE}/${route.path}`
      expect({ capability: capability.name, operationId: document.paths[path]?.[route.method === "del" ? "delete" : "post"]?.operationId }).toEqual({
        capability: capability.name,
        operationId: capability.name
      })
    }
    expect(document.paths[`${PLACE}/api-keys/revoke`].delete.operationId).toBe("api_key.revoke")
    const operationIds = Object.values(document.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId))
    const elsewhere = registry.all.filter((c) => !c.surfaces.includes("api")).map((c) => c.name)
    expect(elsewhere).toContain("a2a.message.send")
    expect(operationIds.filter((id) => elsewhere.includes(id))).toEqual([])
  })

  it("gives node.create its request schema, its result, the Svc-Position and Idempotency-Key headers and the error answers", () => {
    const create = resolved.paths[`${PLACE}/node/create`].post
    const body = create.requestBody.content["application/json"].schema
    expect(body.required).toEqual(["label", "properties"])
    expect(body.additionalProperties).toBe(false)
    expect(create.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual(["path:orgSlug", "path:workspaceSlug", "header:Svc-Position", "header:Idempotency-Key"])
    expect(create.responses["200"].headers["Svc-Position"]).toBeDefined()
    expect(create.responses["200"].content["application/json"].schema.required).toContain("nodeId")
    expect(Object.keys(create.responses).sort()).toEqual(["200", "400", "401", "403", "404", "409", "413", "422", "503", "default"])
    const raw = document.paths[`${PLACE}/node/create`].post.responses
    expect(raw["409"]).toEqual({ $ref: "#/components/responses/Conflict" })
    expect(raw["503"]).toEqual({ $ref: "#/components/responses/Unavailable" })
    // a read binds no Idempotency-Key, so it cannot be refused 422, and has no conflict to answer
    expect(Object.keys(resolved.paths[`${PLACE}/node/get`].post.responses).sort()).toEqual(["200", "400", "401", "403", "404", "413", "503", "default"])
    expect(Object.keys(document.components.responses)).toEqual(
      expect.arrayContaining(["BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "UnprocessableContent", "RateLimited", "Unavailable"])
    )
    expect(document.components.responses.RateLimited.headers["Retry-After"]).toBeDefined()
  })

  it("describes the routes that are not capabilities, and the credentials", () => {
    const { paths, components } = resolved
    expect(paths["/v1/auth/sign-in"].post.security).toEqual([])
    expect(paths["/v1/auth/sign-in"].post.requestBody.content["application/json"].schema.required).toEqual(["email", "password"])
    expect(paths["/v1/auth/sign-out"].post.security).toEqual([{ session: [] }])
    expect(Object.keys(paths["/v1/auth/whoami"]).sort()).toEqual(["get", "post"])
    expect(paths["/v1/auth/whoami"].get.responses["200"].content["application/json"].schema.required).toContain("authenticated")
    for (const path of ["/v1/auth/device/code", "/v1/auth/device/token", "/a2a", "/mcp"]) expect(paths[path].post).toBeDefined()
    expect(paths["/v1/auth/mfa/enroll"].post.operationId).toBe("auth.mfa.enroll")
    expect(paths[`${PLACE}/auth/device/approve`].post.operationId).toBe("auth.device.approve")
    expect(paths["/healthz"].get.security).toEqual([])
    expect(Object.keys(paths[`${PLACE}/chat/stream`].post.responses["200"].content)).toEqual(["text/event-stream"])
    expect(paths[`${PLACE}/chat/stream`].post.responses["429"].content["application/json"].schema.properties.error).toEqual({ const: "rate_limited" })
    // a node full of turns refuses before any stream opens (docs/decisions.md, "Admission control")
    expect(paths[`${PLACE}/chat/stream`].post.responses["503"].description).toMatch(/engine_unavailable/)
    expect(paths[`${PLACE}/chat/stream`].post.responses["503"].headers["Retry-After"]).toBeDefined()
    // the resume route: GET by the turn's id, with Last-Event-ID; 204 when the caller has no such turn
    const resume = paths[`${PLACE}/chat/turns/{turnId}/stream`].get
    expect(resume.operationId).toBe("assistant.turn.stream.get")
    expect(resume.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(["turnId", "Last-Event-ID", "lastEventId"]))
    expect(Object.keys(resume.responses["200"].content)).toEqual(["text/event-stream"])
    expect(resume.responses["204"]).toBeDefined()
    expect(resume.requestBody).toBeUndefined()
    // the AI SDK useChat routes: the UI message stream, its resume by chat id (204 when none runs), the stop
    const ui = paths[`${PLACE}/chat/ui`].post
    expect(ui.operationId).toBe("assistant.chat.ui")
    expect(Object.keys(ui.requestBody.content["application/json"].schema.properties)).toEqual(expect.arrayContaining(["id", "messages", "trigger"]))
    expect(Object.keys(ui.responses["200"].content)).toEqual(["text/event-stream"])
    expect(ui.responses["200"].headers["x-vercel-ai-ui-message-stream"].schema).toEqual({ const: "v1" })
    const uiResume = paths[`${PLACE}/chat/ui/{id}/stream`].get
    expect(uiResume.parameters.map((p: any) => p.name)).toContain("id")
    expect(Object.keys(uiResume.responses)).toEqual(expect.arrayContaining(["200", "204"]))
    expect(uiResume.requestBody).toBeUndefined()
    const uiStop = paths[`${PLACE}/chat/ui/{id}/stop`].post
    expect(uiStop.requestBody).toBeUndefined()
    expect(uiStop.responses["200"].content["application/json"].schema.required).toEqual(["found"])
    // the AG-UI route: RunAgentInput in, AG-UI events out
    const agui = paths[`${PLACE}/agui`].post
    expect(agui.operationId).toBe("assistant.chat.agui")
    expect(Object.keys(agui.requestBody.content["application/json"].schema.properties)).toEqual(expect.arrayContaining(["threadId", "runId", "messages", "resume"]))
    expect(Object.keys(agui.responses["200"].content)).toEqual(["text/event-stream"])
    expect(agui.responses["200"].description).toContain("RUN_FINISHED")
    const connect = paths[`${PLACE}/agui/connect`].post
    expect(connect.operationId).toBe("assistant.chat.agui.connect")
    expect(Object.keys(connect.responses["200"].content)).toEqual(["text/event-stream"])
    const ask = paths[`${PLACE}/assistant/ask`].post
    expect(Object.keys(ask.requestBody.content["application/json"].schema.properties)).not.toContain("tier")
    expect(ask.responses["200"].content["application/json"].schema.required).toContain("conversationPublicId")
    expect(Object.keys(paths[`${PLACE}/assistant/attachments/upload`].post.requestBody.content)).toEqual(["multipart/form-data"])
    expect(components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: "http", scheme: "bearer" }),
      session: expect.objectContaining({ type: "apiKey", in: "cookie", name: "svc_session" })
    })
    expect(document.security).toEqual([{ apiKey: [] }, { session: [] }])
  })

  it("accepts what the node answers: node.create's result and a refusal", async () => {
    const defined = await call(node, "schema.define_label", { label: "Ticket", properties: { title: { type: "string", required: true } } })
    expect(defined.status).toBe(200)
    const create = resolved.paths[`${PLACE}/node/create`].post
    const created = await call(node, "node.create", { label: "Ticket", properties: { title: "Printer on fire" } })
    expect(created.status).toBe(200)
    expectValid(create.responses["200"].content["application/json"].schema, created.body)
    const refused = await call(node, "node.create", { label: "Ticket" })
    expect(refused.status).toBe(400)
    expectValid(create.responses["400"].content["application/json"].schema, refused.body)
    const whoami = await send(node, "/v1/auth/whoami", { headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}` } })
    expectValid(resolved.paths["/v1/auth/whoami"].get.responses["200"].content["application/json"].schema, whoami.body)
  })
})

describe("schema definitions moved to components", () => {
  const capability = (name: string, input: Schema.Schema<any, any>) =>
    fixtureCapability(name, { input, output: Schema.Struct({}), surfaces: ["api"], handler: () => Effect.succeed({}) })

  it("keep one component per identifier and content: the same again is shared, another under a taken name gets its own", async () => {
    const Name = Schema.String.annotations({ identifier: "Name" })
    const OtherName = Schema.Number.annotations({ identifier: "Name" })
    const built = openApiDocument(makeRegistry([
      capability("a.first", Schema.Struct({ name: Name })),
      capability("a.again", Schema.Struct({ also: Name })),
      capability("a.other", Schema.Struct({ name: OtherName }))
    ])) as any
    await expect(SwaggerParser.validate(structuredClone(built))).resolves.toBeDefined()
    const schemaOf = (path: string) => built.paths[`${PLACE}/${path}`].post.requestBody.content["application/json"].schema
    expect(schemaOf("a/first").properties.name).toEqual({ $ref: "#/components/schemas/Name" })
    expect(schemaOf("a/again").properties.also).toEqual({ $ref: "#/components/schemas/Name" })
    expect(schemaOf("a/other").properties.name).toEqual({ $ref: "#/components/schemas/Name_2" })
    expect(built.components.schemas.Name.type).toBe("string")
    expect(built.components.schemas.Name_2.type).toBe("number")
  })
})
