import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { actorKinds } from "../../src/App.ts"
import { connect, service } from "../../streams/Db.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { compareSchemas, readModelTables, replay } from "../../streams/Replay.ts"
import { databaseUrl } from "../support/env.ts"
import { capability } from "../support/http.ts"
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
