/**
 * The packs wing's contracts: `codegraph.search`, on the API, MCP and the agent surface.
 */
import { Schema } from "effect"
import { defineContract, type Role } from "../checkpoint/Capability.ts"

const Result = Schema.Struct({
  path: Schema.String,
  symbol: Schema.optional(Schema.String),
  line: Schema.optional(Schema.Int),
  snippet: Schema.optional(Schema.String)
})

/** What the code graph service answers, as `codegraph.search` answers it. */
export const CodegraphAnswer = Schema.Struct({ results: Schema.Array(Result) })

const readers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"]

export const searchCodegraph = defineContract({
  name: "codegraph.search",
  description: "Search the workspace's code graph for files and symbols matching a query.",
  scope: "workspace",
  input: Schema.Struct({
    query: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)),
    limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 50)))
  }),
  output: CodegraphAnswer,
  surfaces: ["api", "mcp", "agent"],
  roles: readers,
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
})
