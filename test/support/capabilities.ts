/** A capability made up for a test: a workspace Member's read on the API, MCP and the agent, answering nothing, unless `fields` say otherwise. */
import { Effect, Schema } from "effect"
import type { AnyCapability, Capability } from "../../src/checkpoint/Capability.ts"

export const fixtureCapability = (name: string, fields: Partial<Capability<any, any, never>> = {}): AnyCapability => ({
    name,
    description: name,
    scope: "workspace",
    input: Schema.Unknown,
    output: Schema.Unknown,
    surfaces: ["api", "mcp", "agent"],
    roles: ["workspace:member"],
    sensitivity: "low",
    mutating: false,
    destructive: false,
    needsApproval: false,
    claimedBy: "builtin",
    handler: () => Effect.void,
    ...fields
  })
