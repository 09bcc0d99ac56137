/**
 * The cluster wing's contract: the nodes, the log's partitions and the node's throughput history
 * (`cluster.get`), for an Owner, on the API and MCP.
 */
import { Schema } from "effect"
import { defineContract } from "../checkpoint/Capability.ts"
import { ClusterView } from "../platform/Wire.ts"

export const getCluster = defineContract({
  name: "cluster.get",
  description:
    "The cluster: each node with the partitions it owns, each log partition's end offset, projected offset and lag, and the answering node's recent samples of events appended per second and total lag.",
  scope: "organization",
  roles: ["org:owner"],
  surfaces: ["api", "mcp"],
  sensitivity: "high",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  input: Schema.Struct({}),
  output: ClusterView
})
