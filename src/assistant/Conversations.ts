/**
 * What a chat page reads back after a reload (spec 2.2 to 2.4): a person's conversations and one
 * conversation's thread, their runs and one run's transcript, a model's short summary of a run,
 * and the workspace's approvals still waiting. A person reads only their own conversations and
 * runs (for a key: its creator's); another person's are as absent as ones that never were. An
 * organization key holds no workspace role, so it reads none of them (spec 5 rule 3).
 */
import { Effect, Schema } from "effect"
import { ConversationNotFound } from "../../actors/conversation/errors.ts"
import { Usage } from "../../actors/conversation/events.ts"
import { chargeTurn, checkAssistantSpend, checkModelKeyLimit } from "../billing/TurnCharges.ts"
import { findConversation } from "./ChatQueries.ts"
import { resolveTurnModel } from "./models/resolve.ts"
import { writeRunSummary } from "./Summary.ts"
import {
  ConversationEntry,
  conversationsOf,
  pendingApprovalsOf,
  runsOf,
  PendingApproval,
  readThread,
  readTranscript,
  RunEntry,
  RunStatus,
  Thread,
  Transcript
} from "./Transcripts.ts"
import { type AnyCapability, defineCapability, type Invocation } from "../checkpoint/Capability.ts"
import { members, runNotFound } from "./Assistant.ts"
import { ownRecord, personOf } from "../checkpoint/Person.ts"
import { decodeCursor, DEFAULT_PAGE_LIMIT, PageLimit, TimeIdCursor } from "../platform/Paging.ts"

const reads = {
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

/** The caller's person's conversation; another person's is not found, as one that never was. */
const ownConversation = (invocation: Invocation, ref: string) =>
  ownRecord(invocation, findConversation(invocation.workspaceId!, ref), () => new ConversationNotFound({ conversationId: ref }))

/** The caller's person's run, with its transcript; another person's is not found. */
const ownRun = (invocation: Invocation, runId: string) =>
  ownRecord(invocation, readTranscript(invocation.workspaceId!, runId, new Date(invocation.at)), () => runNotFound(runId))

export const listConversations = defineCapability({
  ...reads,
  name: "conversation.list",
  description: "List your conversations with the assistant in this workspace, the latest message first: each one's title (its first message), message count and times.",
  input: Schema.Struct(page),
  output: Schema.Struct({ conversations: Schema.Array(ConversationEntry), nextCursor: Schema.NullOr(Schema.String) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const userId = yield* personOf(invocation)
      const after = yield* decodeCursor(TimeIdCursor, input.cursor)
      return yield* conversationsOf(invocation.workspaceId!, userId, after, input.limit ?? DEFAULT_PAGE_LIMIT)
    })
})

export const getConversation = defineCapability({
  ...reads,
  name: "conversation.get",
  description:
    "One of your conversations (cnv_ id or UUID) as its chat page shows it: every message in order, and each run with its status and turn result (tool calls, parked approvals and what became of them, stopped, error).",
  input: Schema.Struct({ conversationId: Id }),
  output: Thread,
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const conversation = yield* ownConversation(invocation, input.conversationId)
      const thread = yield* readThread(conversation.conversationId, new Date(invocation.at))
      // the conversation was found a moment ago, and nothing deletes one
      if (thread === undefined) return yield* Effect.dieMessage(`conversation ${conversation.conversationId} has no row`)
      return thread
    })
})

export const listRuns = defineCapability({
  ...reads,
  name: "run.list",
  description: "List your runs (assistant turns and approved calls) in this workspace, the latest first; optionally of one of your conversations (cnv_ id or UUID) or in one status.",
  input: Schema.Struct({ conversationId: Schema.optional(Id), status: Schema.optional(RunStatus), ...page }),
  output: Schema.Struct({ runs: Schema.Array(RunEntry), nextCursor: Schema.NullOr(Schema.String) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const userId = yield* personOf(invocation)
      const after = yield* decodeCursor(TimeIdCursor, input.cursor)
      const conversation = input.conversationId === undefined ? undefined : yield* ownConversation(invocation, input.conversationId)
      return yield* runsOf(
        invocation.workspaceId!,
        userId,
        { conversationId: conversation?.conversationId, status: input.status },
        after,
        input.limit ?? DEFAULT_PAGE_LIMIT
      )
    })
})

export const getRun = defineCapability({
  ...reads,
  name: "run.get",
  description:
    "One of your runs (tse_) with its transcript: your message and the reply, tool calls and how each ended, its approvals and questions, usage, error, model, tier, effort and timings.",
  input: Schema.Struct({ runId: Id }),
  output: Transcript,
  handler: (invocation, input) => ownRun(invocation, input.runId)
})

/** The model did not write a run's summary (502 `run_summary_failed`). */
export class RunSummaryFailed extends Schema.TaggedError<RunSummaryFailed>()("RunSummaryFailed", { message: Schema.String }) {}

export const summarizeRun = defineCapability({
  ...reads,
  name: "run.summarize",
  description:
    "A short summary of one of your runs (tse_), written by the organization's default model from its transcript. The model's tokens count as assistant spend, as a turn's do.",
  // it spends: metered against the credits, the caps and the workspace's budget
  mutating: true,
  changesAccess: false,
  input: Schema.Struct({ runId: Id }),
  output: Schema.Struct({ runId: Schema.String, summary: Schema.String, model: Schema.String, usage: Usage }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const run = yield* ownRun(invocation, input.runId)
      const orgId = invocation.orgId!
      const workspaceId = invocation.workspaceId!
      const now = new Date(invocation.at)
      const model = yield* resolveTurnModel({ orgId })
      yield* checkAssistantSpend({ orgId, workspaceId, paidBy: model.paidBy, now })
      if (model.paidBy === "organization") yield* checkModelKeyLimit({ orgId, now })
      const summary = yield* writeRunSummary(model, run).pipe(
        Effect.mapError((e) => new RunSummaryFailed({ message: `the model ${model.modelId} wrote no summary: ${e instanceof Error ? e.message : String(e)}` }))
      )
      // charged once under its own id (the same again when the call is retried with its Idempotency-Key)
      if (summary.usage.totalTokens > 0) {
        yield* chargeTurn({ orgId, workspaceId, runId: invocation.newId("sum"), usage: summary.usage, paidBy: model.paidBy, meta: invocation.meta })
      }
      return { runId: run.runId, summary: summary.text, model: model.modelId, usage: summary.usage }
    })
})

export const listApprovals = defineCapability({
  ...reads,
  name: "approval.list",
  description:
    "The workspace's tool calls parked for approval and still waiting (not answered, not expired), the latest first; canAnswer marks those you may answer (only the person who asked may); another person's call says who asked and what, not its conversation or run.",
  input: Schema.Struct(page),
  output: Schema.Struct({ approvals: Schema.Array(PendingApproval), nextCursor: Schema.NullOr(Schema.String) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const userId = yield* personOf(invocation)
      const after = yield* decodeCursor(TimeIdCursor, input.cursor)
      return yield* pendingApprovalsOf(invocation.workspaceId!, userId, new Date(invocation.at), after, input.limit ?? DEFAULT_PAGE_LIMIT)
    })
})

export const conversationCapabilities: ReadonlyArray<AnyCapability> = [
  listConversations,
  getConversation,
  listRuns,
  getRun,
  summarizeRun,
  listApprovals
]
