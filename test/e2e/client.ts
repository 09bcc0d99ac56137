/**
 * What the end-to-end suites drive a node with: real HTTP against `startTestNode()`, plus reads of
 * the node's own Postgres (the event log and the audit read models) for what HTTP cannot show.
 */
import { Effect, Exit, Runtime } from "effect"
import { expect } from "vitest"
import { authenticate } from "../../src/identity/Auth.ts"
import { invoke } from "../../src/checkpoint/Checkpoint.ts"
import { FailureDescriber } from "../../src/platform/Failures.ts"
import type { TestNode } from "../support/platform.ts"

export interface Reply<T = any> {
  readonly status: number
  readonly body: T
}

export interface CallOptions {
  /** The raw key sent as `Authorization: Bearer <key>`; the workspace key when omitted, none when null. */
  readonly key?: string | null
  readonly idempotencyKey?: string
  readonly orgSlug?: string
  readonly workspaceSlug?: string
}

/** `POST /v1/{org}/{workspace}/<capability with dots as slashes>` with a JSON body. */
export const call = async <T = any>(node: TestNode, capability: string, input: unknown, options: CallOptions = {}): Promise<Reply<T>> => {
  const { orgSlug, workspaceSlug, workspaceKey } = node.bootstrap
  const key = options.key === undefined ? workspaceKey : options.key
  const headers: Record<string, string> = { "content-type": "application/json" }
  if (key !== null) headers.authorization = `Bearer ${key}`
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
  const path = `/v1/${options.orgSlug ?? orgSlug}/${options.workspaceSlug ?? workspaceSlug}/${capability.replaceAll(".", "/")}`
  return send<T>(node, path, { method: "POST", headers, body: JSON.stringify(input) })
}

/** A capability on the agent surface (what a turn's tool call runs) with a key as the credential, stated as REST states it. */
export const callAsAgent = async (node: TestNode, key: string, capability: string, input: unknown): Promise<Reply> => {
  const run = <A, E>(effect: Effect.Effect<A, E, any>) => Runtime.runPromiseExit(node.runtime)(effect as Effect.Effect<A, E, never>)
  const principal = await run(authenticate({ authorization: `Bearer ${key}` }))
  if (Exit.isFailure(principal)) throw new Error("the key did not authenticate")
  const exit = await run(invoke({
    authorization: undefined,
    principal: principal.value,
    surface: "agent",
    capability,
    path: { orgSlug: node.bootstrap.orgSlug, workspaceSlug: node.bootstrap.workspaceSlug },
    input: Effect.succeed(input)
  }))
  if (Exit.isSuccess(exit)) return { status: 200, body: exit.value }
  const described = await run(Effect.map(FailureDescriber, (describe) => describe(exit.cause)))
  if (Exit.isFailure(described)) throw new Error("the node describes no failures")
  const { status, code, reason, message } = described.value
  return { status, body: { error: { code, ...(reason === undefined ? {} : { reason }), message } } }
}

/** Any request; the body is parsed as JSON (every answer of the gateway is JSON). */
export const send = async <T = any>(node: TestNode, path: string, init: RequestInit = {}): Promise<Reply<T>> => {
  const response = await fetch(`${node.baseUrl}${path}`, init)
  expect(response.headers.get("content-type")).toBe("application/json")
  return { status: response.status, body: (await response.json()) as T }
}

/** `Authorization` header for a raw key. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/** Asserts a JSON error reply: the status and `{ error: { code, reason?, message } }` with nothing else. */
export const expectError = (reply: Reply, status: number, code: string, reason: string | undefined) => {
  expect({ status: reply.status, code: reply.body?.error?.code, reason: reply.body?.error?.reason }).toEqual({ status, code, reason })
  expect(Object.keys(reply.body)).toEqual(["error"])
  expect(Object.keys(reply.body.error).sort()).toEqual(reason === undefined ? ["code", "message"] : ["code", "message", "reason"])
  expect(typeof reply.body.error.message).toBe("string")
  expect(reply.body.error.message.trim()).not.toBe("")
}

/** The node's embedded log table, `<dbSchema>_log.log_events`. */
const logTable = (node: TestNode) => node.db.sql(`${node.config.dbSchema}_log.log_events`)

/** How many records the whole log holds. */
export const logCount = async (node: TestNode): Promise<number> => {
  const [{ count }] = await node.db.sql`select count(*)::int as count from ${logTable(node)}`
  return count
}

/** The events of one key (`node:<id>`), in log order. */
export const eventsOf = async (node: TestNode, key: string): Promise<Array<{ type: string; payload: any }>> => {
  const rows = await node.db.sql`select type, payload from ${logTable(node)} where key = ${key} order by "offset"`
  return rows.map((r) => ({ type: r.type, payload: r.payload }))
}

/** A `Note` node for a test to act on (deleting it, say): its id. */
export const createNote = async (node: TestNode): Promise<string> => {
  await call(node, "schema.define_label", { label: "Note", properties: {} })
  const created = await call(node, "node.create", { label: "Note", properties: {} })
  if (created.status !== 200) throw new Error(`node.create answered ${created.status}`)
  return created.body.nodeId as string
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `read` until `done` holds of its value, for read models projected asynchronously. */
export const eventually = async <A>(read: () => Promise<A>, done: (value: A) => boolean, timeoutMs = 5_000): Promise<A> => {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > until) return value
    await sleep(50)
  }
}
