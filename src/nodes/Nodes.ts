/**
 * The workspace schema registry and workspace nodes: mutations are commands to the `schema` and
 * `node` actors, queries read their projections.
 */
import { Effect, Schema } from "effect"
import { NodeActor } from "../../actors/node/actor.ts"
import { CreateNode, DeleteNode, UpdateNode } from "../../actors/node/protocol.ts"
import { SchemaActor } from "../../actors/schema/actor.ts"
import { LabelDefinition, Properties, PropertiesInput, PropertyDefinitions, PropertySpec } from "../../actors/schema/definition.ts"
import { Operator, operatorsFor } from "../../actors/schema/operators.ts"
import { DefineLabel } from "../../actors/schema/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, defineCapability, type Invocation, type Role } from "../checkpoint/Capability.ts"
import { Db, query } from "../../streams/Db.ts"
import { idCursor, keysetPage, PageLimit } from "../platform/Paging.ts"
import { BadRequest, NotFound } from "../platform/Errors.ts"

const readers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"]
const writers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member"]

const common = { scope: "workspace", surfaces: ["api", "mcp", "agent"], sensitivity: "low", needsApproval: false, claimedBy: "builtin" } as const
const reads = { ...common, roles: readers, mutating: false, destructive: false } as const
const writes = { ...common, roles: writers, mutating: true, changesAccess: false, destructive: false } as const

const Label = Schema.Struct({
  label: Schema.String,
  properties: PropertyDefinitions,
  /** Per property, the condition operators its data type admits (what automations' conditions may use). */
  operators: Schema.Record({ key: Schema.String, value: Schema.Array(Operator) }),
  version: Schema.Int,
  updatedAt: Schema.String
})

const labelOf = (label: string, properties: PropertyDefinitions, version: number, updatedAt: string): typeof Label.Type => ({
  label,
  properties,
  operators: Object.fromEntries(Object.entries(properties).map(([name, definition]) => [name, operatorsFor(definition.type)])),
  version,
  updatedAt
})

const Node = Schema.Struct({
  nodeId: Schema.String,
  label: Schema.String,
  properties: Properties,
  version: Schema.Int,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
type Node = typeof Node.Type

const NodeId = Schema.Struct({ nodeId: Schema.NonEmptyString })

const workspaceOf = (invocation: Invocation) => invocation.workspaceId!

const iso = (value: Date | string) => (value instanceof Date ? value.toISOString() : value)

export const defineLabel = defineCapability({
  ...writes,
  name: "schema.define_label",
  description: "Define a node label of the workspace with typed properties, or replace its definition.",
  input: Schema.Struct({ label: Schema.String, properties: Schema.Record({ key: Schema.String, value: PropertySpec }) }),
  output: Label,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const workspaceId = workspaceOf(invocation)
      const { state } = yield* host.send(SchemaActor, workspaceId, new DefineLabel({ workspaceId, ...input }), invocation.meta)
      const defined = state.labels[input.label]
      return labelOf(input.label, defined.properties, defined.version, invocation.at)
    })
})

const labelRows = (workspaceId: string, label: string | undefined) =>
  Effect.flatMap(Db, (db) =>
    query("read labels", () => db.sql`
      select label, properties, version, updated_at from ${db.table("schema_labels")}
      where workspace_id = ${workspaceId} ${label === undefined ? db.sql`` : db.sql`and label = ${label}`}
      order by label`)
  )

export const getSchema = defineCapability({
  ...reads,
  name: "schema.get",
  description: "The workspace's label definitions, or one label's, with the condition operators each property admits.",
  input: Schema.Struct({ label: Schema.optional(Schema.String) }),
  output: Schema.Struct({ labels: Schema.Array(Label) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const rows = yield* labelRows(workspaceOf(invocation), input.label)
      if (input.label !== undefined && rows.length === 0) {
        return yield* new NotFound({ reason: "label_not_found", message: `no label ${input.label} in this workspace` })
      }
      return {
        labels: rows.map((r) => labelOf(r.label, r.properties, r.version, iso(r.updated_at)))
      }
    })
})

/** The definition a node command must satisfy, from the registry's read model. */
export const definitionOf = (workspaceId: string, label: string) =>
  Effect.gen(function* () {
    const [row] = yield* labelRows(workspaceId, label)
    if (row === undefined) {
      return yield* new BadRequest({ reason: "unknown_label", message: `label ${label} is not defined in this workspace's schema` })
    }
    return { properties: row.properties } as LabelDefinition
  })

const fromState = (state: typeof NodeActor.initialState): Node => {
  if (state._tag !== "live") throw new Error("a node command succeeded without a live node")
  const { nodeId, label, properties, version, createdAt, updatedAt } = state
  return { nodeId, label, properties, version, createdAt, updatedAt }
}

const notFound = (nodeId: string) => new NotFound({ reason: "node_not_found", message: `no node ${nodeId} in this workspace` })

/** A node's row, if it lives in the workspace. */
const readNode = (workspaceId: string, nodeId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read node", () => db.sql`
      select node_id, label, properties, version, created_at, updated_at from ${db.table("nodes")}
      where workspace_id = ${workspaceId} and node_id = ${nodeId}`)
    return row === undefined ? undefined : toNode(row)
  })

const toNode = (row: Record<string, any>): Node => ({
  nodeId: row.node_id,
  label: row.label,
  properties: row.properties,
  version: row.version,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at)
})

export const createNode = defineCapability({
  ...writes,
  name: "node.create",
  description: "Create a node of a defined label; its properties are checked against the label's definition.",
  input: Schema.Struct({ label: Schema.String, properties: PropertiesInput }),
  output: Node,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const workspaceId = workspaceOf(invocation)
      const definition = yield* definitionOf(workspaceId, input.label)
      const nodeId = invocation.newId("nod")
      const { state } = yield* host.send(NodeActor, nodeId, new CreateNode({ nodeId, workspaceId, label: input.label, properties: input.properties, definition }), invocation.meta)
      return fromState(state)
    })
})

export const updateNode = defineCapability({
  ...writes,
  name: "node.update",
  description: "Change some properties of a node: a value sets a property, null removes it.",
  input: Schema.Struct({ nodeId: Schema.NonEmptyString, properties: PropertiesInput }),
  output: Node,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const workspaceId = workspaceOf(invocation)
      const current = yield* readNode(workspaceId, input.nodeId)
      if (current === undefined) return yield* notFound(input.nodeId)
      const definition = yield* definitionOf(workspaceId, current.label)
      const { state } = yield* host.send(NodeActor, input.nodeId, new UpdateNode({ nodeId: input.nodeId, workspaceId, properties: input.properties, definition }), invocation.meta)
      return fromState(state)
    })
})

export const deleteNode = defineCapability({
  ...writes,
  name: "node.delete",
  description: "Delete a node.",
  input: NodeId,
  output: Schema.Struct({ nodeId: Schema.String, deleted: Schema.Literal(true) }),
  destructive: true,
  // the agent may delete only what its person approves
  needsApproval: true,
  sensitivity: "medium",
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const workspaceId = workspaceOf(invocation)
      yield* host.send(NodeActor, input.nodeId, new DeleteNode({ nodeId: input.nodeId, workspaceId }), invocation.meta)
      return { nodeId: input.nodeId, deleted: true as const }
    })
})

export const getNode = defineCapability({
  ...reads,
  name: "node.get",
  description: "Read one node.",
  input: NodeId,
  output: Node,
  handler: (invocation, input) =>
    Effect.flatMap(readNode(workspaceOf(invocation), input.nodeId), (node) =>
      node === undefined ? Effect.fail(notFound(input.nodeId)) : Effect.succeed(node)
    )
})

/** An opaque position: the base64url of the last node id of the previous page. */
const Cursor = idCursor(Schema.String.pipe(Schema.pattern(/^nod_[0-9a-f]{32}$/)))

export const listNodes = defineCapability({
  ...reads,
  name: "node.list",
  description: "List the workspace's nodes, optionally of one label, in pages ordered by id.",
  input: Schema.Struct({
    label: Schema.optional(Schema.String),
    limit: Schema.optional(PageLimit),
    cursor: Schema.optional(Schema.String)
  }),
  output: Schema.Struct({ nodes: Schema.Array(Node), nextCursor: Schema.NullOr(Schema.String) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      const read = (after: string | undefined, rows: number) => query("list nodes", () => db.sql`
        select node_id, label, properties, version, created_at, updated_at from ${db.table("nodes")}
        where workspace_id = ${workspaceOf(invocation)}
          ${input.label === undefined ? db.sql`` : db.sql`and label = ${input.label}`}
          ${after === undefined ? db.sql`` : db.sql`and node_id > ${after}`}
        order by node_id limit ${rows}`)
      const { page, nextCursor } = yield* keysetPage(Cursor, input, read, (last) => last.node_id as string)
      return { nodes: page.map(toNode), nextCursor }
    })
})

export const nodeCapabilities: ReadonlyArray<AnyCapability> = [defineLabel, getSchema, createNode, updateNode, deleteNode, getNode, listNodes]
