import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { actorKinds } from "../../bin/App.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import { startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres.ts"
import { connect, service } from "../../streams/Db.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { compareSchemas, readModelTables, replay } from "../../streams/Replay.ts"
import { streamChat } from "../support/chat.ts"
import { comparedTables, runCli } from "../support/cli.ts"
import { databaseUrl } from "../support/env.ts"
import { call, capability } from "../support/http.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { caughtUp } from "../support/projection.ts"

describe("replay", () => {
  let node: TestNode
  beforeAll(async () => {
    node = await startTestNode()
  })
  afterAll(() => node?.stop())

  it("rebuilds read models equal to the live ones, table by table", async () => {
    const { baseUrl, bootstrap: b } = node
    const invoke = capability(baseUrl, b.workspaceKey, b.orgSlug, b.workspaceSlug)
    expect((await invoke("schema.define_label", { label: "Task", properties: { title: { type: "string", required: true }, state: { type: "enum", values: ["open", "done"] }, due: { type: "datetime" }, points: { type: "number" } } })).status).toBe(200)
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) => invoke("node.create", { label: "Task", properties: { title: `task ${i}`, state: "open", points: i } }))
    )
    expect(created.every((r) => r.status === 200)).toBe(true)
    await Promise.all(created.slice(0, 20).map((r, i) => invoke("node.update", { nodeId: r.body.nodeId, properties: { state: "done", due: "2026-12-01T00:00:00Z", points: null, title: `done ${i}` } })))
    await Promise.all(created.slice(20, 30).map((r) => invoke("node.delete", { nodeId: r.body.nodeId })))
    await invoke("node.create", { label: "Task", properties: { title: 5 } }) // rejected: writes nothing
    await invoke("node.get", { nodeId: created[0].body.nodeId })
    await invoke("schema.define_label", { label: "Task", properties: { title: { type: "string", required: true } } })

    const live = node.db
    const target = service(connect({ url: databaseUrl, schema: `${live.schema}_replay` }), `${live.schema}_replay`)
    try {
      const program = Effect.gen(function* () {
        yield* caughtUp(live)
        const stats = yield* replay(target, actorKinds)
        return { stats, tables: yield* compareSchemas(live, target), names: yield* readModelTables(target) }
      }).pipe(Effect.provide(Layer.succeed(EventLog, node.log)))
      const { stats, tables, names } = await Effect.runPromise(program)
      expect(stats.events).toBeGreaterThan(70)
      expect(names).toEqual(expect.arrayContaining(["nodes", "schema_labels", "actor_state", "audit_log", "metering", "api_keys", "organizations", "workspaces", "users", "projection_checkpoints"]))
      expect(tables.filter((t) => !t.equal)).toEqual([])
      expect(tables.find((t) => t.table === "nodes")?.rows).toBe(30)
    } finally {
      await target.sql.end()
    }
  })
})

/** Runs one statement on a stopped node's database, embedded or not, as a hand editing it would. */
const editDatabase = (node: TestNode, statement: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const url = node.config.databaseUrl ?? (yield* startEmbeddedPostgres(node.config.dataDir)).url
        const sql = yield* Effect.acquireRelease(
          Effect.sync(() => connect({ url, schema: node.config.dbSchema, max: 1 })),
          (sql) => Effect.promise(() => sql.end())
        )
        yield* Effect.promise(() => sql.unsafe(statement))
      })
    )
  )


describe.each([
  { database: "embedded PGlite", overrides: { databaseUrl: undefined } },
  { database: "Postgres", overrides: {} },
  { database: "Postgres, projecting in a worker", overrides: { projectionWorker: true } }
])("svc replay --compare on $database, after the server stopped", ({ overrides }) => {
  let node: TestNode
  beforeAll(async () => {
    // the default partition count (npm start's): a replay lane then reads several partitions, and
    // its reads once broke on the writes into the replayed schema (pglite-socket interleaved them)
    node = await startTestNode({ partitions: loadConfig({}).partitions, ...overrides })
    try {
      const { baseUrl, bootstrap: b } = node
      const invoke = capability(baseUrl, b.workspaceKey, b.orgSlug, b.workspaceSlug)
      expect((await invoke("schema.define_label", { label: "Task", properties: { title: { type: "string", required: true } } })).status).toBe(200)
      expect((await invoke("node.create", { label: "Task", properties: { title: "audit me" } })).status).toBe(200)
      for (const content of ["hello there", "remember the word teal"]) expect((await streamChat(node, { content })).done.reply).toContain(content)
      const parts = [{ kind: "text", text: "hello agent" }]
      const sent = await call(baseUrl, b.workspaceKey, "/a2a", { jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { kind: "message", role: "user", messageId: randomUUID(), parts } } })
      expect(sent.body.result.status.state).toBe("completed")
      // stopping does not drain the projection: the operator stops a node whose read models hold its writes
      await node.host.awaitProjected(node.host.unprojected(), 10_000)
    } finally {
      await node.stop()
    }
  })

  it("replays the log and reports every table the same", async () => {
    const { code, stdout, stderr } = await runCli(node, ["replay", "--compare"])
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    expect(stdout).toMatch(new RegExp(`^replayed \\d+ events in \\d+ ms \\(\\d+ events/s\\) into schema ${node.config.dbSchema}_replay_\\d{14}$`, "m"))
    const tables = comparedTables(stdout)
    expect(tables.filter((line) => !line.startsWith("same"))).toEqual([])
    expect(tables).toEqual(expect.arrayContaining(["same  nodes (1 rows)", "same  a2a_tasks (1 rows)", "same  conversations (3 rows)", "same  messages (6 rows)"]))
  })

  it("fails, naming the table, when a live read model differs from the replayed one", async () => {
    await editDatabase(node, `update ${node.config.dbSchema}.organizations set name = name || ' (edited by hand)'`)
    const { code, stdout, stderr } = await runCli(node, ["replay", "--into", `${node.config.dbSchema}_audit`, "--compare"])
    expect(code).toBe(1)
    expect(comparedTables(stdout).filter((line) => !line.startsWith("same"))).toEqual(["DIFFERENT  organizations (1 rows)"])
    expect(stderr).toContain("svc: the replayed read models differ from the live ones")
  })
})
