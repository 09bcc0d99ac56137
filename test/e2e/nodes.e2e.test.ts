/**
 * The schema-and-nodes slice end to end, as a user drives it over HTTP: define a label, create,
 * read, update, list, delete nodes; what the log records; idempotent retries; the audit and
 * metering rows every accepted invocation leaves; and the node's health.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, eventsOf, eventually, expectError, logCount, send, sleep } from "./client.ts"

let node: TestNode

beforeAll(async () => {
  node = await startTestNode()
})

afterAll(async () => {
  await node?.stop()
})

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A label with one property of every type. */
const taskProperties = {
  title: { type: "string", required: true },
  estimate: { type: "number" },
  done: { type: "boolean" },
  due: { type: "datetime" },
  status: { type: "enum", values: ["todo", "doing", "done"] }
}

/** The same definition as the registry states it: `required` always explicit. */
const taskDefinition = {
  title: { type: "string", required: true },
  estimate: { type: "number", required: false },
  done: { type: "boolean", required: false },
  due: { type: "datetime", required: false },
  status: { type: "enum", values: ["todo", "doing", "done"], required: false }
}

/** The condition operators each property's type admits (spec 2.8), as the registry states them. */
const taskOperators = {
  title: ["eq", "neq", "changed", "exists", "not_exists", "contains", "in", "not_in"],
  estimate: ["eq", "neq", "changed", "exists", "not_exists", "gt", "gte", "lt", "lte", "in", "not_in"],
  done: ["eq", "neq", "changed", "exists", "not_exists"],
  due: ["eq", "neq", "changed", "exists", "not_exists", "before", "after"],
  status: ["eq", "neq", "changed", "exists", "not_exists", "in", "not_in"]
}

const createNode = async (label: string, properties: Record<string, unknown>) => {
  const reply = await call(node, "node.create", { label, properties })
  expect(reply.status).toBe(200)
  return reply.body
}

const defineLabel = async (label: string, properties: Record<string, unknown>) => {
  const reply = await call(node, "schema.define_label", { label, properties })
  expect(reply.status).toBe(200)
  return reply.body
}

/** Every page of `node.list`, following nextCursor. */
const listAll = async (input: { label?: string; limit: number }) => {
  const pages: Array<{ nodes: Array<any>; nextCursor: string | null }> = []
  let cursor: string | undefined
  do {
    const reply = await call(node, "node.list", cursor === undefined ? input : { ...input, cursor })
    expect(reply.status).toBe(200)
    pages.push(reply.body)
    cursor = reply.body.nextCursor ?? undefined
    if (pages.length > 100) throw new Error("node.list never stopped paging")
  } while (cursor !== undefined)
  return pages
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

describe("the schema registry", () => {
  it("defines a label with every property type, reads it back with each property's operators, and versions each redefinition", async () => {
    const defined = await defineLabel("Task", taskProperties)
    expect(defined).toEqual({ label: "Task", properties: taskDefinition, operators: taskOperators, version: 1, updatedAt: expect.stringMatching(ISO) })

    const got = await call(node, "schema.get", { label: "Task" })
    expect(got).toEqual({ status: 200, body: { labels: [defined] } })

    const redefined = await defineLabel("Task", { ...taskProperties, points: { type: "number" } })
    expect(redefined).toMatchObject({
      label: "Task",
      version: 2,
      properties: { ...taskDefinition, points: { type: "number", required: false } },
      operators: { ...taskOperators, points: taskOperators.estimate }
    })

    const all = await call(node, "schema.get", {})
    expect(all.status).toBe(200)
    expect(all.body.labels.filter((l: any) => l.label === "Task")).toEqual([redefined])
  })

  it("answers 404 label_not_found for a label the workspace does not define", async () => {
    expectError(await call(node, "schema.get", { label: "Nothing" }), 404, "not_found", "label_not_found")
  })
})

describe("nodes", () => {
  beforeAll(async () => {
    await defineLabel("Item", taskProperties)
  })

  it("creates a node with typed values and reads it back unchanged", async () => {
    const properties = { title: "Write the spec", estimate: 3.5, done: false, due: "2026-03-01T09:00:00Z", status: "todo" }
    const created = await createNode("Item", { ...properties, points: null })
    expect(created).toEqual({
      nodeId: expect.stringMatching(/^nod_/),
      label: "Item",
      // null on create leaves a property unset
      properties,
      version: 1,
      createdAt: expect.stringMatching(ISO),
      updatedAt: created.createdAt
    })
    expect(await call(node, "node.get", { nodeId: created.nodeId })).toEqual({ status: 200, body: created })
  })

  it("updates: a value sets, null removes, the version moves; a no-op update keeps it", async () => {
    const created = await createNode("Item", { title: "Review", estimate: 2, done: false, status: "todo" })

    const updated = await call(node, "node.update", {
      nodeId: created.nodeId,
      properties: { status: "doing", estimate: null, done: false, due: "2026-04-01" }
    })
    expect(updated.status).toBe(200)
    expect(updated.body).toEqual({
      ...created,
      properties: { title: "Review", done: false, status: "doing", due: "2026-04-01" },
      version: 2,
      updatedAt: expect.stringMatching(ISO)
    })
    expect(await call(node, "node.get", { nodeId: created.nodeId })).toEqual({ status: 200, body: updated.body })

    // the event carries only what changed, with the value it had
    const events = await eventsOf(node, `node:${created.nodeId}`)
    expect(events.map((e) => e.type)).toEqual(["node.created", "node.updated"])
    expect(events[1].payload.changes).toEqual({
      status: { from: "todo", to: "doing" },
      estimate: { from: 2, to: null },
      due: { from: null, to: "2026-04-01" }
    })

    // setting what is already there, and removing what is absent, changes nothing
    const noop = await call(node, "node.update", { nodeId: created.nodeId, properties: { status: "doing", estimate: null } })
    expect(noop).toEqual({ status: 200, body: updated.body })
    expect(await eventsOf(node, `node:${created.nodeId}`)).toHaveLength(2)
  })

  it("deletes a node: then get, update and delete answer 404 node_not_found", async () => {
    const created = await createNode("Item", { title: "Obsolete" })
    expect(await call(node, "node.delete", { nodeId: created.nodeId })).toEqual({
      status: 200,
      body: { nodeId: created.nodeId, deleted: true }
    })

    expectError(await call(node, "node.get", { nodeId: created.nodeId }), 404, "not_found", "node_not_found")
    expectError(await call(node, "node.update", { nodeId: created.nodeId, properties: { done: true } }), 404, "not_found", "node_not_found")
    expectError(await call(node, "node.delete", { nodeId: created.nodeId }), 404, "not_found", "node_not_found")

    const events = await eventsOf(node, `node:${created.nodeId}`)
    expect(events.map((e) => e.type)).toEqual(["node.created", "node.deleted"])
    const listed = await listAll({ label: "Item", limit: 200 })
    expect(listed.flatMap((p) => p.nodes).map((n) => n.nodeId)).not.toContain(created.nodeId)
  })

  it("answers 404 node_not_found for an id that never existed", async () => {
    expectError(await call(node, "node.get", { nodeId: "nod_00000000000000000000000000000000" }), 404, "not_found", "node_not_found")
    expectError(await call(node, "node.delete", { nodeId: "nod_00000000000000000000000000000000" }), 404, "not_found", "node_not_found")
  })

  it("replays node.create under the same Idempotency-Key: the same node, no new node events", async () => {
    const idempotencyKey = randomUUID()
    const input = { label: "Item", properties: { title: "Once only" } }
    const first = await call(node, "node.create", input, { idempotencyKey })
    expect(first.status).toBe(200)
    const nodeEvents = async () => (await node.db.sql`
      select count(*)::int as count from ${node.db.sql(`${node.config.dbSchema}_log.log_events`)}
      where key like 'node:%'`)[0].count as number
    const before = await nodeEvents()

    const replay = await call(node, "node.create", input, { idempotencyKey })
    expect(replay).toEqual(first)
    expect(await nodeEvents()).toBe(before)
    expect(await eventsOf(node, `node:${first.body.nodeId}`)).toHaveLength(1)

    // another key is another node
    const other = await call(node, "node.create", input, { idempotencyKey: randomUUID() })
    expect(other.status).toBe(200)
    expect(other.body.nodeId).not.toBe(first.body.nodeId)
  })
})

describe("Idempotency-Key bound to its first request", () => {
  const keyReused = (reply: Awaited<ReturnType<typeof call>>) => expectError(reply, 422, "unprocessable_content", "idempotency_key_reused")

  beforeAll(async () => {
    await defineLabel("Keyed", { title: { type: "string", required: true }, done: { type: "boolean" } })
  })

  it("replays the same body, however its keys are ordered; refuses another body with 422, changing nothing", async () => {
    const idempotencyKey = randomUUID()
    const first = await call(node, "node.create", { label: "Keyed", properties: { title: "First", done: false } }, { idempotencyKey })
    expect(first.status).toBe(200)
    const logged = await logCount(node)

    keyReused(await call(node, "node.create", { label: "Keyed", properties: { title: "Second", done: false } }, { idempotencyKey }))
    keyReused(await call(node, "node.create", { label: "Keyed", properties: { title: "First" } }, { idempotencyKey }))
    expect(await logCount(node)).toBe(logged)
    expect(await call(node, "node.get", { nodeId: first.body.nodeId })).toEqual({ status: 200, body: first.body })
    const listed = await listAll({ label: "Keyed", limit: 200 })
    expect(listed.flatMap((p) => p.nodes).map((n) => n.properties.title)).toEqual(["First"])

    // the same request, written otherwise, is still the same request
    expect(await call(node, "node.create", { properties: { done: false, title: "First" }, label: "Keyed" }, { idempotencyKey })).toEqual(first)
    expect(await eventsOf(node, `node:${first.body.nodeId}`)).toHaveLength(1)
  })

  it("binds the key, not the node it acts on: the same key on another node is refused, and that node is unchanged", async () => {
    const one = await createNode("Keyed", { title: "One" })
    const two = await createNode("Keyed", { title: "Two" })
    const idempotencyKey = randomUUID()
    const updated = await call(node, "node.update", { nodeId: one.nodeId, properties: { done: true } }, { idempotencyKey })
    expect(updated.status).toBe(200)

    keyReused(await call(node, "node.update", { nodeId: two.nodeId, properties: { done: true } }, { idempotencyKey }))
    expect(await call(node, "node.get", { nodeId: two.nodeId })).toEqual({ status: 200, body: two })
    expect(await eventsOf(node, `node:${two.nodeId}`)).toHaveLength(1)
    expect(await call(node, "node.update", { nodeId: one.nodeId, properties: { done: true } }, { idempotencyKey })).toEqual(updated)
  })

  it("binds nothing for a read: the same key reads another node, and the log is unchanged", async () => {
    const one = await createNode("Keyed", { title: "Read one" })
    const two = await createNode("Keyed", { title: "Read two" })
    const idempotencyKey = randomUUID()
    const logged = await logCount(node)
    expect(await call(node, "node.get", { nodeId: one.nodeId }, { idempotencyKey })).toEqual({ status: 200, body: one })
    expect(await call(node, "node.get", { nodeId: two.nodeId }, { idempotencyKey })).toEqual({ status: 200, body: two })
    expect(await logCount(node)).toBe(logged + 2) // the two reads' audit records
  })

  it("holds across a restart: the binding is in the log, not in the process", async () => {
    const first = await startTestNode()
    const idempotencyKey = randomUUID()
    try {
      expect((await call(first, "schema.define_label", { label: "Keyed", properties: { title: { type: "string" } } })).status).toBe(200)
      const created = await call(first, "node.create", { label: "Keyed", properties: { title: "Before" } }, { idempotencyKey })
      expect(created.status).toBe(200)
      await first.stop()

      const restarted = await startTestNode({ dataDir: first.config.dataDir, dbSchema: first.config.dbSchema })
      try {
        const logged = await logCount(restarted)
        keyReused(await call(restarted, "node.create", { label: "Keyed", properties: { title: "After" } }, { idempotencyKey }))
        expect(await logCount(restarted)).toBe(logged)
        expect(await call(restarted, "node.create", { label: "Keyed", properties: { title: "Before" } }, { idempotencyKey })).toEqual(created)
        expect(await eventsOf(restarted, `node:${created.body.nodeId}`)).toHaveLength(1)
      } finally {
        await restarted.stop()
      }
    } finally {
      await first.stop().catch(() => {})
    }
  })
})

describe("node.list", () => {
  const pageIds: Array<string> = []
  const otherIds: Array<string> = []

  beforeAll(async () => {
    await defineLabel("Page", { n: { type: "number", required: true } })
    await defineLabel("Other", { n: { type: "number" } })
    for (let n = 0; n < 7; n++) pageIds.push((await createNode("Page", { n })).nodeId)
    for (let n = 0; n < 2; n++) otherIds.push((await createNode("Other", { n })).nodeId)
  })

  it("pages through more nodes than the limit, in id order, without duplicates or gaps", async () => {
    const pages = await listAll({ label: "Page", limit: 3 })
    expect(pages.map((p) => p.nodes.length)).toEqual([3, 3, 1])
    expect(pages.map((p) => p.nextCursor === null)).toEqual([false, false, true])
    expect(pages.flatMap((p) => p.nodes.map((n) => n.nodeId))).toEqual([...pageIds].sort(byId))
    expect(pages.flatMap((p) => p.nodes).every((n) => n.label === "Page")).toBe(true)
  })

  it("ends without an empty page when the last page is full", async () => {
    const pages = await listAll({ label: "Page", limit: 7 })
    expect(pages).toHaveLength(1)
    expect(pages[0]).toEqual({ nodes: expect.any(Array), nextCursor: null })
    expect(pages[0].nodes).toHaveLength(7)
  })

  it("without a label, lists every label's nodes in one id order", async () => {
    const everything = (await listAll({ limit: 200 })).flatMap((p) => p.nodes.map((n) => n.nodeId))
    const paged = (await listAll({ limit: 4 })).flatMap((p) => p.nodes.map((n) => n.nodeId))
    expect(paged).toEqual(everything)
    expect(paged).toEqual([...new Set(paged)].sort(byId))
    expect(paged).toEqual(expect.arrayContaining([...pageIds, ...otherIds]))
  })

  it("filters by label", async () => {
    const pages = await listAll({ label: "Other", limit: 50 })
    expect(pages.flatMap((p) => p.nodes.map((n) => n.nodeId))).toEqual([...otherIds].sort(byId))
  })
})

describe("audit and metering", () => {
  let apiKeyId: string
  let creatorId: string

  beforeAll(async () => {
    const whoami = await send(node, "/v1/auth/whoami", { headers: { authorization: `Bearer ${node.bootstrap.workspaceKey}` } })
    expect(whoami.status).toBe(200)
    apiKeyId = whoami.body.apiKeyId
    // the bootstrap Owner created the key; the key's calls are attributed to them (spec 5, rule 4)
    const [owner] = await node.db.sql`select user_id from ${node.db.table("org_members")} where role = 'owner'`
    creatorId = owner.user_id
  })

  const invocationIds = async (table: "audit_log" | "metering") =>
    new Set((await node.db.sql`select invocation_id from ${node.db.table(table)} ${table === "audit_log" ? node.db.sql`where kind = 'capability'` : node.db.sql``}`).map((r) => r.invocation_id as string))

  /** Waits until every audit record on the log has its audit_log row, so earlier requests' rows
   * (projected asynchronously) are not taken for the next request's. */
  const auditSettled = () =>
    eventually(
      async () => {
        const [{ logged }] = await node.db.sql`
          select count(*)::int as logged from ${node.db.sql(`${node.config.dbSchema}_log.log_events`)} where type = 'capability.invoked'`
        const [{ rows }] = await node.db.sql`select count(*)::int as rows from ${node.db.table("audit_log")} where kind = 'capability'`
        return logged === rows
      },
      (done) => done
    )

  /** The audit and metering rows one request leaves (projected asynchronously, hence the polling). */
  const rowsOf = async (request: () => Promise<unknown>) => {
    expect(await auditSettled()).toBe(true)
    const before = await invocationIds("audit_log")
    const meteredBefore = await invocationIds("metering")
    await request()
    const newRows = (table: "audit_log" | "metering", seen: Set<string>) => async () =>
      (await node.db.sql`select * from ${node.db.table(table)} order by at`).filter((r) => !seen.has(r.invocation_id) && (table === "metering" || r.kind === "capability"))
    await eventually(newRows("audit_log", before), (rows) => rows.length > 0)
    await eventually(newRows("metering", meteredBefore), (rows) => rows.length > 0)
    // and no second row arrives late
    await sleep(300)
    return { audit: await newRows("audit_log", before)(), metering: await newRows("metering", meteredBefore)() }
  }

  const expectOneInvocation = (
    rows: Awaited<ReturnType<typeof rowsOf>>,
    capability: string,
    outcome: "succeeded" | "failed",
    errorTag: string | null
  ) => {
    expect(rows.audit).toHaveLength(1)
    expect(rows.metering).toHaveLength(1)
    const [audit] = rows.audit
    expect(audit).toMatchObject({
      capability,
      surface: "api",
      principal_kind: "api_key",
      api_key_id: apiKeyId,
      user_id: creatorId,
      outcome,
      error_tag: errorTag,
      workspace_id: expect.stringMatching(/^wsp_/),
      org_id: expect.stringMatching(/^org_/)
    })
    expect(rows.metering[0]).toMatchObject({
      invocation_id: audit.invocation_id,
      capability,
      org_id: audit.org_id,
      workspace_id: audit.workspace_id,
      units: 1
    })
  }

  it("records a successful mutation once", async () => {
    await defineLabel("Audited", { title: { type: "string" } })
    const rows = await rowsOf(() => createNode("Audited", { title: "a" }))
    expectOneInvocation(rows, "node.create", "succeeded", null)
  })

  it("records a successful read once", async () => {
    const rows = await rowsOf(async () => expect((await call(node, "node.list", { limit: 1 })).status).toBe(200))
    expectOneInvocation(rows, "node.list", "succeeded", null)
  })

  it("records a 404 from the handler as a failed invocation", async () => {
    const rows = await rowsOf(async () => expect((await call(node, "node.get", { nodeId: "nod_missing" })).status).toBe(404))
    expectOneInvocation(rows, "node.get", "failed", "NotFound")
  })

  it("records a 404 from the node actor as a failed invocation", async () => {
    const rows = await rowsOf(async () => expect((await call(node, "node.delete", { nodeId: "nod_missing" })).status).toBe(404))
    expectOneInvocation(rows, "node.delete", "failed", "NodeNotFound")
  })
})

describe("GET /healthz", () => {
  it("reports the embedded log and every partition owned", async () => {
    const health = await send(node, "/healthz")
    expect(health.status).toBe(200)
    const all = Array.from({ length: node.config.partitions }, (_, i) => i)
    expect(health.body).toMatchObject({ status: "ok", log: { mode: "embedded", partitions: node.config.partitions }, partitions: { owned: all } })
  })
})
