/**
 * The nodes wing's contracts: the workspace schema registry (`schema.*`) and workspace nodes
 * (`node.*`), on the API, MCP and the agent surface.
 */
import { Schema } from "effect"
import { Properties, PropertiesInput, PropertyDefinitions, PropertySpec } from "../../actors/schema/definition.ts"
import { Operator } from "../../actors/schema/operators.ts"
import { defineContract, type Role } from "../checkpoint/Capability.ts"
import { AsOf } from "../platform/AsOf.ts"
import { PageLimit } from "../platform/Paging.ts"

const readers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"]
const writers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member"]

const common = { scope: "workspace", surfaces: ["api", "mcp", "agent"], sensitivity: "low", needsApproval: false, claimedBy: "builtin" } as const
const reads = { ...common, roles: readers, mutating: false, destructive: false } as const
const writes = { ...common, roles: writers, mutating: true, changesAccess: false, destructive: false } as const

export const Label = Schema.Struct({
  label: Schema.String,
  properties: PropertyDefinitions,
  /** Per property, the condition operators its data type admits (what automations' conditions may use). */
  operators: Schema.Record({ key: Schema.String, value: Schema.Array(Operator) }),
  version: Schema.Int,
  updatedAt: Schema.String
})

export const Node = Schema.Struct({
  nodeId: Schema.String,
  label: Schema.String,
  properties: Properties,
  version: Schema.Int,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type Node = typeof Node.Type

const NodeId = Schema.Struct({ nodeId: Schema.NonEmptyString })

export const defineLabel = defineContract({
  ...writes,
  name: "schema.define_label",
  description: "Define a node label of the workspace with typed properties, or replace its definition.",
  input: Schema.Struct({ label: Schema.String, properties: Schema.Record({ key: Schema.String, value: PropertySpec }) }),
  output: Label
})

export const getSchema = defineContract({
  ...reads,
  name: "schema.get",
  description: "The workspace's label definitions, or one label's, with the condition operators each property admits.",
  input: Schema.Struct({ label: Schema.optional(Schema.String) }),
  output: Schema.Struct({ labels: Schema.Array(Label) })
})

export const createNode = defineContract({
  ...writes,
  name: "node.create",
  description: "Create a node of a defined label; its properties are checked against the label's definition.",
  input: Schema.Struct({ label: Schema.String, properties: PropertiesInput }),
  output: Node
})

export const updateNode = defineContract({
  ...writes,
  name: "node.update",
  description: "Change some properties of a node: a value sets a property, null removes it.",
  input: Schema.Struct({ nodeId: Schema.NonEmptyString, properties: PropertiesInput }),
  output: Node
})

export const deleteNode = defineContract({
  ...writes,
  name: "node.delete",
  description: "Delete a node.",
  input: NodeId,
  output: Schema.Struct({ nodeId: Schema.String, deleted: Schema.Literal(true) }),
  destructive: true,
  // the agent may delete only what its person approves
  needsApproval: true,
  sensitivity: "medium"
})

export const getNode = defineContract({
  ...reads,
  name: "node.get",
  description: "Read one node; with asOf, as it stood at that moment.",
  input: Schema.Struct({ ...NodeId.fields, asOf: Schema.optional(AsOf) }),
  output: Node
})

export const listNodes = defineContract({
  ...reads,
  name: "node.list",
  description: "List the workspace's nodes, optionally of one label, in pages ordered by id.",
  input: Schema.Struct({
    label: Schema.optional(Schema.String),
    limit: Schema.optional(PageLimit),
    cursor: Schema.optional(Schema.String)
  }),
  output: Schema.Struct({ nodes: Schema.Array(Node), nextCursor: Schema.NullOr(Schema.String) })
})
