/**
 * The assistant wing's contracts: the turn and what acts on it (`ask_assistant`, approvals,
 * questions, reply, cancel, the agent's tools), workspace agents (`agent.*`), attachments, what
 * the chat pages read back (conversations, runs, transcripts, the approvals inbox), and the
 * organization's model tiers and keys.
 */
import { Schema } from "effect"
import { agentDefinition, AgentSkills, AgentSlug } from "../../actors/agent/events.ts"
import { skillDefinition, SkillSlug } from "../../actors/skill/events.ts"
import { ApprovalReceipt, RunEdits, RunError, Usage } from "../../actors/conversation/events.ts"
import { KeyFamily, ModelTierSlug } from "../../actors/models/events.ts"
import { defineContract, type Role } from "../checkpoint/Capability.ts"
import { AsOf } from "../platform/AsOf.ts"
import { PageLimit } from "../platform/Paging.ts"
import { StorableString } from "../platform/StorableText.ts"
import { ParkedCard, ToolCallRecord } from "../platform/Wire.ts"

// ---------------------------------------------------------------------------------------------
// the turn (spec 4.1)

/** The workspace's people: its Admins, Members and Viewers, and the organization's Owners. */
export const members: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"]
/** Spec 5 rule 6: the roles `ask_assistant` grants. */
export const askers: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member"]

const common = {
  scope: "workspace",
  roles: members,
  claimedBy: "builtin",
  destructive: false,
  needsApproval: false
} as const

/** A string of `min` to `max` characters, counted as Unicode code points (what a person counts). */
const Characters = (min: number, max: number) =>
  StorableString.pipe(
    Schema.filter((text) => {
      const length = [...text].length
      return (length >= min && length <= max) || `must be ${min} to ${max} characters, got ${length}`
    })
  )

const Uuid = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { message: () => "must be a UUID" }))

export const Effort = Schema.Literal("low", "medium", "high", "xhigh", "max")

/** Spec 2.2. */
export const ChatRequest = Schema.Struct({
  content: Characters(1, 32768),
  conversationId: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(100)))),
  turnId: Schema.optional(Uuid),
  attachments: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(100))).pipe(Schema.maxItems(10))),
  goal: Schema.optional(
    Schema.Struct({
      statement: Characters(1, 2000),
      maxRounds: Schema.optional(Schema.Int.pipe(Schema.between(1, 4)))
    })
  ),
  tier: Schema.optional(Schema.String.pipe(Schema.maxLength(100))),
  model: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  effort: Schema.optional(Effort),
  pageContext: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  // accepted with no effect (spec 9.3), so older clients are not refused
  activeServerIds: Schema.optional(Schema.Array(Schema.String)),
  budget: Schema.optional(Schema.Unknown)
})

export const askAssistant = defineContract({
  ...common,
  name: "ask_assistant",
  roles: askers,
  description: "Run one turn of the workspace assistant: as an SSE stream (chat/stream) or as one JSON result (assistant/ask).",
  rest: { method: "post", path: "chat/stream" },
  // an automation's agent and prompt steps are turns too (never a tool the model is offered)
  surfaces: ["api", "playbook"],
  input: ChatRequest,
  // the started turn stays in the process; the gateway frames its events
  output: Schema.Unknown,
  sensitivity: "medium",
  mutating: true,
  changesAccess: false
})

/** Spec 2.4: what became of an approved (or denied) call. */
export const Execution = Schema.Struct({
  status: Schema.Literal("succeeded", "dispatched", "failed", "indeterminate", "queued", "denied", "expired"),
  runId: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String)
})

export const resolveApproval = defineContract({
  ...common,
  name: "agent.approvals.resolve",
  description:
    "Approve or deny a tool call the agent parked. An approved call runs as a new run; the answer says whether it succeeded or failed, or, past a few seconds, whether it is still running (dispatched) or waiting for room on the node (queued), with the decision's receipt, signed with the node's audit key (docs/audit.md).",
  rest: { method: "post", path: "agent/approvals/resolve" },
  // a person answers through their client (the app, a script, an MCP client); never the agent itself
  surfaces: ["api", "mcp"],
  input: Schema.Struct({
    approvalId: Schema.String.pipe(Schema.maxLength(100)),
    decision: Schema.Literal("approved", "denied"),
    note: Schema.optional(Characters(0, 2000))
  }),
  output: Schema.Struct({ execution: Execution, receipt: ApprovalReceipt }),
  sensitivity: "high",
  mutating: true,
  changesAccess: false
})

export const answerQuestion = defineContract({
  ...common,
  name: "assistant.question.answer",
  description: "Answer a question the agent asked in a running turn (one of its options, or free text).",
  rest: { method: "post", path: "assistant/question/answer" },
  surfaces: ["api"],
  input: Schema.Struct({ questionId: Schema.String.pipe(Schema.maxLength(100)), answer: Characters(1, 4000) }),
  output: Schema.Struct({ found: Schema.Boolean }),
  sensitivity: "low",
  mutating: true,
  changesAccess: false
})

export const turnReply = defineContract({
  ...common,
  name: "assistant.reply",
  description: "The state of one of your runs and, once the turn finished, its reply: how a client that went away finds the answer.",
  rest: { method: "post", path: "assistant/reply" },
  surfaces: ["api", "mcp"],
  input: Schema.Struct({ runId: Schema.String.pipe(Schema.maxLength(100)) }),
  output: Schema.Struct({
    runStatus: Schema.Literal("running", "finished", "failed", "stopped"),
    reply: Schema.optional(Schema.Struct({ text: Schema.String }))
  }),
  sensitivity: "low",
  mutating: false
})

export const cancelTurn = defineContract({
  ...common,
  name: "assistant.turn.cancel",
  description: "Stop a running turn by the turnId its person sent; it ends with stopped true and its partial reply.",
  rest: { method: "post", path: "assistant/turn/cancel" },
  surfaces: ["api"],
  input: Schema.Struct({ turnId: Schema.String.pipe(Schema.maxLength(100)) }),
  output: Schema.Struct({ found: Schema.Boolean }),
  sensitivity: "low",
  mutating: true,
  changesAccess: false
})

/** The resume route's id of the last event a client saw: an SSE `id:`, a whole number. */
const LastEventId = Schema.Int.pipe(Schema.nonNegative())

export const streamTurn = defineContract({
  ...common,
  name: "assistant.turn.stream",
  description:
    "Resume the chat stream of one of your turns, by its runId (tse_) or the turnId you sent: the events after lastEventId (the SSE `id:` you saw last; none: from the start), then the rest as the turn goes on, to the same `done`. Framed as SSE by GET chat/turns/{turnId}/stream.",
  rest: { method: "post", path: "chat/turns/stream" },
  surfaces: ["api"],
  input: Schema.Struct({ turnId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)), lastEventId: Schema.optional(LastEventId) }),
  // the followed turn stays in the process; the gateway frames its events (null: no such turn of the caller)
  output: Schema.Unknown,
  sensitivity: "low",
  mutating: false
})

/** A useChat chat id: the conversation it stands for (src/assistant/UiChat.ts). */
const ChatId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

/**
 * The AI SDK's `useChat` request body (its default transport's): the chat id, the messages (each
 * checked against the SDK's own UI message schema by the handler) and what prompted the request.
 */
export const UiChatRequest = Schema.Struct({
  id: ChatId,
  messages: Schema.Array(Schema.Unknown).pipe(Schema.minItems(1), Schema.maxItems(1000)),
  trigger: Schema.optional(Schema.Literal("submit-message", "regenerate-message")),
  messageId: Schema.optional(Schema.String)
})

export const chatUi = defineContract({
  ...common,
  name: "assistant.chat.ui",
  roles: askers,
  description:
    "Run one assistant turn for the AI SDK's useChat, answered as its UI message stream (v1): the last message is the content, the chat id the conversation. " +
    "A last message of the assistant carrying tool-approval responses resolves those approvals instead (agent.approvals.resolve).",
  rest: { method: "post", path: "chat/ui" },
  surfaces: ["api"],
  input: UiChatRequest,
  // the started turn (or the approvals answered) stays in the process; the gateway frames it
  output: Schema.Unknown,
  sensitivity: "medium",
  mutating: true,
  changesAccess: false
})

export const chatUiStream = defineContract({
  ...common,
  name: "assistant.chat.ui.stream",
  roles: askers,
  description: "Resume the running turn of one of your useChat chats as its UI message stream, from its start; none running: 204. Framed by GET chat/ui/{id}/stream.",
  rest: { method: "post", path: "chat/ui/stream" },
  surfaces: ["api"],
  input: Schema.Struct({ id: ChatId }),
  // the followed turn stays in the process; the gateway frames it (null: no turn of the chat runs)
  output: Schema.Unknown,
  sensitivity: "low",
  mutating: false
})

export const chatUiStop = defineContract({
  ...common,
  name: "assistant.chat.ui.stop",
  roles: askers,
  description: "Stop the running turn of one of your useChat chats (as assistant.turn.cancel does); found false when none runs. Also POST chat/ui/{id}/stop.",
  rest: { method: "post", path: "chat/ui/stop" },
  surfaces: ["api"],
  input: Schema.Struct({ id: ChatId }),
  output: Schema.Struct({ found: Schema.Boolean }),
  sensitivity: "low",
  mutating: true,
  changesAccess: false
})

/**
 * AG-UI 1.0's RunAgentInput, as far as the route reads it: the thread (a chat id, the conversation
 * it stands for), the run, the messages (the last person's message is the content) and the answers
 * to the interrupts a previous run ended with. Tools, context, state and forwarded props are
 * accepted and not read: the workspace's capabilities are the agent's tools.
 */
export const AgUiRunInput = Schema.Struct({
  threadId: ChatId,
  runId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  messages: Schema.Array(Schema.Unknown).pipe(Schema.maxItems(1000)),
  protocolVersion: Schema.optional(Schema.String),
  parentRunId: Schema.optional(Schema.String),
  tools: Schema.optional(Schema.Array(Schema.Unknown)),
  context: Schema.optional(Schema.Array(Schema.Unknown)),
  state: Schema.optional(Schema.Unknown),
  forwardedProps: Schema.optional(Schema.Unknown),
  resume: Schema.optional(
    Schema.Array(
      Schema.Struct({
        interruptId: Schema.String,
        status: Schema.Literal("resolved", "cancelled"),
        payload: Schema.optional(Schema.Unknown),
        metadata: Schema.optional(Schema.Unknown)
      })
    ).pipe(Schema.maxItems(100))
  )
})

export const chatAgUi = defineContract({
  ...common,
  name: "assistant.chat.agui",
  roles: askers,
  description:
    "Run one assistant turn for an AG-UI client (RunAgentInput in, AG-UI 1.0 events out over SSE): the thread id is the conversation, the last person's message the content. " +
    "A turn that parks tool calls for approval ends with an interrupt outcome; a run whose resume answers those interrupts resolves the approvals instead (agent.approvals.resolve). " +
    "A client that leaves the stream before the run ends (AG-UI's abortRun) stops the turn, as assistant.turn.cancel does.",
  rest: { method: "post", path: "agui" },
  surfaces: ["api"],
  input: AgUiRunInput,
  // the started turn (or the approvals answered) stays in the process; the gateway frames it
  output: Schema.Unknown,
  sensitivity: "medium",
  mutating: true,
  changesAccess: false
})

export const chatAgUiConnect = defineContract({
  ...common,
  name: "assistant.chat.agui.connect",
  roles: askers,
  description:
    "Connect an AG-UI client to the running turn of one of your threads (RunAgentInput in; AG-UI 1.0 events out over SSE): the run from its first event, then live to its end. " +
    "No turn of the thread runs: the stream ends at once, with no events. Leaving the stream stops nothing.",
  rest: { method: "post", path: "agui/connect" },
  surfaces: ["api"],
  input: AgUiRunInput,
  // the followed turn stays in the process; the gateway frames it
  output: Schema.Unknown,
  sensitivity: "low",
  mutating: false
})

export const listAgentTools = defineContract({
  ...common,
  name: "agent.tools.list",
  description: "The tools the workspace agent may call for you: capabilities on the agent surface that your role allows, and ask_user.",
  rest: { method: "post", path: "agent/tools" },
  surfaces: ["api", "mcp"],
  input: Schema.Struct({}),
  output: Schema.Struct({
    tools: Schema.Array(
      Schema.Struct({
        name: Schema.String,
        capability: Schema.NullOr(Schema.String),
        description: Schema.String,
        inputSchema: Schema.Unknown,
        needsApproval: Schema.Boolean,
        riskLevel: Schema.Literal("low", "medium", "high")
      })
    )
  }),
  sensitivity: "low",
  mutating: false
})

// ---------------------------------------------------------------------------------------------
// workspace agents (spec 2.8's `agentSlug`, 5.3's "agents")

const agentReaders: ReadonlyArray<Role> = ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"]
const agentWriters: ReadonlyArray<Role> = ["org:owner", "workspace:admin"]

const agentCommon = { scope: "workspace", surfaces: ["api", "mcp", "agent"], claimedBy: "builtin" } as const
const agentReads = { ...agentCommon, roles: agentReaders, mutating: false, destructive: false, needsApproval: false, sensitivity: "low" } as const
// an agent's instructions and tools are what automations run with: an agent (the model) changes them only with its person's approval
const agentWrites = { ...agentCommon, roles: agentWriters, mutating: true, changesAccess: false, destructive: false, needsApproval: true, sensitivity: "medium" } as const

export const Agent = Schema.Struct({
  slug: Schema.String,
  name: Schema.String,
  description: Schema.String,
  instructions: Schema.String,
  /** null: the organization's default tier. */
  tier: Schema.NullOr(Schema.String),
  /** For the built-in assistant: every agent tool the caller's role allows. */
  tools: Schema.Array(Schema.String),
  /** The workspace skills attached (slugs); their current versions join its turns' system prompt. */
  skills: Schema.Array(Schema.String),
  builtIn: Schema.Boolean,
  version: Schema.Int,
  createdAt: Schema.NullOr(Schema.String),
  updatedAt: Schema.NullOr(Schema.String)
})

const SlugInput = Schema.Struct({ slug: AgentSlug })

export const createAgent = defineContract({
  ...agentWrites,
  name: "agent.create",
  description:
    "Create a workspace agent: a slug (lowercase letters, digits, hyphens; `assistant` is the built-in default), a name, instructions that join its system prompt, a model tier for turns that name none (null: the organization's default), and the capabilities (agent surface) its turns may use.",
  input: Schema.Struct({
    slug: AgentSlug,
    name: agentDefinition.name,
    description: Schema.optional(agentDefinition.description),
    instructions: Schema.optional(agentDefinition.instructions),
    tier: Schema.optional(agentDefinition.tier),
    tools: Schema.optional(agentDefinition.tools.pipe(Schema.maxItems(200))),
    skills: Schema.optional(AgentSkills)
  }),
  output: Agent
})

export const updateAgent = defineContract({
  ...agentWrites,
  name: "agent.update",
  description: "Change a workspace agent: each field given replaces the agent's (tools as a whole list; tier null: the organization's default).",
  input: Schema.Struct({
    slug: AgentSlug,
    name: Schema.optional(agentDefinition.name),
    description: Schema.optional(agentDefinition.description),
    instructions: Schema.optional(agentDefinition.instructions),
    tier: Schema.optional(agentDefinition.tier),
    tools: Schema.optional(agentDefinition.tools.pipe(Schema.maxItems(200))),
    skills: Schema.optional(AgentSkills)
  }),
  output: Agent
})

export const deleteAgent = defineContract({
  ...agentWrites,
  name: "agent.delete",
  description: "Delete a workspace agent; its slug is free again. The built-in `assistant` cannot be deleted.",
  destructive: true,
  input: SlugInput,
  output: Schema.Struct({ slug: Schema.String, deleted: Schema.Literal(true) })
})

export const getAgent = defineContract({
  ...agentReads,
  name: "agent.get",
  description: "Read one workspace agent by slug (`assistant`: the built-in default).",
  input: SlugInput,
  output: Agent
})

export const listWorkspaceAgents = defineContract({
  ...agentReads,
  name: "agent.list",
  description: "The workspace's agents: the built-in assistant first, then the others by slug.",
  input: Schema.Struct({}),
  output: Schema.Struct({ agents: Schema.Array(Agent) })
})

// ---------------------------------------------------------------------------------------------
// workspace skills (5.3's "skills"): versioned instructions attached to agents; who may, as for agents

export const Skill = Schema.Struct({
  slug: Schema.String,
  name: Schema.String,
  description: Schema.String,
  instructions: Schema.String,
  /** 1 on creation, +1 per update that changed something. */
  version: Schema.Int,
  createdAt: Schema.String,
  updatedAt: Schema.String
})

const SkillSlugInput = Schema.Struct({ slug: SkillSlug })

export const createSkill = defineContract({
  ...agentWrites,
  name: "skill.create",
  description:
    "Create a workspace skill: a slug (lowercase letters, digits, hyphens), a name, and instructions that join the system prompt of every agent it is attached to (agent.update's skills). Starts at version 1.",
  input: Schema.Struct({ slug: SkillSlug, name: skillDefinition.name, description: Schema.optional(skillDefinition.description), instructions: skillDefinition.instructions }),
  output: Skill
})

export const updateSkill = defineContract({
  ...agentWrites,
  name: "skill.update",
  description: "Change a workspace skill: each field given replaces the skill's; a change is one version more, and the next turn of each agent it is attached to uses it.",
  input: Schema.Struct({
    slug: SkillSlug,
    name: Schema.optional(skillDefinition.name),
    description: Schema.optional(skillDefinition.description),
    instructions: Schema.optional(skillDefinition.instructions)
  }),
  output: Skill
})

export const deleteSkill = defineContract({
  ...agentWrites,
  name: "skill.delete",
  description: "Delete a workspace skill; its slug is free again. Agents it was attached to keep the slug but their turns no longer carry it.",
  destructive: true,
  input: SkillSlugInput,
  output: Schema.Struct({ slug: Schema.String, deleted: Schema.Literal(true) })
})

export const getSkill = defineContract({
  ...agentReads,
  name: "skill.get",
  description: "Read one workspace skill by slug, at its current version.",
  input: SkillSlugInput,
  output: Skill
})

export const listSkills = defineContract({
  ...agentReads,
  name: "skill.list",
  description: "The workspace's skills by slug, each at its current version.",
  input: Schema.Struct({}),
  output: Schema.Struct({ skills: Schema.Array(Skill) })
})

// ---------------------------------------------------------------------------------------------
// attachments (spec 4.1 `assistant/attachments/upload`)

export const uploadAttachments = defineContract({
  name: "assistant.attachments.upload",
  description:
    "Upload 1 to 10 files (multipart/form-data, one part with a filename per file) to attach to chat requests; answers each file's gen_ id.",
  scope: "workspace",
  rest: { method: "post", path: "assistant/attachments/upload" },
  input: Schema.Struct({
    files: Schema.Array(
      Schema.Struct({
        name: Schema.String.pipe(Schema.maxLength(255)),
        mediaType: Schema.String.pipe(Schema.maxLength(255)),
        bytes: Schema.Uint8ArrayFromSelf
      })
    )
  }),
  output: Schema.Struct({
    files: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, mediaType: Schema.String, size: Schema.Number }))
  }),
  surfaces: ["api"],
  // who may write in the workspace (as for nodes): a viewer only looks
  roles: ["org:owner", "workspace:admin", "workspace:member"],
  sensitivity: "medium",
  mutating: true,
  changesAccess: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
})

/** A workspace file (uploaded, or generated by a capability such as `documents.pdf.create`) with its
 * bytes in base64: JSON like every other answer, so the same capability serves API and MCP. */
export const downloadAttachment = defineContract({
  name: "assistant.attachments.download",
  description: "Download a file of the workspace by its gen_ id (an upload or a generated file such as a PDF): its name, type, size and bytes in base64.",
  scope: "workspace",
  input: Schema.Struct({ fileId: Schema.String.pipe(Schema.maxLength(64)) }),
  output: Schema.Struct({ id: Schema.String, name: Schema.String, mediaType: Schema.String, size: Schema.Number, contentBase64: Schema.String }),
  surfaces: ["api", "mcp"],
  roles: ["org:owner", "workspace:admin", "workspace:member", "workspace:viewer"],
  sensitivity: "medium",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
})

// ---------------------------------------------------------------------------------------------
// what a chat page reads back (spec 2.2 to 2.4): conversations, runs, transcripts, approvals

const Iso = Schema.String

export const ConversationEntry = Schema.Struct({
  /** `cnv_`. */
  publicId: Schema.String,
  title: Schema.String,
  messageCount: Schema.Int,
  createdAt: Iso,
  lastMessageAt: Iso
})
export type ConversationEntry = typeof ConversationEntry.Type

export const RunStatus = Schema.Literal("running", "finished", "failed", "stopped")

/** A run as a list shows it. */
export const RunEntry = Schema.Struct({
  /** `tse_`. */
  runId: Schema.String,
  /** The conversation's `cnv_`. */
  conversationId: Schema.String,
  /** `turn`: a person's message and the agent's answer; `approval`: an approved call run on its own. */
  kind: Schema.Literal("turn", "approval"),
  status: RunStatus,
  /** The turn id its person sent (to stop it); null when none was sent. */
  turnId: Schema.NullOr(Schema.String),
  model: Schema.String,
  tier: Schema.NullOr(Schema.String),
  effort: Schema.NullOr(Schema.String),
  startedAt: Iso,
  /** Null while running. */
  endedAt: Schema.NullOr(Iso),
  /** Null while running. */
  usage: Schema.NullOr(Usage),
  error: Schema.NullOr(RunError),
  /** The person's edits (run.update): null, no tags and not pinned until edited. */
  ...RunEdits.fields
})
export type RunEntry = typeof RunEntry.Type

/** A parked call of a run, and what became of it. */
export const ApprovalEntry = Schema.Struct({
  /** `apr_`. */
  approvalId: Schema.String,
  capability: Schema.String,
  inputPreview: Schema.String,
  /** `pending` until answered or expired. */
  status: Schema.Literal("pending", "approved", "denied", "expired"),
  /** The asking person: the only one who may answer (spec 4.1 rule 6). */
  requestedBy: Schema.String,
  expiresAt: Iso,
  resolvedAt: Schema.NullOr(Iso),
  note: Schema.NullOr(Schema.String),
  /** The run that executed the approved call. */
  executionRunId: Schema.NullOr(Schema.String),
  /** The decision's signed receipt; null while pending, and for a decision recorded before receipts. */
  receipt: Schema.NullOr(ApprovalReceipt)
})
export type ApprovalEntry = typeof ApprovalEntry.Type

/** A run in its thread: the turn result (spec 2.3) that the stream's `done` carried, and its approvals. */
export const ThreadRun = Schema.Struct({
  ...RunEntry.fields,
  /** Empty while running and after a failure (the turn result is recorded only when the turn answered). */
  toolCalls: Schema.Array(ToolCallRecord),
  parkedCards: Schema.Array(ParkedCard),
  stopped: Schema.Boolean,
  /** An approval run's outcome (spec 2.4); null for a turn. */
  execution: Schema.NullOr(Execution),
  /** What an approval run's call answered, as recorded; null for a turn, for a call that failed or is still running, and once its person is erased. */
  output: Schema.Unknown,
  approvals: Schema.Array(ApprovalEntry)
})
export type ThreadRun = typeof ThreadRun.Type

export const ThreadMessage = Schema.Struct({
  messageId: Schema.String,
  role: Schema.Literal("user", "assistant"),
  /** Empty once its person was erased. */
  content: Schema.String,
  /** Whether its person was erased (docs/audit.md, "Erasure by crypto-shredding"). */
  erased: Schema.Boolean,
  /** `gen_` file ids. */
  attachments: Schema.Array(Schema.String),
  createdAt: Iso,
  runId: Schema.String
})

export const Thread = Schema.Struct({
  conversationId: Schema.String,
  ...ConversationEntry.fields,
  /** Oldest first. */
  messages: Schema.Array(ThreadMessage),
  /** Oldest first. */
  runs: Schema.Array(ThreadRun)
})
export type Thread = typeof Thread.Type

const Question = Schema.Struct({
  questionId: Schema.String,
  question: Schema.String,
  options: Schema.Array(Schema.String),
  status: Schema.Literal("waiting", "answered", "closed"),
  answer: Schema.NullOr(Schema.String),
  /** `timeout` or `ended` once closed. */
  reason: Schema.NullOr(Schema.String),
  askedAt: Iso,
  endedAt: Schema.NullOr(Iso)
})

/** One run's whole record. */
export const Transcript = Schema.Struct({
  ...ThreadRun.fields,
  /** The person whose run it is. */
  userId: Schema.String,
  /** The person's message; null for an approval run. */
  userMessage: Schema.NullOr(Schema.Struct({ messageId: Schema.String, content: Schema.String, erased: Schema.Boolean, attachments: Schema.Array(Schema.String), createdAt: Iso })),
  /** The whole reply (on a stopped run, what was written before the stop); null while running. */
  reply: Schema.NullOr(Schema.String),
  /** For an approval run: the approval (`apr_`) whose call it executed. */
  approvalId: Schema.NullOr(Schema.String),
  /** Whether the model was sent the conversation's summary (spec 2.5). */
  carriedSummary: Schema.Boolean,
  /** Null while running. */
  durationMs: Schema.NullOr(Schema.Number),
  questions: Schema.Array(Question)
})
export type Transcript = typeof Transcript.Type

export const PendingApproval = Schema.Struct({
  /** `apr_`. */
  approvalId: Schema.String,
  capability: Schema.String,
  inputPreview: Schema.String,
  /** The asking person's user id. */
  requestedBy: Schema.String,
  /** The asking person's name, or their email when they gave no name. */
  requestedByName: Schema.String,
  /** The conversation's `cnv_`; null on another person's call, whose conversation is theirs alone. */
  conversationId: Schema.NullOr(Schema.String),
  /** The run (`tse_`) that parked the call; null on another person's call, whose run is theirs alone. */
  runId: Schema.NullOr(Schema.String),
  parkedAt: Iso,
  expiresAt: Iso,
  /** Whether the caller may answer it: only the person who asked (spec 4.1 rule 6). */
  canAnswer: Schema.Boolean
})

const conversationReads = {
  scope: "workspace",
  roles: members,
  surfaces: ["api", "mcp", "agent"],
  sensitivity: "medium",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
} as const

const Id = Schema.String.pipe(Schema.maxLength(100))

const page = { limit: Schema.optional(PageLimit), cursor: Schema.optional(Schema.String) }

export const listConversations = defineContract({
  ...conversationReads,
  name: "conversation.list",
  description: "List your conversations with the assistant in this workspace, the latest message first: each one's title (its first message), message count and times.",
  input: Schema.Struct(page),
  output: Schema.Struct({ conversations: Schema.Array(ConversationEntry), nextCursor: Schema.NullOr(Schema.String) })
})

export const getConversation = defineContract({
  ...conversationReads,
  name: "conversation.get",
  description:
    "One of your conversations (cnv_ id or UUID) as its chat page shows it: every message in order, and each run with its status and turn result (tool calls, parked approvals and what became of them, stopped, error); with asOf, as it stood at that moment.",
  input: Schema.Struct({ conversationId: Id, asOf: Schema.optional(AsOf) }),
  output: Thread
})

export const listRuns = defineContract({
  ...conversationReads,
  name: "run.list",
  description: "List your runs (assistant turns and approved calls) in this workspace, the latest first; optionally of one of your conversations (cnv_ id or UUID) or in one status.",
  input: Schema.Struct({ conversationId: Schema.optional(Id), status: Schema.optional(RunStatus), ...page }),
  output: Schema.Struct({ runs: Schema.Array(RunEntry), nextCursor: Schema.NullOr(Schema.String) })
})

export const getRun = defineContract({
  ...conversationReads,
  name: "run.get",
  description:
    "One of your runs (tse_) with its transcript: your message and the reply, tool calls and how each ended, its approvals and questions, usage, error, model, tier, effort and timings.",
  input: Schema.Struct({ runId: Id }),
  output: Transcript
})

export const summarizeRun = defineContract({
  ...conversationReads,
  name: "run.summarize",
  description:
    "A short summary of one of your runs (tse_), written by the organization's default model from its transcript. The model's tokens count as assistant spend, as a turn's do.",
  // it spends: metered against the credits, the caps and the workspace's budget
  mutating: true,
  changesAccess: false,
  input: Schema.Struct({ runId: Id }),
  output: Schema.Struct({ runId: Schema.String, summary: Schema.String, model: Schema.String, usage: Usage })
})

/** Limits of a run's edits (docs/decisions.md, issue 27). */
const RunTitle = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
const RunTag = Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(50))

export const updateRun = defineContract({
  ...conversationReads,
  name: "run.update",
  description:
    "Edit one of your runs (tse_): its title (null clears it), its tags (the whole set, up to 20) or whether it is pinned; what you leave out stays. Answers the run as run.get reads it.",
  mutating: true,
  changesAccess: false,
  input: Schema.Struct({
    runId: Id,
    title: Schema.optional(Schema.NullOr(RunTitle)),
    tags: Schema.optional(Schema.Array(RunTag).pipe(Schema.maxItems(20))),
    pinned: Schema.optional(Schema.Boolean)
  }),
  output: Transcript
})

export const listApprovals = defineContract({
  ...conversationReads,
  name: "approval.list",
  description:
    "The workspace's tool calls parked for approval and still waiting (not answered, not expired), the latest first; canAnswer marks those you may answer (only the person who asked may); another person's call says who asked and what, not its conversation or run.",
  input: Schema.Struct(page),
  output: Schema.Struct({ approvals: Schema.Array(PendingApproval), nextCursor: Schema.NullOr(Schema.String) })
})

// ---------------------------------------------------------------------------------------------
// the organization's text model tiers and the provider keys it pays with (spec 2.2): Owner only

const OWNER: ReadonlyArray<Role> = ["org:owner"]

const modelCommon = {
  scope: "organization",
  roles: OWNER,
  surfaces: ["api", "mcp"],
  needsApproval: false,
  claimedBy: "builtin",
  destructive: false
} as const
/** Settings that decide who pays for turns: a signed-in Owner (no key acts as Owner). */
const ownerWrites = { ...modelCommon, requiresPerson: true, mutating: true, sensitivity: "high" } as const

const Tier = Schema.Struct({
  slug: Schema.String,
  /** `<family>:<model>`, or null when the tier names no model yet. */
  model: Schema.NullOr(Schema.String),
  sharedKey: Schema.Boolean,
  archived: Schema.Boolean,
  default: Schema.Boolean
})

const Key = Schema.Struct({
  family: KeyFamily,
  /** The key's last four characters (null for a short key); never the key. */
  keyHint: Schema.NullOr(Schema.String),
  baseUrl: Schema.NullOr(Schema.String),
  models: Schema.NullOr(Schema.Array(Schema.String)),
  setAt: Schema.String
})

const HttpUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { message: () => "baseUrl must be an http(s) URL" })
)

export const setModelTier = defineContract({
  ...ownerWrites,
  name: "org.model_tier.set",
  description:
    "Define (or redefine) one of the organization's text model tiers: its slug, its model (`<family>:<model>`, or null for none yet), and whether the operator's key pays (sharedKey) or the organization's own key for the model's family. archived (default false) takes it out of use; default makes it the tier of turns that name none (false: it stops being the default).",
  input: Schema.Struct({
    slug: ModelTierSlug,
    model: Schema.NullOr(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))),
    sharedKey: Schema.Boolean,
    archived: Schema.optional(Schema.Boolean),
    default: Schema.optional(Schema.Boolean)
  }),
  output: Tier
})

export const listModelTiers = defineContract({
  ...modelCommon,
  name: "org.model_tier.list",
  description:
    "The organization's text model tiers (archived ones too) and its default tier, the operator's tiers that apply when it has none of those slugs, and the model keys it holds (never the keys themselves).",
  mutating: false,
  sensitivity: "low",
  input: Schema.Struct({}),
  output: Schema.Struct({
    tiers: Schema.Array(Tier),
    /** The organization's default tier; null: the operator's (`operatorDefaultTier`). */
    defaultTier: Schema.NullOr(Schema.String),
    operatorTiers: Schema.Struct({ fast: Schema.String, balanced: Schema.String, precise: Schema.String }),
    operatorDefaultTier: Schema.String,
    keys: Schema.Array(Key)
  })
})

export const setModelKey = defineContract({
  ...ownerWrites,
  name: "org.model_key.set",
  description:
    "Set the organization's own key for a model family (openai: any OpenAI-compatible endpoint at baseUrl, default OpenAI's API; anthropic). Tiers without sharedKey pay with it. models, when given, are the only models it may run. The key is stored sealed and never shown again. A baseUrl on a loopback or private address is refused unless the operator allowed it.",
  input: Schema.Struct({
    family: KeyFamily,
    apiKey: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(4096)),
    baseUrl: Schema.optional(HttpUrl),
    models: Schema.optional(Schema.Array(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))).pipe(Schema.minItems(1), Schema.maxItems(100)))
  }),
  output: Key
})

export const clearModelKey = defineContract({
  ...ownerWrites,
  name: "org.model_key.clear",
  description: "Remove the organization's own key for a model family. Tiers that pay with it are refused until a key is set again.",
  input: Schema.Struct({ family: KeyFamily }),
  // clearing a key that is not set changes nothing: either way none is set afterwards
  output: Schema.Struct({ family: KeyFamily })
})
