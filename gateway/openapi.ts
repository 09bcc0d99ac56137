/**
 * `GET /openapi.json`: the HTTP surface as an OpenAPI 3.1 document. Every capability on the `api`
 * surface is an operation derived from the registry: its route, its request body from `input` (the
 * schema the checkpoint decodes with) and its answer from `output`, both through the JSON Schemas
 * MCP and the agent's tools use (src/checkpoint/ToolSchemas.ts). The routes the gateway frames itself (sign-in,
 * device login, SSO, the chat stream, uploads, A2A, MCP, health) are described here by hand.
 */
import { Schema } from "effect"
import { isDeepStrictEqual } from "node:util"
import { MAX_ATTACHMENTS } from "../src/assistant/Files.ts"
import { A2A_METHODS, PUSH_CONFIG_PREFIX } from "../src/a2a/Protocol.ts"
import { V1_METHODS } from "../src/a2a/V1.ts"
import { SESSION_COOKIE } from "../src/identity/Auth.ts"
import { type AnyCapability, type Registry, restRouteOf } from "../src/checkpoint/Capability.ts"
import { ChatRequest } from "../src/assistant/Api.ts"
import { MODEL_OVERRIDE_FIELDS } from "../src/assistant/Assistant.ts"
import { SSO_CALLBACK_PATH } from "../src/identity/Organization.ts"
import { isObject, type JsonObject, objectSchemaOf } from "../src/checkpoint/ToolSchemas.ts"
import { TurnResult } from "../src/platform/Wire.ts"

/** The ask route's request: the chat request without the model override fields it refuses (spec 4.1). */
const AskRequest = ChatRequest.pipe(Schema.omit(...MODEL_OVERRIDE_FIELDS))

const ref = (kind: "schemas" | "responses" | "parameters" | "headers", name: string) => ({ $ref: `#/components/${kind}/${name}` })
const json = (schema: JsonObject) => ({ "application/json": { schema } })
const str = { type: "string" }
const int = { type: "integer" }
const object = (properties: Record<string, JsonObject>, required: ReadonlyArray<string> = Object.keys(properties)) => ({
  type: "object",
  required,
  properties,
  additionalProperties: false
})

/**
 * `components/schemas`, filled from the `$defs` of derived schemas: Effect writes them draft-style
 * at each schema's root, where OpenAPI resolves `#/...` against the whole document.
 */
class SchemaComponents {
  constructor(readonly schemas: Record<string, JsonObject>) {}

  /** The schema with its definitions moved to `components/schemas` and its references pointing there. */
  add(schema: JsonObject): JsonObject {
    const { $defs, ...root } = schema
    // copies: the derived schemas are the tool schemas' too, kept for the node's life
    const defs = Object.entries(isObject($defs) ? $defs : {}) as Array<[string, JsonObject]>
    const tries = new Map(defs.map(([name]) => [name, 0]))
    const names = new Map<string, string>()
    /** The definition's next candidate name: its own, then with a suffix, never one another of these holds. */
    const next = (name: string) => {
      let candidate: string
      do {
        const n = tries.get(name)! + 1
        tries.set(name, n)
        candidate = n === 1 ? componentName(name) : `${componentName(name)}_${n}`
      } while ([...names].some(([other, taken]) => other !== name && taken === candidate))
      names.set(name, candidate)
    }
    for (const [name] of defs) next(name)
    // a name held with other content moves on; moving one definition changes those that refer to
    // it, so until none moves (names only move forward, so this ends)
    for (let moved = true; moved; ) {
      moved = false
      for (const [name, def] of defs) {
        const held = this.schemas[names.get(name)!]
        if (held !== undefined && !isDeepStrictEqual(held, pointRefs(def, names))) {
          next(name)
          moved = true
        }
      }
    }
    for (const [name, def] of defs) this.schemas[names.get(name)!] ??= pointRefs(def, names)
    return pointRefs(root, names)
  }
}

/** Component names are `[A-Za-z0-9._-]+`. */
const componentName = (identifier: string) => identifier.replace(/[^A-Za-z0-9._-]/g, "_") || "Schema"

/** A copy of `value` whose `#/$defs/<name>` references (JSON pointers, `~` and `/` escaped) point at `names`' components. */
const pointRefs = (value: JsonObject, names: ReadonlyMap<string, string>): JsonObject => {
  const targets = new Map([...names].map(([name, component]) => [`#/$defs/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`, `#/components/schemas/${component}`]))
  const go = (node: unknown, key: string | undefined): unknown => {
    if (key === "$ref" && typeof node === "string") return targets.get(node) ?? node
    if (Array.isArray(node)) return node.map((item) => go(item, undefined))
    if (isObject(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, go(v, k)]))
    return node
  }
  return go(value, undefined) as JsonObject
}

const errorResponse = (description: string, extra: JsonObject = {}) => ({ description, ...extra, content: json(ref("schemas", "Error")) })

const RETRY_AFTER = { headers: { "Retry-After": ref("headers", "RetryAfter") } }

/** Every error answer is `{ error: { code, reason?, message } }` (gateway/errors.ts); spec 7 names the codes. */
const RESPONSES = {
  BadRequest: errorResponse(
    "`bad_request`: the body is not JSON, nests more than 64 levels, or a field breaks its rule; `reason` says which (`invalid_json`, `json_too_deep`, `invalid_input`, `invalid_position`, ...). Chat routes: also `attachment_refused`."
  ),
  Unauthorized: errorResponse("`unauthorized`: the key or session is missing, malformed, invalid or expired."),
  PaymentRequired: errorResponse(
    "A billing or spend limit stops the turn: `insufficient_credits`, `billing_suspended`, `assistant_spend_cap`, `workspace_budget_spent`, `assistant_model_key_limit`."
  ),
  Forbidden: errorResponse(
    "`forbidden`: the caller may not do this; `reason` such as `key_scope_mismatch`, `sso_required`, `mfa_required`, `session_required`, `no_principal`, `kill_switch`."
  ),
  NotFound: errorResponse("`not_found`: `reason` names what is missing (`workspace_not_found`, `unknown_capability`, `node_not_found`, `model_tier_not_found`, ...)."),
  Conflict: errorResponse("`conflict`: the state does not allow it; `reason` says why (`approval_expired`, `node_exists`, `idempotent_replay_secret`, `model_tier_key_missing`, `schedule_limit_reached`, ...)."),
  PayloadTooLarge: errorResponse("`payload_too_large`: the body is over the node's limit; the connection is closed."),
  UnprocessableContent: errorResponse("`unprocessable_content`, reason `idempotency_key_reused`: the Idempotency-Key was first sent with another request."),
  RateLimited: errorResponse("`rate_limited`: too many attempts; retry after `Retry-After` seconds.", RETRY_AFTER),
  ChatRateLimited: {
    description: "The workspace sent too many chat requests, or the key or the workspace runs or follows as many turns as its share allows; the body is `{ \"error\": \"rate_limited\" }` (spec 7.1); retry after `Retry-After` seconds.",
    ...RETRY_AFTER,
    content: json({ type: "object", required: ["error"], properties: { error: { const: "rate_limited" } } })
  },
  Unavailable: errorResponse(
    "`unavailable`: storage, the log or the read models did not answer in time (`reason` `read_model_behind`, `owner_unreachable`, `database_unavailable`, `log_unavailable`, ...), the node holds as many commands as it queues (`queued_commands`), or it is stopping (`draining`: the connection is closed, and another node answers the retry); retry after `Retry-After` seconds.",
    RETRY_AFTER
  ),
  ChatUnavailable: errorResponse(
    "`engine_unavailable`: the node starts, runs or serves as many turns or streams as it may (`reason` `turns_starting`, `turns_running`, `open_streams`), answered before any stream opens; or `unavailable` as on other routes. Retry after `Retry-After` seconds.",
    RETRY_AFTER
  ),
  Error: errorResponse("Any other failure, in the same shape (`internal` on 500, `bad_gateway` on 502, ...).")
} as const

type ResponseName = keyof typeof RESPONSES

const STATUS_OF: Readonly<Record<Exclude<ResponseName, "Error">, string>> = {
  BadRequest: "400",
  Unauthorized: "401",
  PaymentRequired: "402",
  Forbidden: "403",
  NotFound: "404",
  Conflict: "409",
  PayloadTooLarge: "413",
  UnprocessableContent: "422",
  RateLimited: "429",
  ChatRateLimited: "429",
  Unavailable: "503",
  ChatUnavailable: "503"
}

/** The error answers of an operation, by name, and `default` for the rest. */
const errors = (...names: ReadonlyArray<Exclude<ResponseName, "Error">>) => ({
  ...Object.fromEntries(names.map((name) => [STATUS_OF[name], ref("responses", name)])),
  default: ref("responses", "Error")
})

/** What the checkpoint can answer for any capability; a write also 409 and 422 (its Idempotency-Key binds). */
const capabilityErrors = (capability: AnyCapability) =>
  capability.mutating
    ? errors("BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "PayloadTooLarge", "UnprocessableContent", "Unavailable")
    : errors("BadRequest", "Unauthorized", "Forbidden", "NotFound", "PayloadTooLarge", "Unavailable")

const PLACE = [ref("parameters", "orgSlug"), ref("parameters", "workspaceSlug")]
const PUBLIC: ReadonlyArray<JsonObject> = []
const BEARER_ONLY = [{ apiKey: [] }]

const placePath = (path: string) => `/v1/{orgSlug}/{workspaceSlug}/${path}`

const pathOf = (capability: AnyCapability) => {
  const { path } = restRouteOf(capability)
  return capability.scope === "principal" ? `/v1/${path}` : placePath(path)
}

/** Who may call it, in words. */
const accessOf = (capability: AnyCapability) => {
  const grants = capability.roles.map((grant) => (grant === "person" ? "any signed-in person" : grant))
  return [
    grants.length === 0 ? undefined : `Allowed: ${grants.join(", ")}.`,
    capability.machines === undefined ? undefined : `Machine credentials: ${capability.machines.join(", ")}.`,
    capability.requiresPerson === true ? "Needs a signed-in session or a CLI login; an API key is refused (403 `session_required`)." : undefined
  ].filter((line) => line !== undefined).join(" ")
}

/**
 * A capability's operation. `positions`: whether its route reads `Svc-Position` and answers it (the
 * capability routes do; the chat and upload routes, which frame their own answers, do not).
 */
const capabilityOperation = (capability: AnyCapability, schemas: SchemaComponents, { positions = true } = {}) => {
  const input = objectSchemaOf(capability.input)
  const output = objectSchemaOf(capability.output)
  return {
    operationId: capability.name,
    description: `${capability.description}\n\n${accessOf(capability)}`,
    parameters: [
      ...(capability.scope === "principal" ? [] : PLACE),
      ...(positions ? [ref("parameters", "Position")] : []),
      ...(capability.mutating ? [ref("parameters", "IdempotencyKey")] : [])
    ],
    ...(input === undefined ? {} : { requestBody: { required: true, content: json(schemas.add(input)) } }),
    responses: {
      "200": {
        description: "The capability's result.",
        ...(positions ? { headers: { "Svc-Position": ref("headers", "Position") } } : {}),
        ...(output === undefined ? {} : { content: json(schemas.add(output)) })
      },
      ...capabilityErrors(capability)
    },
    "x-capability": {
      name: capability.name,
      scope: capability.scope,
      roles: capability.roles,
      surfaces: capability.surfaces,
      sensitivity: capability.sensitivity,
      mutating: capability.mutating,
      destructive: capability.destructive,
      needsApproval: capability.needsApproval
    }
  }
}

const SESSION_STARTED = object({ userId: str, sessionId: str, expiresAt: str })

const SET_COOKIE = { "Set-Cookie": { description: `The \`${SESSION_COOKIE}\` cookie (HttpOnly, SameSite=Lax).`, schema: str } }

const JSON_RPC_REQUEST = {
  type: "object",
  required: ["jsonrpc", "method"],
  properties: {
    jsonrpc: { const: "2.0" },
    id: { type: ["string", "number", "null"] },
    method: { type: "string", description: `A2A 0.3 (no A2A-Version header): one of ${A2A_METHODS.join(", ")}; \`${PUSH_CONFIG_PREFIX}*\` always answers -32003. A2A 1.0 (A2A-Version: 1.0): one of ${Object.keys(V1_METHODS).join(", ")}; its push-notification config methods answer -32003.` },
    params: { type: "object" }
  }
}

type Paths = Record<string, Record<string, JsonObject>>

/** The node's own documents: health, this document, the Agent Card, MCP's resource metadata. */
const discoveryRoutes = (): Paths => ({
  "/healthz": {
    get: {
      operationId: "healthz",
      summary: "This node's health: its log, and the partitions it owns.",
      security: PUBLIC,
      responses: {
        "200": {
          description: "The node is up.",
          content: json(object({
            status: { const: "ok" },
            nodeId: str,
            log: object({ mode: str, partitions: int }),
            partitions: object({ owned: { type: "array", items: int }, ready: { type: "array", items: int }, cachedKeys: int })
          }))
        }
      }
    }
  },
  "/readyz": {
    get: {
      operationId: "readyz",
      summary: "Whether this node takes requests: false once it was told to stop and drains the requests and turns it took.",
      security: PUBLIC,
      responses: {
        "200": { description: "The node takes requests.", content: json(object({ status: { const: "ready" }, nodeId: str })) },
        "503": ref("responses", "Unavailable")
      }
    }
  },
  "/openapi.json": {
    get: { operationId: "openapi", summary: "This document.", security: PUBLIC, responses: { "200": { description: "OpenAPI 3.1.", content: json({ type: "object" }) } } }
  },
  "/.well-known/agent-card.json": {
    get: { operationId: "a2a.card", summary: "The public A2A Agent Card (v0.3).", security: PUBLIC, responses: { "200": { description: "The Agent Card.", content: json({ type: "object" }) } } }
  },
  "/.well-known/jwks.json": {
    get: { operationId: "a2a.card.jwks", summary: "The JWK Set holding the public key of the A2A 1.0 card's signatures (their `jku`).", security: PUBLIC, responses: { "200": { description: "A JWK Set.", content: json({ type: "object" }) } } }
  },
  "/.well-known/oauth-protected-resource": {
    get: { operationId: "mcp.resource_metadata", summary: "RFC 9728 metadata of the MCP endpoint.", security: PUBLIC, responses: { "200": { description: "Protected-resource metadata.", content: json({ type: "object" }) } } }
  },
})

/** Sign-in, sign-out, CLI logins and SSO, which the gateway frames itself. */
const authRoutes = (registry: Registry, schemas: SchemaComponents): Paths => {
  const whoami = registry.byName.get("auth.whoami")
  const whoamiOutput = whoami === undefined ? undefined : objectSchemaOf(whoami.output)
  return {
    "/v1/auth/whoami": {
      get: {
        operationId: "auth.whoami.get",
        summary: "Who the Bearer credential is (spec 2.6).",
        security: BEARER_ONLY,
        responses: {
          "200": { description: "The credential's identity.", ...(whoamiOutput === undefined ? {} : { content: json(schemas.add(whoamiOutput)) }) },
          ...errors("Unauthorized", "Forbidden", "Unavailable")
        }
      }
    },
    "/v1/auth/sign-in": {
      post: {
        operationId: "auth.sign_in",
        summary: "Sign in with email and password (and the TOTP code once two-factor is on); sets the session cookie.",
        security: PUBLIC,
        requestBody: { required: true, content: json(object({ email: { type: "string", maxLength: 320 }, password: { type: "string", maxLength: 1024 }, code: { type: "string", maxLength: 16 } }, ["email", "password"])) },
        responses: {
          "200": { description: "Signed in.", headers: SET_COOKIE, content: json(SESSION_STARTED) },
          ...errors("BadRequest", "Unauthorized", "PayloadTooLarge", "RateLimited", "Unavailable")
        }
      }
    },
    "/v1/auth/sign-out": {
      post: {
        operationId: "auth.sign_out",
        summary: "End the session; clears the session cookie.",
        security: [{ session: [] }],
        responses: {
          "200": { description: "Signed out.", headers: SET_COOKIE, content: json(object({ signedOut: { const: true } })) },
          ...errors("Unauthorized", "Unavailable")
        }
      }
    },
    "/v1/auth/device/code": {
      post: {
        operationId: "auth.device.code",
        summary: "Start a CLI login (RFC 8628 device authorization): a device code and a user code for a person to approve.",
        security: PUBLIC,
        requestBody: {
          content: {
            "application/json": { schema: object({ clientName: { type: "string", minLength: 1, maxLength: 100 } }, []) },
            "application/x-www-form-urlencoded": { schema: { type: "object", properties: { clientName: str } } }
          }
        },
        responses: {
          "200": { description: "RFC 8628 section 3.2.", content: json(object({ device_code: str, user_code: str, verification_uri: str, verification_uri_complete: str, expires_in: int, interval: int })) },
          ...errors("BadRequest", "PayloadTooLarge", "Unavailable")
        }
      }
    },
    "/v1/auth/device/token": {
      post: {
        operationId: "auth.device.token",
        summary: "The CLI's poll for its login (RFC 8628 section 3.4).",
        security: PUBLIC,
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: object({ device_code: str, grant_type: str }, ["device_code"]) },
            "application/x-www-form-urlencoded": { schema: { type: "object", required: ["device_code"], properties: { device_code: str, grant_type: str } } }
          }
        },
        responses: {
          "200": { description: "Approved: a key acting as the approving person.", content: json(object({ access_token: str, token_type: { const: "Bearer" }, key_id: str, expires_in: int })) },
          "400": {
            description: "RFC 8628 section 3.5: `authorization_pending`, `slow_down`, `access_denied`, `expired_token`, `invalid_grant`, `invalid_request`, `unsupported_grant_type`.",
            content: json(object({ error: str, error_description: str }))
          },
          ...errors("PayloadTooLarge", "Unavailable")
        }
      }
    },
    "/v1/auth/sso/providers": {
      get: {
        operationId: "auth.sso.providers",
        summary: "The organization's verified OIDC providers, for a sign-in page to offer; an unknown organization has none.",
        security: PUBLIC,
        parameters: [{ name: "org", in: "query", required: true, schema: str }],
        responses: {
          "200": { description: "The providers, oldest first.", content: json(object({ providers: { type: "array", items: object({ id: str, name: str }) } })) },
          ...errors("BadRequest", "Unavailable")
        }
      }
    },
    "/v1/auth/sso/start": {
      get: {
        operationId: "auth.sso.start",
        summary: "Start signing in through one of the organization's verified OIDC providers.",
        security: PUBLIC,
        parameters: [
          { name: "org", in: "query", required: true, schema: str },
          { name: "provider", in: "query", required: true, schema: str }
        ],
        responses: { "302": { description: "To the provider's authorization URL; sets the short-lived `svc_sso` cookie." }, ...errors("BadRequest", "NotFound", "Conflict", "Unavailable") }
      }
    },
    [SSO_CALLBACK_PATH]: {
      get: {
        operationId: "auth.sso.callback",
        summary: "The provider's redirect back: finishes the SSO sign-in and sets the session cookie.",
        security: PUBLIC,
        parameters: [
          { name: "code", in: "query", required: true, schema: str },
          { name: "state", in: "query", required: true, schema: str }
        ],
        responses: {
          "200": { description: "Signed in (when the request accepts application/json).", headers: SET_COOKIE, content: json(SESSION_STARTED) },
          "302": { description: "Signed in; to `/`.", headers: SET_COOKIE },
          ...errors("BadRequest", "Unauthorized", "Forbidden", "Unavailable")
        }
      }
    },
  }
}

/** The protocol endpoints: A2A's JSON-RPC and MCP's Streamable HTTP. */
const protocolRoutes = (): Paths => ({
  "/a2a": {
    post: {
      operationId: "a2a",
      summary: "A2A v0.3 and 1.0 over JSON-RPC 2.0 (spec 4.3), chosen by the A2A-Version header: one request, or a batch.",
      security: BEARER_ONLY,
      parameters: [ref("parameters", "Position")],
      requestBody: { required: true, content: json({ oneOf: [JSON_RPC_REQUEST, { type: "array", items: JSON_RPC_REQUEST, minItems: 1 }] }) },
      responses: {
        "200": {
          description: "JSON-RPC responses (method errors in `error`, spec 7.4); `message/stream` and `tasks/resubscribe` answer with SSE, one JSON-RPC response per `data:` line.",
          headers: { "Svc-Position": ref("headers", "Position") },
          content: { "application/json": { schema: { type: ["object", "array"] } }, "text/event-stream": { schema: str } }
        },
        "204": { description: "A batch of notifications only." },
        ...errors("Unauthorized", "PayloadTooLarge")
      }
    }
  },
  "/mcp": {
    post: {
      operationId: "mcp",
      summary: "MCP, stateless Streamable HTTP (spec 4.2): every capability on the MCP surface is a tool.",
      security: BEARER_ONLY,
      requestBody: { required: true, content: json({ type: ["object", "array"] }) },
      responses: {
        "200": { description: "The MCP answer.", content: { "application/json": { schema: { type: ["object", "array"] } }, "text/event-stream": { schema: str } } },
        "401": { description: "No valid credential; `WWW-Authenticate` points to the protected-resource metadata.", content: json(ref("schemas", "Error")) },
        ...errors("PayloadTooLarge")
      }
    },
    get: { operationId: "mcp.get", summary: "A stateless server opens no standalone stream.", security: PUBLIC, responses: { "405": { description: "Method not allowed." } } },
    delete: { operationId: "mcp.delete", summary: "A stateless server has no session to end.", security: PUBLIC, responses: { "405": { description: "Method not allowed." } } }
  }
})

/** The routes the gateway frames itself, by path and method. */
const handDescribed = (registry: Registry, schemas: SchemaComponents): Paths => ({
  ...discoveryRoutes(),
  ...authRoutes(registry, schemas),
  ...protocolRoutes()
})

/** The chat routes (gateway/chat.ts) invoke `ask_assistant`, and frame the turn it starts. */
const chatOperations = (ask: AnyCapability, schemas: SchemaComponents) => {
  const derived = capabilityOperation(ask, schemas, { positions: false })
  const chatErrors = errors("BadRequest", "Unauthorized", "PaymentRequired", "Forbidden", "NotFound", "Conflict", "PayloadTooLarge", "UnprocessableContent", "ChatRateLimited", "ChatUnavailable")
  const askInput = objectSchemaOf(AskRequest)
  return {
    stream: {
      ...derived,
      summary: "Run one assistant turn as Server-Sent Events (spec 4.1, 6.1).",
      responses: {
        "200": {
          description: "`data:` lines of JSON events (`run` first, `usage` last), `: keep-alive` every 15 s while quiet, and the named event `done` with the turn result, or `[DONE]` after an `error` event.",
          content: { "text/event-stream": { schema: str } }
        },
        ...chatErrors
      }
    },
    ask: {
      ...derived,
      operationId: `${ask.name}.ask`,
      summary: "Run one assistant turn and answer with its result (spec 4.1, 2.3); refuses the model override fields.",
      ...(askInput === undefined ? {} : { requestBody: { required: true, content: json(schemas.add(askInput)) } }),
      responses: { "200": { description: "The turn result.", content: json(ref("schemas", "TurnResult")) }, ...chatErrors }
    }
  }
}

/** The resume routes (gateway/chat.ts) invoke `assistant.turn.stream`, and frame the turn it follows. */
const RESUME_CAPABILITY = "assistant.turn.stream"

const resumeOperations = (resume: AnyCapability, schemas: SchemaComponents) => {
  const derived = capabilityOperation(resume, schemas)
  const resumeErrors = errors("BadRequest", "Unauthorized", "Forbidden", "ChatRateLimited", "ChatUnavailable")
  const responses = {
    "200": {
      description:
        "The turn's stream after the last event the client saw: each event with its `id:` (its place in the turn's stream, 1 for `run`), then the rest as the turn goes on, " +
        "ending with the same named event `done` as the turn's own stream (the turn result, or `[DONE]` after an `error` event). A client that saw `done` is sent nothing more.",
      content: { "text/event-stream": { schema: str } }
    },
    "204": { description: "The caller has no such turn (another person's turns included)." },
    ...resumeErrors
  }
  const lastEventId = {
    name: "Last-Event-ID",
    in: "header",
    required: false,
    description: "The `id:` of the last event the client saw (an EventSource sends it again on its own); none: from the start.",
    schema: { type: "string", pattern: "^\\d{1,9}$" }
  }
  return {
    get: {
      ...derived,
      operationId: `${resume.name}.get`,
      summary: "Resume a turn's chat stream after Last-Event-ID, from any node, while the turn runs or after it ended.",
      parameters: [
        ...derived.parameters,
        { name: "turnId", in: "path", required: true, description: "The turn's runId (tse_), or the turnId its person sent.", schema: { type: "string", maxLength: 100 } },
        lastEventId,
        { name: "lastEventId", in: "query", required: false, description: "As the `Last-Event-ID` header, for a client that cannot send it.", schema: { type: "string", pattern: "^\\d{1,9}$" } }
      ],
      responses
    },
    post: {
      ...derived,
      summary: "Resume a turn's chat stream, the turn named in the body (as the GET route).",
      parameters: [...derived.parameters, lastEventId],
      responses
    }
  }
}

/**
 * The AI SDK useChat routes (gateway/chat.ts, src/assistant/UiMessageStream.ts): the turn and its
 * resume as the SDK's UI message stream, and the stop; the resume and the stop also name the chat in the path.
 */
const UI_CHAT_CAPABILITIES = { chat: "assistant.chat.ui", resume: "assistant.chat.ui.stream", stop: "assistant.chat.ui.stop" } as const

const uiChatPaths = (registry: Registry, schemas: SchemaComponents): Paths => {
  const chat = registry.byName.get(UI_CHAT_CAPABILITIES.chat)
  const resume = registry.byName.get(UI_CHAT_CAPABILITIES.resume)
  const stop = registry.byName.get(UI_CHAT_CAPABILITIES.stop)
  if (chat === undefined || resume === undefined || stop === undefined) return {}
  const uiStream = {
    description:
      "The AI SDK UI message stream, protocol v1 (header `x-vercel-ai-ui-message-stream: v1`): one JSON chunk per `data:` line " +
      "(`start`, `start-step`, `text-*`, `reasoning-*`, `tool-input-*`, `tool-output-*`, `tool-approval-request`, `data-question`, `finish-step`, `error`, `finish` with the usage in its metadata), then `data: [DONE]`.",
    headers: { "x-vercel-ai-ui-message-stream": { description: "`v1`.", schema: { const: "v1" } } },
    content: { "text/event-stream": { schema: str } }
  }
  const chatId = { name: "id", in: "path", required: true, description: "The useChat chat id.", schema: { type: "string", minLength: 1, maxLength: 100 } }
  const derivedChat = capabilityOperation(chat, schemas, { positions: false })
  const derivedResume = capabilityOperation(resume, schemas)
  const { requestBody: _resumeBody, ...resumeByPath } = derivedResume
  const { requestBody: _stopBody, ...stopByPath } = capabilityOperation(stop, schemas)
  const resumeResponses = {
    "200": { ...uiStream, description: `The chat's running turn from its start (useChat's resume replays it). ${uiStream.description}` },
    "204": { description: "No turn of the chat runs." },
    ...errors("BadRequest", "Unauthorized", "Forbidden", "ChatRateLimited", "ChatUnavailable")
  }
  return {
    [pathOf(chat)]: {
      post: {
        ...derivedChat,
        summary: "Run one assistant turn for useChat (its request body), answered as the AI SDK UI message stream; or resolve the approvals its last message answers.",
        responses: {
          "200": uiStream,
          ...errors("BadRequest", "Unauthorized", "PaymentRequired", "Forbidden", "NotFound", "Conflict", "PayloadTooLarge", "UnprocessableContent", "ChatRateLimited", "ChatUnavailable")
        }
      }
    },
    [pathOf(resume)]: { post: { ...derivedResume, summary: "Resume a chat's running turn, the chat named in the body (as the GET route).", responses: resumeResponses } },
    [placePath("chat/ui/{id}/stream")]: {
      get: { ...resumeByPath, operationId: `${resume.name}.get`, summary: "Resume a chat's running turn (the AI SDK's resumable-stream route).", parameters: [...resumeByPath.parameters, chatId], responses: resumeResponses }
    },
    [placePath("chat/ui/{id}/stop")]: {
      post: { ...stopByPath, operationId: `${stop.name}.byPath`, summary: "Stop a chat's running turn (the AI SDK's stop-endpoint route).", parameters: [...stopByPath.parameters, chatId] }
    }
  }
}

/** The AG-UI routes (gateway/chat.ts, src/assistant/AgUi.ts): RunAgentInput in, AG-UI 1.0 events out over SSE; the run, and the connect to a thread's running run. */
const AG_UI_CAPABILITIES = { run: "assistant.chat.agui", connect: "assistant.chat.agui.connect" } as const

const agUiPaths = (registry: Registry, schemas: SchemaComponents): Paths => {
  const run = registry.byName.get(AG_UI_CAPABILITIES.run)
  const connect = registry.byName.get(AG_UI_CAPABILITIES.connect)
  if (run === undefined || connect === undefined) return {}
  return {
    [pathOf(connect)]: {
      post: {
        ...capabilityOperation(connect, schemas, { positions: false }),
        summary: "Connect an AG-UI client (its connectAgent) to the thread's running turn: the run's events from its first, then live to its end.",
        responses: {
          "200": {
            description: "AG-UI 1.0 events as the run route streams them, from the running turn's start; no events when no turn of the thread runs. Leaving the stream stops nothing.",
            content: { "text/event-stream": { schema: str } }
          },
          ...errors("BadRequest", "Unauthorized", "Forbidden")
        }
      }
    },
    [pathOf(run)]: {
      post: {
        ...capabilityOperation(run, schemas, { positions: false }),
        summary: "Run one assistant turn for an AG-UI client (its RunAgentInput), answered as AG-UI 1.0 events; or answer the interrupts a previous run ended with (its resume).",
        responses: {
          "200": {
            description:
              "AG-UI 1.0 events, one JSON event per `data:` line: `RUN_STARTED`, `TEXT_MESSAGE_*`, `TOOL_CALL_START`/`ARGS`/`END`/`RESULT`, `CUSTOM` named `question` for a question asked and ended, then `RUN_FINISHED` " +
              "(outcome `success`; `interrupt` with one `tool_approval` interrupt per call parked for approval; `cancelled` when stopped; the turn's `usage`) or `RUN_ERROR`. " +
              "A client that leaves the stream before `RUN_FINISHED` (its `abortRun`) stops the turn, as `assistant/turn/cancel` does. " +
              "A run whose resume answers interrupts (payload `{ approved, note? }`; `cancelled` denies) streams each call's execution as its `TOOL_CALL_RESULT`.",
            content: { "text/event-stream": { schema: str } }
          },
          ...errors("BadRequest", "Unauthorized", "PaymentRequired", "Forbidden", "NotFound", "Conflict", "PayloadTooLarge", "UnprocessableContent", "ChatRateLimited", "ChatUnavailable")
        }
      }
    }
  }
}

/** The upload route (gateway/upload.ts) reads a multipart body into the capability's input. */
const UPLOAD_CAPABILITY = "assistant.attachments.upload"
const UPLOAD_BODY = {
  required: true,
  content: {
    "multipart/form-data": {
      schema: {
        type: "object",
        description: `Every part with a filename is a file (its Content-Type the file's type), at most ${MAX_ATTACHMENTS}; other parts are ignored.`,
        additionalProperties: { contentMediaType: "application/octet-stream" }
      }
    }
  }
}

const build = (registry: Registry): JsonObject => {
  const schemas = new SchemaComponents({
    Error: object({ error: object({ code: str, reason: str, message: str }, ["code", "message"]) })
  })
  // spec 2.3, as the chat routes encode it
  schemas.schemas.TurnResult = schemas.add(objectSchemaOf(TurnResult)!)
  const paths: Record<string, Record<string, JsonObject>> = {}
  for (const capability of registry.all) {
    if (!capability.surfaces.includes("api")) continue
    const { method } = restRouteOf(capability)
    const path = pathOf(capability)
    const operation = capability.name === UPLOAD_CAPABILITY
      ? { ...capabilityOperation(capability, schemas, { positions: false }), requestBody: UPLOAD_BODY }
      : capabilityOperation(capability, schemas)
    paths[path] = { ...paths[path], [method === "del" ? "delete" : "post"]: operation }
  }
  const ask = registry.byName.get("ask_assistant")
  if (ask !== undefined) {
    const chat = chatOperations(ask, schemas)
    paths[pathOf(ask)] = { post: chat.stream }
    paths[placePath("assistant/ask")] = { post: chat.ask }
  }
  const resume = registry.byName.get(RESUME_CAPABILITY)
  if (resume !== undefined) {
    const operations = resumeOperations(resume, schemas)
    paths[pathOf(resume)] = { post: operations.post }
    const { requestBody: _, ...get } = operations.get
    paths[placePath("chat/turns/{turnId}/stream")] = { get }
  }
  for (const [path, item] of Object.entries(uiChatPaths(registry, schemas))) paths[path] = item
  for (const [path, item] of Object.entries(agUiPaths(registry, schemas))) paths[path] = item
  for (const [path, item] of Object.entries(handDescribed(registry, schemas))) paths[path] = { ...paths[path], ...item }
  return {
    openapi: "3.1.0",
    info: {
      title: "svc assistant platform",
      // the REST version prefix (spec 9)
      version: "1",
      description:
        "Every `/v1` operation but sign-in, sign-out, device login and SSO is a capability invoked through one checkpoint. " +
        "Writes answer `Svc-Position`; a read through another node sends it back to see them. " +
        "Errors are `{ error: { code, reason?, message } }`."
    },
    security: [{ apiKey: [] }, { session: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", bearerFormat: "svc_...", description: "An API key (`svc_` and a base64url value), a CLI login, or an operator-issued machine credential." },
        session: { type: "apiKey", in: "cookie", name: SESSION_COOKIE, description: "A browser session, set by sign-in." }
      },
      parameters: {
        orgSlug: { name: "orgSlug", in: "path", required: true, description: "The credential's organization.", schema: str },
        workspaceSlug: { name: "workspaceSlug", in: "path", required: true, description: "A workspace of that organization.", schema: str },
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description: "A retry key: the same key and request again answer as the first time; another request under it is 422 `idempotency_key_reused`.",
          schema: str
        },
        Position: {
          name: "Svc-Position",
          in: "header",
          required: false,
          description: "The `Svc-Position` an earlier write answered: this call's reads wait (up to 5 s, then 503 `read_model_behind`) until they see it.",
          schema: str
        }
      },
      headers: {
        Position: { description: "Where this call's writes are in the log, `partition:offset` pairs, comma separated; sent when the call wrote.", schema: str },
        RetryAfter: { description: "Seconds to wait before retrying.", schema: int }
      },
      responses: RESPONSES,
      schemas: schemas.schemas
    }
  }
}

/**
 * The document of a registry's gateway. Each call builds it again: the server that answers it keeps
 * the one it built (the registry is fixed at start).
 */
export const openApiDocument = (registry: Registry): JsonObject => build(registry)
