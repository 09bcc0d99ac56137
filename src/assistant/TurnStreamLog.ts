/**
 * A running turn's chat stream, numbered and recorded on its conversation in a few large chunks
 * (`run.streamed`), so that a client that lost its stream can resume it from any node, during the
 * turn or after it (docs/chat.md, "Resuming a stream"). The turn's events still go to its sink at
 * once; the log gets them in chunks:
 *
 * - a quarter second after the first event not yet recorded;
 * - at once at a boundary the client may act on or wait at: an approval asked for, a question
 *   asked or ended, a tool call's end;
 * - the rest with the turn's end, in the same command (its `run.streamed` just before `run.finished`).
 *
 * Each event's `seq` is its place in the turn's stream (1 for `run`), the SSE `id:` the chat route
 * gives it: that route numbers the events it frames in the same order. Chunks are recorded one at
 * a time, in order; a chunk that could not be recorded is sent again with the next one (a resumed
 * stream skips a `seq` it already gave, so a chunk recorded twice is harmless).
 */
import { Effect, Runtime, Schema } from "effect"
import type { StreamedEvent } from "../../actors/conversation/events.ts"
import { RecordStream } from "../../actors/conversation/protocol.ts"
import { ChatEvent } from "../platform/Wire.ts"
import type { TurnRecorder } from "./TurnRecording.ts"
import type { PersonSealer } from "../audit/PersonalData.ts"
import type { Json } from "../../actors/kernel.ts"

/** How long an event waits, at most, before its chunk is recorded. */
export const CHUNK_MS = 250

/** Events after which the chunk is recorded at once. */
const BOUNDARIES: ReadonlySet<ChatEvent["type"]> = new Set(["approval-required", "question", "question-end", "tool-call-end"])

/** A chat event as the stream's chunks record it (and a replay compares it). */
export const encodeChatEvent = Schema.encodeSync(ChatEvent)

export interface TurnStreamLog {
  /** Numbers the event, hands it on, and queues it for the next chunk. */
  readonly event: (event: ChatEvent) => void
  /** What is queued, once any chunk under way is recorded (or failed, and queued again): the last
   * chunk, which the run's end records. */
  readonly finish: Effect.Effect<ReadonlyArray<StreamedEvent>>
}

export const turnStreamLog = (runId: string, record: TurnRecorder, sealer: PersonSealer, emit: (event: ChatEvent) => void) =>
  Effect.gen(function* () {
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const one = yield* Effect.makeSemaphore(1)
    let seq = 0
    let pending: Array<StreamedEvent> = []
    let timer: ReturnType<typeof setTimeout> | undefined

    const flush = one.withPermits(1)(
      Effect.suspend(() => {
        const [first, ...rest] = pending
        if (first === undefined) return Effect.void
        const chunk: ReadonlyArray<StreamedEvent> = pending
        pending = []
        return record(new RecordStream({ runId, events: [first, ...rest] })).pipe(
          Effect.catchAllCause((cause) =>
            Effect.sync(() => {
              // sent again, in front of what came since, with the next chunk
              pending = [...chunk, ...pending]
            }).pipe(Effect.zipRight(Effect.logWarning(`assistant: recording a chunk of run ${runId}'s stream failed; it goes with the next`, cause)))
          )
        )
      })
    )

    const cancelTimer = () => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    }

    const flushNow = () => {
      cancelTimer()
      runFork(flush)
    }

    const event = (chatEvent: ChatEvent) => {
      seq += 1
      // recorded sealed (actors/personal.ts); the client is sent it as it is
      pending.push({ seq, event: sealer.sealJson(encodeChatEvent(chatEvent) as Json) })
      emit(chatEvent)
      if (BOUNDARIES.has(chatEvent.type)) flushNow()
      else timer ??= setTimeout(flushNow, CHUNK_MS)
    }

    return {
      event,
      finish: Effect.suspend(() => {
        cancelTimer()
        return one.withPermits(1)(
          Effect.sync(() => {
            const last = pending
            pending = []
            return last
          })
        )
      })
    } satisfies TurnStreamLog
  })
