/**
 * The Agent Card (A2A v0.3, with 1.0's list of interfaces; src/a2a/V1.ts gives its 1.0 shape): the public one at `/.well-known/agent-card.json` describes the
 * platform's workspace assistant; the authenticated extended card, for a caller's workspace, lists
 * the agent with every skill it has there: the workspace's agents (a message names one in
 * `metadata.agentSlug`, the card's one extension) and its tools, as the caller's role allows.
 */
import { ALLOWED_MEDIA_TYPES } from "../assistant/Files.ts"
import type { AgentTool } from "../assistant/Tools.ts"
import type { WorkspaceAgent } from "../assistant/Queries.ts"
import { DEFAULT_AGENT } from "../assistant/WorkspaceAgents.ts"

export const PROTOCOL_VERSION = "0.3.0"
export const AGENT_VERSION = "0.1.0"

/** What a message may carry: text, data parts (JSON), and files of the types an attachment may have. */
const INPUT_MODES = [...new Set(["text/plain", "application/json", ...ALLOWED_MEDIA_TYPES])]

const assistantSkill = {
  id: DEFAULT_AGENT.slug,
  name: DEFAULT_AGENT.name,
  description: DEFAULT_AGENT.description,
  tags: ["assistant", "chat"],
  examples: ["What changed in this workspace today?"],
  inputModes: INPUT_MODES,
  outputModes: ["text/plain"]
}

/**
 * Where and how the agent is reached, as A2A 1.0 lists it (`supportedInterfaces`, the preferred
 * first): 1.0 and 0.3 over JSON-RPC on one endpoint, told apart by the `A2A-Version` header, and
 * 1.0 over HTTP+JSON under it.
 */
const supportedInterfaces = (endpoint: string) => [
  { url: endpoint, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
  { url: `${endpoint}/v1`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
  { url: endpoint, protocolBinding: "JSONRPC", protocolVersion: "0.3" }
]

const endpointOf = (baseUrl: string) => `${baseUrl.replace(/\/+$/, "")}/a2a`

export const publicAgentCard = (baseUrl: string) => ({
  protocolVersion: PROTOCOL_VERSION,
  name: "svc workspace assistant",
  description: "The assistant of a workspace, reachable by any A2A client with a workspace key.",
  url: endpointOf(baseUrl),
  supportedInterfaces: supportedInterfaces(endpointOf(baseUrl)),
  preferredTransport: "JSONRPC",
  version: AGENT_VERSION,
  // extendedAgentCard: 1.0's name of supportsAuthenticatedExtendedCard, for 1.0 clients that read this card (0.3 allows more capabilities than it names)
  capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false, extendedAgentCard: true },
  defaultInputModes: INPUT_MODES,
  defaultOutputModes: ["text/plain"],
  skills: [assistantSkill],
  securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A workspace API key: Authorization: Bearer svc_..." } },
  security: [{ bearer: [] }],
  supportsAuthenticatedExtendedCard: true
})

/** The key of `message.metadata` that names the workspace agent a new task's turn runs as. */
export const AGENT_SLUG_METADATA = "agentSlug"

/**
 * A2A v0.3 has no field that addresses one agent of an endpoint: a message names it in its metadata,
 * as this extension says. It is not required, which the card says by leaving `required` out: a
 * `false` there is a default the 1.0 card's signed canonical form omits (src/a2a/CardSignature.ts).
 */
const agentSlugExtension = {
  uri: "urn:svc:a2a:ext:agent-slug:v1",
  description: `A message that starts a task may name the workspace agent it is for in message.metadata.${AGENT_SLUG_METADATA}: the id of one of this card's skills tagged "agent". Without it, the workspace assistant answers.`
}

const agentSkill = (agent: WorkspaceAgent) => ({
  id: agent.slug,
  name: agent.name,
  description: agent.description === "" ? `The workspace agent ${agent.name}.` : agent.description,
  tags: ["agent"],
  inputModes: INPUT_MODES,
  outputModes: ["text/plain"]
})

/**
 * The extended card: the agent of this workspace and its skills: its agents (the built-in assistant
 * first), then one per tool the caller's role allows.
 */
export const extendedAgentCard = (
  baseUrl: string,
  place: { readonly orgSlug: string; readonly workspaceSlug: string },
  agents: ReadonlyArray<WorkspaceAgent>,
  tools: ReadonlyArray<AgentTool>
) => {
  const card = publicAgentCard(baseUrl)
  return {
    ...card,
    name: `${place.orgSlug}/${place.workspaceSlug} assistant`,
    description: `The assistant of workspace ${place.orgSlug}/${place.workspaceSlug}.`,
    capabilities: { ...card.capabilities, extensions: [agentSlugExtension] },
    skills: [
      assistantSkill,
      ...agents.filter((agent) => !agent.builtIn).map(agentSkill),
      ...tools.map((tool) => ({
        id: tool.toolName,
        name: tool.capability.name,
        description: tool.capability.description,
        tags: [tool.capability.mutating ? "writes" : "reads", ...(tool.capability.needsApproval ? ["needs-approval"] : [])]
      }))
    ]
  }
}
