/**
 * What the server sends and its clients read: the chat stream's events (spec 6.1), the turn result
 * (2.3) and the A2A v0.3 objects (2.7). The server encodes with these Schemas and the web app takes
 * its types from them, so a shape is written once. This module imports `effect` only: the web app
 * bundles it.
 */
import { Schema } from "effect"

/**
 * On what goes out: encoding keeps the fields in the order they were built in (stored messages
 * in the order the database gives them), as they were sent before these Schemas encoded them.
 */
const asBuilt = { parseOptions: { propertyOrder: "original" } } as const

// --- the chat stream (spec 6.1) ---

export const Usage = Schema.Struct({
  promptTokens: Schema.Number,
  completionTokens: Schema.Number,
  totalTokens: Schema.Number
})
export type Usage = typeof Usage.Type

export const RiskLevel = Schema.Literal("low", "medium", "high")
export type RiskLevel = typeof RiskLevel.Type

export const RunEvent = Schema.Struct({ type: Schema.Literal("run"), runId: Schema.String })

export const TextEvent = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

export const ReasoningStartEvent = Schema.Struct({ type: Schema.Literal("reasoning-start"), reasoningId: Schema.String })

export const ReasoningDeltaEvent = Schema.Struct({ type: Schema.Literal("reasoning-delta"), reasoningId: Schema.String, text: Schema.String })

export const ReasoningEndEvent = Schema.Struct({ type: Schema.Literal("reasoning-end"), reasoningId: Schema.String, durationMs: Schema.Number })

export const StepStartEvent = Schema.Struct({ type: Schema.Literal("step-start"), stepIndex: Schema.Number })

export const StepFinishEvent = Schema.Struct({ type: Schema.Literal("step-finish"), stepIndex: Schema.Number })

export const ToolInputStartEvent = Schema.Struct({ type: Schema.Literal("tool-input-start"), toolCallId: Schema.String, capability: Schema.String })

export const ToolInputDeltaEvent = Schema.Struct({ type: Schema.Literal("tool-input-delta"), toolCallId: Schema.String, delta: Schema.String })

/** A tool call that needs no approval starts: its risk is always low. */
export const ToolCallStartEvent = Schema.Struct({
  type: Schema.Literal("tool-call-start"),
  toolCallId: Schema.String,
  capability: Schema.String,
  inputPreview: Schema.String,
  riskLevel: Schema.Literal("low")
})

export const ToolCallEndEvent = Schema.Struct({
  type: Schema.Literal("tool-call-end"),
  toolCallId: Schema.String,
  status: Schema.Literal("completed", "failed"),
  durationMs: Schema.Number,
  output: Schema.optional(Schema.Unknown),
  errorReason: Schema.optional(Schema.String)
})

export const ApprovalRequiredEvent = Schema.Struct({
  type: Schema.Literal("approval-required"),
  approvalId: Schema.String,
  capability: Schema.String,
  inputPreview: Schema.String,
  riskLevel: RiskLevel,
  expiresAt: Schema.String
})

export const QuestionEvent = Schema.Struct({
  type: Schema.Literal("question"),
  id: Schema.String,
  question: Schema.String,
  options: Schema.Array(Schema.String)
})

export const QuestionEndEvent = Schema.Struct({
  type: Schema.Literal("question-end"),
  id: Schema.String,
  status: Schema.Literal("answered", "closed"),
  reason: Schema.optional(Schema.Literal("timeout", "ended"))
})

export const UsageEvent = Schema.Struct({ type: Schema.Literal("usage"), usage: Usage })

export const ErrorEvent = Schema.Struct({
  type: Schema.Literal("error"),
  message: Schema.String,
  code: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String)
})

/** One `data:` line of the chat stream. */
export const ChatEvent = Schema.Union(
  RunEvent,
  TextEvent,
  ReasoningStartEvent,
  ReasoningDeltaEvent,
  ReasoningEndEvent,
  StepStartEvent,
  StepFinishEvent,
  ToolInputStartEvent,
  ToolInputDeltaEvent,
  ToolCallStartEvent,
  ToolCallEndEvent,
  ApprovalRequiredEvent,
  QuestionEvent,
  QuestionEndEvent,
  UsageEvent,
  ErrorEvent
).annotations(asBuilt)
export type ChatEvent = typeof ChatEvent.Type

// --- the turn result (spec 2.3): the `done` event's data, and the ask route's answer ---

export const ToolCallOutcome = Schema.Literal("completed", "failed", "denied", "cancelled", "parked")
export type ToolCallOutcome = typeof ToolCallOutcome.Type

export const ToolCallRecord = Schema.Struct({
  toolCallId: Schema.String,
  toolName: Schema.String,
  outcome: ToolCallOutcome,
  durationMs: Schema.Int,
  approvalId: Schema.optional(Schema.String)
})
export type ToolCallRecord = typeof ToolCallRecord.Type

export const ParkedCard = Schema.Struct({
  approvalId: Schema.String,
  capability: Schema.String,
  expiresAt: Schema.String
})
export type ParkedCard = typeof ParkedCard.Type

export const TurnResult = Schema.Struct({
  conversationId: Schema.String,
  conversationPublicId: Schema.String,
  userMessageId: Schema.String,
  assistantMessageId: Schema.String,
  runId: Schema.String,
  reply: Schema.String,
  parkedCards: Schema.Array(ParkedCard),
  toolCalls: Schema.Array(ToolCallRecord),
  stopped: Schema.Boolean
}).annotations(asBuilt)
export type TurnResult = typeof TurnResult.Type

// --- A2A v0.3: the objects the endpoint answers and streams ---

export const TaskState = Schema.Literal("submitted", "working", "input-required", "auth-required", "completed", "canceled", "failed", "rejected", "unknown")
export type TaskState = typeof TaskState.Type

export const TextPart = Schema.Struct({
  kind: Schema.Literal("text"),
  text: Schema.String,
  /** `{ erased: true }` on a text whose person was erased (docs/audit.md): its text is "". */
  metadata: Schema.optional(Schema.Struct({ erased: Schema.Literal(true) }))
})
export type TextPart = typeof TextPart.Type

export const DataPart = Schema.Struct({ kind: Schema.Literal("data"), data: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
export type DataPart = typeof DataPart.Type

/** A file part as the platform returns it: named by URI (a caller's bytes are kept as an attachment). */
export const FilePart = Schema.Struct({
  kind: Schema.Literal("file"),
  file: Schema.Struct({ name: Schema.optional(Schema.String), mimeType: Schema.optional(Schema.String), uri: Schema.String })
})
export type FilePart = typeof FilePart.Type

export const Part = Schema.Union(TextPart, DataPart, FilePart)
export type Part = typeof Part.Type

/** A message of a task: its task and context always filled in. */
export const Message = Schema.Struct({
  kind: Schema.Literal("message"),
  role: Schema.Literal("user", "agent"),
  parts: Schema.Array(Part),
  messageId: Schema.String,
  taskId: Schema.String,
  contextId: Schema.String
})
export type Message = typeof Message.Type

export const TaskStatus = Schema.Struct({
  state: TaskState,
  /** ISO 8601: when the state was entered. */
  timestamp: Schema.String,
  message: Schema.optional(Message)
})
export type TaskStatus = typeof TaskStatus.Type

export const Artifact = Schema.Struct({
  artifactId: Schema.String,
  name: Schema.String,
  parts: Schema.Array(Part)
})
export type Artifact = typeof Artifact.Type

export const Task = Schema.Struct({
  kind: Schema.Literal("task"),
  id: Schema.String,
  contextId: Schema.String,
  status: TaskStatus,
  artifacts: Schema.Array(Artifact),
  history: Schema.Array(Message)
}).annotations(asBuilt)
export type Task = typeof Task.Type

export const TaskStatusUpdateEvent = Schema.Struct({
  kind: Schema.Literal("status-update"),
  taskId: Schema.String,
  contextId: Schema.String,
  status: TaskStatus,
  final: Schema.Boolean
})
export type TaskStatusUpdateEvent = typeof TaskStatusUpdateEvent.Type

export const TaskArtifactUpdateEvent = Schema.Struct({
  kind: Schema.Literal("artifact-update"),
  taskId: Schema.String,
  contextId: Schema.String,
  artifact: Artifact,
  append: Schema.Boolean,
  lastChunk: Schema.Boolean
})
export type TaskArtifactUpdateEvent = typeof TaskArtifactUpdateEvent.Type

/** What `message/stream` and `tasks/resubscribe` carry, one per response: the Task as submitted, then its updates. */
export const TaskStreamEvent = Schema.Union(Task, TaskStatusUpdateEvent, TaskArtifactUpdateEvent).annotations(asBuilt)
export type TaskStreamEvent = typeof TaskStreamEvent.Type

// --- the cluster (cluster.get) ---

export const ClusterNode = Schema.Struct({
  nodeId: Schema.String,
  /** Whether this is the node that answered. */
  self: Schema.Boolean,
  /** The node's build (the package version); null for another node that has not reported lately. */
  version: Schema.NullOr(Schema.String),
  /** Whether it drains (refuses new requests, then stops); null as `version`. */
  draining: Schema.NullOr(Schema.Boolean),
  /** The partitions assigned to it. */
  partitions: Schema.Array(Schema.Number),
  /** Of those, the ones caught up and deciding, as it last reported them; null as `version`. */
  ready: Schema.NullOr(Schema.Array(Schema.Number))
})
export type ClusterNode = typeof ClusterNode.Type

export const PartitionProgress = Schema.Struct({
  partition: Schema.Number,
  /** The next offset the log will write. */
  endOffset: Schema.Number,
  /** The next offset the read models will project (their checkpoint). */
  projected: Schema.Number,
  /** Events written but not yet in the read models. */
  lag: Schema.Number
})
export type PartitionProgress = typeof PartitionProgress.Type

export const ThroughputSample = Schema.Struct({
  at: Schema.String,
  /** Events appended per second, cluster-wide, since the sample before. */
  eventsPerSecond: Schema.Number,
  /** Events written but not yet projected, summed over the partitions. */
  lag: Schema.Number
})
export type ThroughputSample = typeof ThroughputSample.Type

export const ClusterView = Schema.Struct({
  nodes: Schema.Array(ClusterNode),
  partitions: Schema.Array(PartitionProgress),
  /** What the answering node sampled, oldest first. */
  throughput: Schema.Array(ThroughputSample)
})
export type ClusterView = typeof ClusterView.Type
