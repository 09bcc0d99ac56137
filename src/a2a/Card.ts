/**
 * The Agent Card (A2A v0.3): the public one at `/.well-known/agent-card.json` describes the
 * platform's workspace assistant; the authenticated extended card, for a caller's workspace, lists
 * the agent with every skill it has there (its tools, as the caller's role allows).
 */
import { ALLOWED_MEDIA_TYPES } from "../assistant/Files.ts"
import type { AgentTool } from "../assistant/Tools.ts"

export const PROTOCOL_VERSION = "0.3.0"
export const AGENT_VERSION = "0.1.0"

/** What a message may carry: text, data parts (JSON), and files of the types an attachment may have. */
const INPUT_MODES = [...new Set(["text/plain", "application/json", ...ALLOWED_MEDIA_TYPES])]

const assistantSkill = {
  id: "assistant",
  name: "Workspace assistant",
  description: "Answers questions and acts in the workspace through its tools; asks when it needs a decision.",
  tags: ["assistant", "chat"],
  examples: ["What changed in this workspace today?"],
  inputModes: INPUT_MODES,
  outputModes: ["text/plain"]
}

export const publicAgentCard = (baseUrl: string) => ({
  protocolVersion: PROTOCOL_VERSION,
  name: "svc workspace assistant",
  description: "The assistant of a workspace, reachable by any A2A client with a workspace key.",
  url: `${baseUrl.replace(/\/+$/, "")}/a2a`,
  preferredTransport: "JSONRPC",
  version: AGENT_VERSION,
  capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
  defaultInputModes: INPUT_MODES,
  defaultOutputModes: ["text/plain"],
  skills: [assistantSkill],
  securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A workspace API key: Authorization: Bearer svc_..." } },
  security: [{ bearer: [] }],
  supportsAuthenticatedExtendedCard: true
})

/** The extended card: the agent of this workspace and its skills, one per tool the caller's role allows. */
export const extendedAgentCard = (baseUrl: string, place: { readonly orgSlug: string; readonly workspaceSlug: string }, tools: ReadonlyArray<AgentTool>) => {
  const card = publicAgentCard(baseUrl)
  return {
    ...card,
    name: `${place.orgSlug}/${place.workspaceSlug} assistant`,
    description: `The assistant of workspace ${place.orgSlug}/${place.workspaceSlug}.`,
    skills: [
      assistantSkill,
      ...tools.map((tool) => ({
        id: tool.toolName,
        name: tool.capability.name,
        description: tool.capability.description,
        tags: [tool.capability.mutating ? "writes" : "reads", ...(tool.capability.needsApproval ? ["needs-approval"] : [])]
      }))
    ]
  }
}
