/**
 * The turns running in this process, and what reaches them from outside: a stop requested through
 * any node, an answer given through any node. The cancel and answer capabilities tell a local turn
 * at once; a turn of another node learns it from the read models, which one poll per process reads
 * for all of its turns. A sweeper closes questions whose deadline passed even when the turn that
 * asked them is gone (its process died): the question timer is a row, not a setTimeout. It also
 * ends runs still marked running long after any turn could (their process died mid-turn).
 */
import { Clock, Context, Effect, Layer, Schedule } from "effect"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import { CloseQuestion, FinishRun } from "../../actors/conversation/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { overdueQuestions, questionStates, staleRunningRuns, stopRequested } from "./ChatQueries.ts"

/** Why a live turn was aborted: its person cancelled it, the process is shutting down, or it ran past its limit. */
export type StopReason = "cancel" | "shutdown" | "limit"

export interface LiveTurn {
  readonly runId: string
  readonly conversationId: string
  readonly turnId: string | null
  readonly userId: string
  readonly abort: AbortController
  stopReason: StopReason | undefined
}

export type QuestionOutcome = { readonly status: "answered"; readonly answer: string } | { readonly status: "closed" }

export interface TurnRegistryService {
  /** False once the process is draining: new turns are refused (`engine_unavailable`). */
  readonly accepting: () => boolean
  /** Refuse new turns from now on; running turns go on (the first step of a graceful shutdown). */
  readonly drain: () => void
  readonly register: (turn: LiveTurn) => () => void
  /** Stops a local turn now; false when it does not run here. */
  readonly stop: (runId: string) => boolean
  /** A question the local turn waits on: its outcome once known, here or through another node. */
  readonly watchQuestion: (questionId: string) => void
  readonly unwatchQuestion: (questionId: string) => void
  readonly questionOutcome: (questionId: string) => QuestionOutcome | undefined
  readonly settleQuestion: (questionId: string, outcome: QuestionOutcome) => void
}

export class TurnRegistry extends Context.Tag("svc/assistant/TurnRegistry")<TurnRegistry, TurnRegistryService>() {}

/** How often the process looks for stops and answers given through other nodes. */
const POLL_MS = 250
/** How often overdue questions are closed. */
const SWEEP_MS = 5_000
/** How long shutdown waits for aborted turns to record how they ended. */
const DRAIN_MS = 5_000
/** No turn runs longer (its own limit, `MAX_TURN_MS` in Turn.ts); a run still running after this lost its process. */
export const ABANDONED_AFTER_MS = 2 * 60 * 60 * 1000

export const layer = Layer.scoped(
  TurnRegistry,
  Effect.gen(function* () {
    const host = yield* ActorHost
    const live = new Map<string, LiveTurn>()
    const watched = new Map<string, QuestionOutcome | undefined>()
    let accepting = true

    const stopAll = (runIds: ReadonlySet<string>, reason: StopReason) => {
      for (const runId of runIds) {
        const turn = live.get(runId)
        if (turn !== undefined && !turn.abort.signal.aborted) {
          turn.stopReason = reason
          turn.abort.abort()
        }
      }
    }

    const poll = Effect.gen(function* () {
      if (live.size > 0) stopAll(yield* stopRequested([...live.keys()]), "cancel")
      const waiting = [...watched].filter(([, outcome]) => outcome === undefined).map(([id]) => id)
      if (waiting.length === 0) return
      for (const [questionId, state] of yield* questionStates(waiting)) {
        if (state.status === "answered") watched.set(questionId, { status: "answered", answer: state.answer ?? "" })
        else if (state.status === "closed") watched.set(questionId, { status: "closed" })
      }
    })

    const sweep = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const now = new Date(nowMs).toISOString()
      const system = (commandId: string) => ({ commandId, at: now, actor: "system" })
      for (const abandoned of yield* staleRunningRuns(new Date(nowMs - ABANDONED_AFTER_MS).toISOString(), 100)) {
        if (live.has(abandoned.runId)) continue
        yield* host.send(
          ConversationActor,
          abandoned.conversationId,
          new FinishRun({
            runId: abandoned.runId,
            status: "failed",
            assistantMessageId: null,
            reply: "",
            result: null,
            usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
            error: { code: "engine_aborted", reason: null, message: "the process running this turn stopped before it ended" }
          }),
          system(`abandon_${abandoned.runId}`)
        )
      }
      for (const overdue of yield* overdueQuestions(now, 100)) {
        yield* host.send(
          ConversationActor,
          overdue.conversationId,
          new CloseQuestion({ questionId: overdue.questionId, reason: "timeout" }),
          system(`timeout_${overdue.questionId}`)
        )
      }
    })

    const quietly = <E, R>(what: string, effect: Effect.Effect<void, E, R>) =>
      effect.pipe(Effect.catchAllCause((cause) => Effect.sync(() => console.error(`assistant: ${what} failed`, cause.toString()))))

    yield* Effect.forkScoped(Effect.repeat(quietly("turn poll", poll), Schedule.spaced(POLL_MS)))
    yield* Effect.forkScoped(Effect.repeat(quietly("question sweep", sweep), Schedule.spaced(SWEEP_MS)))

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        accepting = false
        stopAll(new Set(live.keys()), "shutdown")
        const deadline = Date.now() + DRAIN_MS
        while (live.size > 0 && Date.now() < deadline) yield* Effect.sleep(50)
      })
    )

    return {
      accepting: () => accepting,
      drain: () => {
        accepting = false
      },
      register: (turn) => {
        live.set(turn.runId, turn)
        return () => void live.delete(turn.runId)
      },
      stop: (runId) => {
        if (!live.has(runId)) return false
        stopAll(new Set([runId]), "cancel")
        return true
      },
      watchQuestion: (questionId) => void watched.set(questionId, undefined),
      unwatchQuestion: (questionId) => void watched.delete(questionId),
      questionOutcome: (questionId) => watched.get(questionId),
      settleQuestion: (questionId, outcome) => {
        if (watched.has(questionId)) watched.set(questionId, outcome)
      }
    } satisfies TurnRegistryService
  })
)
