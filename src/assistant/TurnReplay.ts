/**
 * A recorded turn re-run under the current code against its tape (docs/audit.md, "Replaying a
 * turn"), with no model and no tool called: the turn's model rounds (src/assistant/Turn.ts) play
 * against the tape's model, tools and clock (src/assistant/TurnTape.ts), and what they produce is
 * compared with what the turn recorded:
 *
 * - the stream's events the rounds emit (steps, text, reasoning, tool input), in order;
 * - each tool call the rounds ask for, by its id, tool and input;
 * - the run's reply, usage and ending status.
 *
 * The answer is "identical", or the first divergence: the step, the tool call and the field.
 */
import { Effect, Stream } from "effect"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import type { ConversationEvent, StreamedEvent } from "../../actors/conversation/events.ts"
import { decodeEvent, keyOf } from "../../actors/kernel.ts"
import { EventLog, readUpTo } from "../../streams/EventLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import type { ChatEvent, Usage } from "../platform/Wire.ts"
import { TurnAborted } from "./AgentTools.ts"
import { TurnStream } from "./StreamParts.ts"
import { conversationOfTurn } from "./Queries.ts"
import { playModelRounds } from "./Turn.ts"
import { encodeChatEvent } from "./TurnStreamLog.ts"
import { personalOpener } from "../audit/PersonalData.ts"
import { Capabilities } from "../checkpoint/Capability.ts"
import { firstDifference, fromTape, OffTape, tapePlayer, type TurnTape, valueAt } from "./TurnTape.ts"

/** A run as the log recorded it: its tape, its stream, and how it ended. */
export interface RecordedTurn {
  readonly runId: string
  readonly tape: TurnTape
  /** The run's stream, in `seq` order. */
  readonly streamed: ReadonlyArray<StreamedEvent>
  readonly status: "finished" | "failed" | "stopped"
  readonly reply: string
  readonly usage: Usage
}

export interface Divergence {
  /** The model step (from 0) the turns part at. */
  readonly step: number
  readonly toolCallId: string | null
  readonly field: string
  readonly recorded: unknown
  readonly replayed: unknown
}

export type ReplayVerdict =
  | { readonly identical: true; readonly events: number; readonly toolCalls: number; readonly modelCalls: number }
  | { readonly identical: false; readonly divergence: Divergence }

/** The events the model rounds emit (the tools' own events and the run's frame are the tools' and the turn's, taped as results). */
const ROUND_EVENTS: ReadonlySet<string> = new Set([
  "step-start",
  "step-finish",
  "text",
  "reasoning-start",
  "reasoning-delta",
  "reasoning-end",
  "tool-input-start",
  "tool-input-delta"
])

const stepsBefore = (events: ReadonlyArray<ChatEvent>): number => Math.max(0, events.filter((e) => e.type === "step-start").length - 1)

/**
 * The recorded turn re-run against its tape under the capabilities registered (`Capabilities`: this
 * build's; what a tool's capability decides of a call, such as parking it for approval, is this
 * build's decision); never fails: what broke the replay is its divergence.
 */
export const replayTurn = (recorded: RecordedTurn): Effect.Effect<ReplayVerdict, never, Capabilities> =>
  Effect.gen(function* () {
    const { tape } = recorded
    const capabilities = new Map(tape.settings.tools.map((tool) => [tool.toolName, tool.capability]))
    const registered = (yield* Capabilities).byName
    const player = tapePlayer(tape, (toolName) => registered.get(capabilities.get(toolName) ?? toolName)?.needsApproval === true)
    const emitted: Array<ChatEvent> = []
    const stream = new TurnStream({
      emit: (event) => {
        if (ROUND_EVENTS.has(event.type)) emitted.push(event)
      },
      now: player.now,
      capabilityOf: (toolName) => capabilities.get(toolName) ?? toolName,
      toolFailed: (_toolCallId, _capability, error) => {
        // code that left the tape ends the replay there
        if (error instanceof OffTape) throw error
        return { code: "internal", reason: undefined, message: "the tool call failed" }
      }
    })
    const ended = yield* Effect.either(
      playModelRounds({
        // the effort the model was sent is in the tape's settings; the tape's model reads no options
        model: { model: player.model, providerOptions: {} },
        goal: tape.settings.goal,
        system: tape.input.system,
        messages: fromTape(tape.input.messages),
        tools: player.tools,
        toolCalls: undefined,
        repairToolCall: undefined,
        stream,
        signal: new AbortController().signal,
        beforeRound: Effect.void
      })
    )
    const recordedEvents = recorded.streamed.map((s) => s.event).filter((e: any) => ROUND_EVENTS.has(e.type))
    const replayedEvents = emitted.map((event) => encodeChatEvent(event))
    const diverged = (divergence: Omit<Divergence, "toolCallId"> & { readonly toolCallId?: string | null }): ReplayVerdict => ({
      identical: false,
      divergence: { toolCallId: null, ...divergence }
    })
    // the first event that differs comes before anything the tape could not answer
    for (let i = 0; i < replayedEvents.length; i++) {
      const differs = firstDifference(recordedEvents[i], replayedEvents[i])
      if (differs === undefined) continue
      const event = replayedEvents[i]
      const toolCallId = "toolCallId" in event && typeof event.toolCallId === "string" ? event.toolCallId : null
      return diverged({ step: stepsBefore(emitted.slice(0, i + 1)), toolCallId, field: `event ${i + 1}${differs === "" ? "" : `.${differs}`}`, recorded: recordedEvents[i], replayed: replayedEvents[i] })
    }
    if (ended._tag === "Left" && ended.left instanceof OffTape) {
      const off = ended.left
      return diverged({ step: stepsBefore(emitted), toolCallId: off.toolCallId, field: off.field, recorded: off.recorded, replayed: off.replayed })
    }
    if (recordedEvents.length > replayedEvents.length) {
      const i = replayedEvents.length
      return diverged({ step: stepsBefore(emitted), field: `event ${i + 1}`, recorded: recordedEvents[i], replayed: undefined })
    }
    const unplayed = player.unplayed()
    if (unplayed.toolCalls.length > 0) {
      const [call] = unplayed.toolCalls
      return diverged({ step: stepsBefore(emitted), toolCallId: call.toolCallId, field: "tool call not made", recorded: { toolName: call.toolName, input: call.input }, replayed: undefined })
    }
    if (unplayed.modelCalls > 0) return diverged({ step: stepsBefore(emitted), field: "model call not made", recorded: unplayed.modelCalls, replayed: 0 })
    const status = ended._tag === "Right" ? "finished" : ended.left instanceof TurnAborted ? "stopped" : "failed"
    const outcome = { status, reply: stream.reply, usage: stream.usage }
    const expected = { status: recorded.status, reply: recorded.reply, usage: recorded.usage }
    const differs = firstDifference(expected, outcome)
    if (differs !== undefined) return diverged({ step: stepsBefore(emitted), field: differs, recorded: valueAt(expected, differs), replayed: valueAt(outcome, differs) })
    return { identical: true, events: replayedEvents.length, toolCalls: tape.toolCalls.length, modelCalls: tape.modelCalls.length }
  })

/** Why a run cannot be replayed. */
export type Unreplayable = { readonly _tag: "RunNotFound" } | { readonly _tag: "RunNotEnded" } | { readonly _tag: "NoTape" } | { readonly _tag: "Erased" }

/**
 * A run as its conversation's events in the log hold it (the tape is in the log alone): found by
 * its id in the runs read model (of `orgId`'s, when named), then read from the start of its
 * conversation's partition.
 */
export const loadRecordedTurn = (runId: string, orgId: string | null = null) =>
  Effect.gen(function* () {
    const conversationId = yield* conversationOfTurn(runId, orgId)
    if (conversationId === undefined) return { _tag: "RunNotFound" } as Unreplayable
    const log = yield* EventLog
    const key = keyOf(ConversationActor, conversationId)
    const partition = partitionFor(key, log.partitions)
    const end = (yield* log.endOffsets([partition])).get(partition) ?? 0
    const streamed: Array<StreamedEvent> = []
    let sealedTape: unknown
    let finished: Extract<ConversationEvent, { _tag: "run.finished" }> | undefined
    yield* readUpTo(log, new Map([[partition, 0]]), new Map([[partition, end]])).pipe(
      Stream.runForEach((read) =>
        Effect.sync(() => {
          for (const record of read.events) {
            if (record.key !== key) continue
            const event = decodeEvent(ConversationActor, record.type, record.payload) as ConversationEvent
            if (!("runId" in event) || event.runId !== runId) continue
            if (event._tag === "run.streamed") streamed.push(...event.events)
            else if (event._tag === "run.taped") sealedTape = event.tape
            else if (event._tag === "run.finished") finished = event
          }
        })
      )
    )
    if (finished === undefined) return { _tag: "RunNotEnded" } as Unreplayable
    if (sealedTape === undefined) return { _tag: "NoTape" } as Unreplayable
    // the tape, the stream and the reply are the person's (actors/personal.ts): opened with their key, and gone with it
    const open = yield* personalOpener([sealedTape, finished.reply, ...streamed.map((s) => s.event)])
    const tape = open.json(sealedTape) as TurnTape | null
    if (tape === null) return { _tag: "Erased" } as Unreplayable
    // a chunk recorded twice (sent again after a failed write) holds the same seqs
    const bySeq = new Map(streamed.map((s) => [s.seq, { ...s, event: open.json(s.event) as StreamedEvent["event"] }]))
    const turn: RecordedTurn = {
      runId,
      tape,
      streamed: [...bySeq.values()].sort((a, b) => a.seq - b.seq),
      status: finished.status,
      reply: open.text(finished.reply) ?? "",
      usage: finished.usage
    }
    return turn
  })

/** One line for a verdict, as the command line prints it. */
export const describeVerdict = (runId: string, verdict: ReplayVerdict): string =>
  verdict.identical
    ? `run ${runId}: identical (${verdict.modelCalls} model calls, ${verdict.toolCalls} tool calls, ${verdict.events} events replayed)`
    : [
        `run ${runId}: DIVERGES at step ${verdict.divergence.step}${verdict.divergence.toolCallId === null ? "" : `, tool call ${verdict.divergence.toolCallId}`}, ${verdict.divergence.field}`,
        `  recorded: ${JSON.stringify(verdict.divergence.recorded) ?? "nothing"}`,
        `  replayed: ${JSON.stringify(verdict.divergence.replayed) ?? "nothing"}`
      ].join("\n")
