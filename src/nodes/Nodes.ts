/**
 * The nodes wing's handlers: mutations are commands to the `schema` and `node` actors, queries
 * read their projections (Queries.ts).
 */
import { Effect, Schema } from "effect"
import { NodeActor } from "../../actors/node/actor.ts"
import { CreateNode, DeleteNode, UpdateNode } from "../../actors/node/protocol.ts"
import { SchemaActor } from "../../actors/schema/actor.ts"
import type { LabelDefinition, PropertyDefinitions } from "../../actors/schema/definition.ts"
import { operatorsFor } from "../../actors/schema/operators.ts"
import { DefineLabel } from "../../actors/schema/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { readAsOf } from "../platform/AsOf.ts"
import { BadRequest, NotFound } from "../platform/Errors.ts"
import { idCursor, keysetPage } from "../platform/Paging.ts"
import * as Api from "./Api.ts"
import { labelRows, nodesAfter, readNode } from "./Queries.ts"

const labelOf = (label: string, properties: PropertyDefinitions, version: number, updatedAt: string): typeof Api.Label.Type => ({
  label,
  properties,
  operators: Object.fromEntries(Object.entries(properties).map(([name, definition]) => [name, operatorsFor(definition.type)])),
  version,
  updatedAt
})

const workspaceOf = (invocation: Invocation) => invocation.workspaceId!

export const defineLabel = implement(Api.defineLabel, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const workspaceId = workspaceOf(invocation)
    const { state } = yield* host.send(SchemaActor, workspaceId, new DefineLabel({ workspaceId, ...input }), invocation.meta)
    const defined = state.labels[input.label]
    return labelOf(input.label, defined.properties, defined.version, invocation.at)
  })
)

export const getSchema = implement(Api.getSchema, (invocation, input) =>
  Effect.gen(function* () {
    const rows = yield* labelRows(workspaceOf(invocation), input.label)
    if (input.label !== undefined && rows.length === 0) {
      return yield* new NotFound({ reason: "label_not_found", message: `no label ${input.label} in this workspace` })
    }
    return { labels: rows.map((r) => labelOf(r.label, r.properties, r.version, r.updatedAt)) }
  })
)

/** The definition a node command must satisfy, from the registry's read model. */
export const definitionOf = (workspaceId: string, label: string) =>
  Effect.gen(function* () {
    const [row] = yield* labelRows(workspaceId, label)
    if (row === undefined) {
      return yield* new BadRequest({ reason: "unknown_label", message: `label ${label} is not defined in this workspace's schema` })
    }
    return { properties: row.properties } as LabelDefinition
  })

const fromState = (state: typeof NodeActor.initialState): Api.Node => {
  if (state._tag !== "live") throw new Error("a node command succeeded without a live node")
  const { nodeId, label, properties, version, createdAt, updatedAt } = state
  return { nodeId, label, properties, version, createdAt, updatedAt }
}

const notFound = (nodeId: string) => new NotFound({ reason: "node_not_found", message: `no node ${nodeId} in this workspace` })

export const createNode = implement(Api.createNode, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const workspaceId = workspaceOf(invocation)
    const definition = yield* definitionOf(workspaceId, input.label)
    const nodeId = invocation.newId("nod")
    const { state } = yield* host.send(NodeActor, nodeId, new CreateNode({ nodeId, workspaceId, label: input.label, properties: input.properties, definition }), invocation.meta)
    return fromState(state)
  })
)

export const updateNode = implement(Api.updateNode, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const workspaceId = workspaceOf(invocation)
    const current = yield* readNode(workspaceId, input.nodeId)
    if (current === undefined) return yield* notFound(input.nodeId)
    const definition = yield* definitionOf(workspaceId, current.label)
    const { state } = yield* host.send(NodeActor, input.nodeId, new UpdateNode({ nodeId: input.nodeId, workspaceId, properties: input.properties, definition }), invocation.meta)
    return fromState(state)
  })
)

export const deleteNode = implement(Api.deleteNode, (invocation, input) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const workspaceId = workspaceOf(invocation)
    yield* host.send(NodeActor, input.nodeId, new DeleteNode({ nodeId: input.nodeId, workspaceId }), invocation.meta)
    return { nodeId: input.nodeId, deleted: true as const }
  })
)

/** The node as it stood at `asOf`; a node deleted by then is not found, as the live read has it. */
const nodeAsOf = (invocation: Invocation, nodeId: string, asOf: string) =>
  Effect.flatMap(
    readAsOf(NodeActor, nodeId, `node ${nodeId}`, asOf, invocation.at, (state) => state._tag === "live" && state.workspaceId === workspaceOf(invocation), () => notFound(nodeId)),
    ({ state }) => (state._tag === "live" ? Effect.succeed(fromState(state)) : Effect.fail(notFound(nodeId)))
  )

export const getNode = implement(Api.getNode, (invocation, input) =>
  Effect.gen(function* () {
    if (input.asOf !== undefined) return yield* nodeAsOf(invocation, input.nodeId, input.asOf)
    const node = yield* readNode(workspaceOf(invocation), input.nodeId)
    return node === undefined ? yield* notFound(input.nodeId) : node
  })
)

/** An opaque position: the base64url of the last node id of the previous page. */
const Cursor = idCursor(Schema.String.pipe(Schema.pattern(/^nod_[0-9a-f]{32}$/)))

export const listNodes = implement(Api.listNodes, (invocation, input) =>
  Effect.gen(function* () {
    const read = (after: string | undefined, rows: number) => nodesAfter(workspaceOf(invocation), input.label, after, rows)
    const { page, nextCursor } = yield* keysetPage(Cursor, input, read, (last) => last.nodeId)
    return { nodes: page, nextCursor }
  })
)

export const nodeCapabilities: ReadonlyArray<AnyCapability> = [defineLabel, getSchema, createNode, updateNode, deleteNode, getNode, listNodes]
