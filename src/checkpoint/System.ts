/**
 * Capabilities about the platform itself. `system.ping` does nothing but pass the checkpoint: it
 * answers whether a credential may act in a workspace, and `bench/auth.ts` measures the
 * checkpoint's cost with it.
 */
import { Effect, Schema } from "effect"
import { type AnyCapability, defineContract, implement } from "./Capability.ts"

/** `system.ping`'s contract. */
export const pingContract = defineContract({
  name: "system.ping",
  description: "Answers { pong: true } to any member of the workspace: the checkpoint and nothing else.",
  scope: "workspace",
  input: Schema.Struct({}),
  output: Schema.Struct({ pong: Schema.Literal(true) }),
  surfaces: ["api", "mcp", "agent"],
  roles: ["org:owner", "org:member", "workspace:admin", "workspace:member", "workspace:viewer"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
})

export const ping = implement(pingContract, () => Effect.succeed({ pong: true as const }))

export const systemCapabilities: ReadonlyArray<AnyCapability> = [ping]
