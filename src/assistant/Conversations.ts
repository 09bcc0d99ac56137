/**
 * What a chat page reads back after a reload (spec 2.2 to 2.4): a person's conversations and one
 * conversation's thread, their runs and one run's transcript, a model's short summary of a run,
 * a person's edits of a run (title, tags, pin), and the workspace's approvals still waiting. A person reads only their own conversations and
 * runs (for a key: its creator's); another person's are as absent as ones that never were. An
 * organization key holds no workspace role, so it reads none of them (spec 5 rule 3).
 */
import { Effect, Schema } from "effect"
import { ConversationNotFound } from "../../actors/conversation/errors.ts"
import { chargeTurn, checkAssistantSpend, checkModelKeyLimit } from "../billing/TurnCharges.ts"
import { conversationsOf, findConversation, findRun, pendingApprovalsOf, readThread, readTranscript, runsOf } from "./Queries.ts"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import { UpdateRun } from "../../actors/conversation/protocol.ts"
import { uneditedRun } from "../../actors/conversation/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { readRowsAsOf } from "../../streams/AsOf.ts"
import { Db } from "../../streams/Db.ts"
import { personalOpener } from "../audit/PersonalData.ts"
import { KeyManagement } from "../marketplace/Envelope.ts"
import { momentOf, readAsOf } from "../platform/AsOf.ts"
import { resolveTurnModel } from "./models/resolve.ts"
import { writeRunSummary } from "./Summary.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { runNotFound } from "./Assistant.ts"
import * as Api from "./Api.ts"
import { ownRecord, personOf } from "../checkpoint/Person.ts"
import { decodeCursor, DEFAULT_PAGE_LIMIT, TimeIdCursor } from "../platform/Paging.ts"

/** The caller's person's conversation; another person's is not found, as one that never was. */
const ownConversation = (invocation: Invocation, ref: string) =>
  ownRecord(invocation, findConversation(invocation.workspaceId!, ref), () => new ConversationNotFound({ conversationId: ref }))

/** The caller's person's run, with its transcript; another person's is not found. */
const ownRun = (invocation: Invocation, runId: string) =>
  ownRecord(invocation, readTranscript(invocation.workspaceId!, runId, new Date(invocation.at)), () => runNotFound(runId))

export const listConversations = implement(Api.listConversations, (invocation, input) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const after = yield* decodeCursor(TimeIdCursor, input.cursor)
    return yield* conversationsOf(invocation.workspaceId!, userId, after, input.limit ?? DEFAULT_PAGE_LIMIT)
  })
)

/** The read models a conversation's thread is read from, all projected by its actor alone. */
const THREAD_TABLES = ["conversations", "messages", "runs", "approvals", "run_edits"]

/**
 * The thread as it stood at `asOf`: the conversation's events up to then, projected as the live
 * projection does and read by the live read; approvals expire as of the moment's time (at a log
 * position: now).
 */
const threadAsOf = (invocation: Invocation, conversationId: string, asOf: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const until = yield* momentOf(asOf)
    const { rows } = yield* readAsOf(ConversationActor, conversationId, `conversation ${conversationId}`, asOf, invocation.at, (state) => state._tag === "Active", () => new ConversationNotFound({ conversationId }))
    const now = new Date(until._tag === "time" ? until.at : invocation.at)
    // the person keys are not rebuilt: the sealed words open with the live ones
    const kms = yield* KeyManagement
    const opener = (values: ReadonlyArray<unknown>) => personalOpener(values).pipe(Effect.provideService(Db, db), Effect.provideService(KeyManagement, kms))
    return yield* readRowsAsOf(db, THREAD_TABLES, rows, (scratch) => readThread(conversationId, now, opener).pipe(Effect.provideService(Db, scratch)))
  })

export const getConversation = implement(Api.getConversation, (invocation, input) =>
  Effect.gen(function* () {
    // a conversation is the same person's for good, and nothing deletes one: the live row finds it
    const conversation = yield* ownConversation(invocation, input.conversationId)
    const thread = input.asOf === undefined
      ? yield* readThread(conversation.conversationId, new Date(invocation.at), personalOpener)
      : yield* threadAsOf(invocation, conversation.conversationId, input.asOf)
    // the conversation was found a moment ago, and nothing deletes one
    if (thread === undefined) return yield* Effect.dieMessage(`conversation ${conversation.conversationId} has no row`)
    return thread
  })
)

export const listRuns = implement(Api.listRuns, (invocation, input) =>
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
)

export const getRun = implement(Api.getRun, (invocation, input) => ownRun(invocation, input.runId))

/** The model did not write a run's summary (502 `run_summary_failed`). */
export class RunSummaryFailed extends Schema.TaggedError<RunSummaryFailed>()("RunSummaryFailed", { message: Schema.String }) {}

export const summarizeRun = implement(Api.summarizeRun, (invocation, input) =>
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
)

export const updateRun = implement(Api.updateRun, (invocation, { runId, ...edits }) =>
  Effect.gen(function* () {
    const run = yield* ownRun(invocation, runId)
    // the run was read a moment ago, and nothing deletes one
    const record = yield* Effect.flatMap(findRun(invocation.workspaceId!, runId), (found) => found === undefined ? Effect.dieMessage(`run ${runId} has no row`) : Effect.succeed(found))
    const { state } = yield* (yield* ActorHost).send(ConversationActor, record.conversationId, new UpdateRun({ runId, userId: run.userId, ...edits }), invocation.meta)
    // answered from the actor's state: the run as read, with its edits as they now stand
    return { ...run, ...(state._tag === "Active" ? state.runEdits[runId] ?? uneditedRun : uneditedRun) }
  })
)

export const listApprovals = implement(Api.listApprovals, (invocation, input) =>
  Effect.gen(function* () {
    const userId = yield* personOf(invocation)
    const after = yield* decodeCursor(TimeIdCursor, input.cursor)
    return yield* pendingApprovalsOf(invocation.workspaceId!, userId, new Date(invocation.at), after, input.limit ?? DEFAULT_PAGE_LIMIT)
  })
)

export const conversationCapabilities: ReadonlyArray<AnyCapability> = [
  listConversations,
  getConversation,
  listRuns,
  getRun,
  summarizeRun,
  updateRun,
  listApprovals
]
