/**
 * The turns running in this process, and what reaches them from outside: a stop requested through
 * any node, an answer given through any node. The cancel and answer capabilities tell a local turn
 * at once; a turn of another node learns it from the read models, which one poll per process reads
 * for all of its turns. A sweeper closes questions whose deadline passed even when the turn that
 * asked them is gone (its process died): the question timer is a row, not a setTimeout.
 */
import { Clock, Context, Effect, Layer, Schedule } from "effect"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import { CloseQuestion } from "../../actors/conversation/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { overdueQuestions, questionStates, stopRequested } from "./ChatQueries.ts"

/** Why a live turn was aborted: its person cancelled it, or the process is shutting down. */
export type StopReason = "cancel" | "shutdown"

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
  /** False once the process is shutting down: new turns are refused (`engine_unavailable`). */
  readonly accepting: () => boolean
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
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      for (const overdue of yield* overdueQuestions(now, 100)) {
        yield* host.send(
          ConversationActor,
          overdue.conversationId,
          new CloseQuestion({ questionId: overdue.questionId, reason: "timeout" }),
          { commandId: `timeout_${overdue.questionId}`, at: now, actor: "system" }
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
