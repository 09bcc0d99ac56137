/**
 * The agent's tools: the registry's capabilities whose surfaces include `agent` and whose roles the
 * caller holds, plus the engine's own `ask_user`. The listing route and the turn both derive them
 * here, so what a person sees listed is what the agent may call.
 */
import { entitled } from "../packs/Entitlement.ts"
import { admits } from "../checkpoint/Access.ts"
import type { AnyCapability, Invocation, Registry } from "../checkpoint/Capability.ts"
import type { RiskLevel } from "../platform/Wire.ts"
import type { JsonObject } from "../checkpoint/ToolSchemas.ts"

/** Model providers allow `[a-zA-Z0-9_-]` in tool names: a capability's dots become `__`. */
export const toolNameOf = (capability: string): string => capability.replaceAll(".", "__")

export const ASK_USER = "ask_user"

export const askUserSchema: JsonObject = {
  type: "object",
  properties: {
    question: { type: "string", minLength: 1, maxLength: 2000, description: "What to ask the person." },
    options: { type: "array", items: { type: "string", maxLength: 200 }, maxItems: 10, description: "Suggested answers; may be empty." }
  },
  required: ["question"],
  additionalProperties: false
}

export const ASK_USER_DESCRIPTION =
  "Ask the person a question and wait for the answer (up to five minutes). Without an answer, continue and state the assumption you make."

export interface AgentTool {
  readonly capability: AnyCapability
  readonly toolName: string
  readonly inputSchema: JsonObject
  readonly riskLevel: RiskLevel
}

/** A capability an agent's turn can be offered: on the agent surface, acting in the turn's workspace. */
export const isAgentCapability = (capability: AnyCapability): boolean => capability.surfaces.includes("agent") && capability.scope === "workspace"

/** The capabilities the agent may call for this caller: on the agent surface, admitted by the
 * checkpoint's own rules for the caller's roles, and builtin or of a pack the organization installed
 * and enabled (`packs`). */
export const agentToolsFor = (registry: Registry, invocation: Invocation, packs: ReadonlySet<string>): ReadonlyArray<AgentTool> => {
  const tools: Array<AgentTool> = []
  for (const capability of registry.all) {
    if (!isAgentCapability(capability) || !entitled(capability, packs) || !admits(invocation.principal, capability, invocation.roles)) continue
    const inputSchema = registry.toolSchemas.get(capability.name)?.input
    if (inputSchema === undefined) continue
    tools.push({ capability, toolName: toolNameOf(capability.name), inputSchema, riskLevel: capability.sensitivity })
  }
  return tools
}
