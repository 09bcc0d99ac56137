/**
 * The turns running in this process, and what reaches them from outside: a stop requested through
 * any node, an answer given through any node, the run's end. Each arrives as the conversation's
 * event on this node's tail of the log (`LogSignals`): a turn listens before it records what the
 * event could follow (its run, its question), so it misses none.
 *
 * A sweeper closes questions whose deadline passed even when the turn that asked them is gone (its
 * process died): the question timer is a row, read on the node's clock every few seconds, not a
 * setTimeout. It also ends runs still marked running long after any turn could (their process
 * died mid-turn). That sweep is a timer over durable deadlines, not a wait for a signal.
 */
import { Clock, Context, Deferred, Effect, Exit, FiberId, Layer, Schedule } from "effect"
import { Gauge } from "prom-client"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import type { RunFinished } from "../../actors/conversation/events.ts"
import { CloseQuestion, FinishRun } from "../../actors/conversation/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { LogSignals, type Signal } from "../../streams/LogSignals.ts"
import { NodeMetrics } from "../../streams/Metrics.ts"
import { overdueQuestions, staleRunningRuns } from "./Queries.ts"

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

/** How a question the turn waits on ended: answered or closed through any node, past its deadline here, or the turn was aborted. */
export type QuestionOutcome =
  | { readonly status: "answered"; readonly answer: string }
  | { readonly status: "closed" }
  | { readonly status: "timeout" }
  | { readonly status: "aborted" }

export interface QuestionWait {
  readonly outcome: Promise<QuestionOutcome>
  /** Stops listening (the question could not be asked, or its outcome is in). */
  readonly cancel: () => void
}

export interface TurnRegistryService {
  /** False once the process is draining: new turns are refused (`engine_unavailable`). */
  readonly accepting: () => boolean
  /** Refuse new turns from now on; running turns go on (the first step of a graceful shutdown). */
  readonly drain: () => void
  /** Turns running in this process. */
  readonly running: () => number
  /** The node they run on, as their runs record it. */
  readonly node: string
  /** Stops every turn running here, as a node that stops must: each ends `engine_unavailable`. */
  readonly stopAll: () => void
  /** Registers the turn before its run is recorded: a stop requested through any node reaches it from then on. */
  readonly register: (turn: LiveTurn) => () => void
  /** Stops a local turn now; false when it does not run here. */
  readonly stop: (runId: string) => boolean
  /**
   * Listens for the end of a question before it is asked: its answer or close through any node,
   * `timeout` once `timeoutMs` passed, `aborted` when `signal` aborts.
   */
  readonly awaitQuestion: (conversationId: string, questionId: string, options: { readonly timeoutMs: number; readonly signal: AbortSignal }) => QuestionWait
  /**
   * Listens for the run's `run.finished` on this node's tail, for what reacts to it (charging, the
   * summary) after the turn has answered, off its path. Registered before the end is recorded.
   * Shutdown waits for reactions under way.
   */
  readonly afterRun: (conversationId: string, runId: string) => RunEnd
}

export interface RunEnd {
  /** The run's end as the tail delivered it; interrupted by `cancel`. */
  readonly finished: Effect.Effect<Signal<RunFinished>>
  /** The reaction is over: shutdown stops waiting for it. */
  readonly reacted: () => void
  /** The end could not be recorded: nothing will react. */
  readonly cancel: () => void
}

export class TurnRegistry extends Context.Tag("svc/assistant/TurnRegistry")<TurnRegistry, TurnRegistryService>() {}

/** How often overdue questions are closed. */
const SWEEP_MS = 5_000
/** How long shutdown waits for aborted turns to record how they ended, and for reactions to their ends. */
const DRAIN_MS = 5_000
/** No turn runs longer (its own limit, `MAX_TURN_MS` in Turn.ts); a run still running after this lost its process. */
export const ABANDONED_AFTER_MS = 2 * 60 * 60 * 1000

/** How the sweeper ends a run whose process died: not the turn's own end. */
const ABANDONMENT = { code: "engine_aborted", reason: "process_gone", message: "the process running this turn stopped before it ended" } as const

export const isAbandonment = (error: { readonly code: string | null; readonly reason: string | null } | null) =>
  error?.code === ABANDONMENT.code && error.reason === ABANDONMENT.reason

/**
 * Ends the runs still marked running whose process died, unless their turn runs here: those of a
 * node gone for `nodeGoneAfterMs` or restarted since, and any long after a turn could run. Closes
 * the questions whose deadline passed.
 */
const sweep = (host: typeof ActorHost.Service, live: ReadonlyMap<string, LiveTurn>, nodeGoneAfterMs: number) =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const now = new Date(nowMs).toISOString()
    const system = (commandId: string) => ({ commandId, at: now, actor: "system" })
    const since = {
      beforeIso: new Date(nowMs - ABANDONED_AFTER_MS).toISOString(),
      // a run younger than this may be a node's before its first report
      settledIso: new Date(nowMs - nodeGoneAfterMs).toISOString(),
      goneAfterMs: nodeGoneAfterMs
    }
    for (const abandoned of yield* staleRunningRuns(since, 100)) {
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
          error: ABANDONMENT
        }),
        system(`abandon_${abandoned.runId}`)
      )
    }
    for (const overdue of yield* overdueQuestions(now, 100)) {
      yield* host.send(
        ConversationActor,
        overdue.conversationId,
        new CloseQuestion({ questionId: overdue.questionId, reason: "timeout" }),
        system(questionTimeoutCommandId(overdue.questionId))
      )
    }
  })

/** `awaitQuestion` of the service: the question's answer or close from this node's tail, its timeout, or the turn's abort. */
const awaitQuestion = (
  signals: typeof LogSignals.Service,
  conversationId: string,
  questionId: string,
  { timeoutMs, signal }: { readonly timeoutMs: number; readonly signal: AbortSignal }
): QuestionWait => {
  let settle: (outcome: QuestionOutcome) => void = () => {}
  const outcome = new Promise<QuestionOutcome>((resolve) => (settle = resolve))
  const listening = signals.listen(
    ConversationActor,
    conversationId,
    ({ event }) => {
      if (event._tag === "question.answered" && event.questionId === questionId) settle({ status: "answered", answer: event.answer })
      else if (event._tag === "question.closed" && event.questionId === questionId) settle({ status: "closed" })
    },
    ["question.answered", "question.closed"]
  )
  const timer = setTimeout(() => settle({ status: "timeout" }), timeoutMs)
  const onAbort = () => settle({ status: "aborted" })
  signal.addEventListener("abort", onAbort)
  if (signal.aborted) onAbort()
  const cancel = () => {
    listening.stop()
    clearTimeout(timer)
    signal.removeEventListener("abort", onAbort)
  }
  void outcome.then(cancel)
  return { outcome, cancel }
}

/** `nodeGoneAfterMs`: how long a node's report (src/cluster/Presence.ts) may be missing before
 * the runs it ran are ended. */
export const layer = (nodeGoneAfterMs: number) => Layer.scoped(
  TurnRegistry,
  Effect.gen(function* () {
    const host = yield* ActorHost
    const signals = yield* LogSignals
    const live = new Map<string, LiveTurn>()
    new Gauge({
      name: "svc_turns_in_flight",
      help: "Assistant turns running on this node (chat and A2A)",
      registers: [(yield* NodeMetrics).registry],
      collect() {
        this.set(live.size)
      }
    })
    // runs whose end is awaited or reacted to
    const reacting = new Set<string>()
    // completed when the last live turn and reaction are done, while shutting down
    let idle: Deferred.Deferred<void> | undefined
    let accepting = true

    const checkIdle = () => {
      if (idle !== undefined && live.size === 0 && reacting.size === 0) Deferred.unsafeDone(idle, Exit.void)
    }

    const stopTurn = (turn: LiveTurn, reason: StopReason) => {
      if (turn.abort.signal.aborted) return
      turn.stopReason = reason
      turn.abort.abort()
    }

    const stopAll = () => {
      accepting = false
      for (const turn of live.values()) stopTurn(turn, "shutdown")
    }

    yield* Effect.forkScoped(
      Effect.repeat(
        sweep(host, live, nodeGoneAfterMs).pipe(Effect.catchAllCause((cause) => Effect.logError("assistant: question sweep failed", cause))),
        Schedule.spaced(SWEEP_MS)
      )
    )

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        stopAll()
        idle = yield* Deferred.make<void>()
        checkIdle()
        // a finalizer is uninterruptible: the wait must be made interruptible for the bound to cut it
        yield* Deferred.await(idle).pipe(Effect.interruptible, Effect.timeoutOption(DRAIN_MS))
      })
    )

    return {
      accepting: () => accepting,
      drain: () => {
        accepting = false
      },
      running: () => live.size,
      node: host.nodeId,
      stopAll,
      register: (turn) => {
        const listening = signals.listen(
          ConversationActor,
          turn.conversationId,
          (signal) => {
            if (signal.event._tag === "run.stop_requested" && signal.event.runId === turn.runId) stopTurn(turn, "cancel")
          },
          ["run.stop_requested"]
        )
        live.set(turn.runId, turn)
        return () => {
          listening.stop()
          live.delete(turn.runId)
          checkIdle()
        }
      },
      stop: (runId) => {
        const turn = live.get(runId)
        if (turn === undefined) return false
        stopTurn(turn, "cancel")
        return true
      },
      awaitQuestion: (conversationId, questionId, options) => awaitQuestion(signals, conversationId, questionId, options),
      afterRun: (conversationId, runId) => {
        const finished = Deferred.unsafeMake<Signal<RunFinished>>(FiberId.none)
        const reacted = () => {
          reacting.delete(runId)
          checkIdle()
        }
        const listening = signals.listen(
          ConversationActor,
          conversationId,
          (signal) => {
            if (signal.event._tag !== "run.finished" || signal.event.runId !== runId) return
            listening.stop()
            Deferred.unsafeDone(finished, Exit.succeed(signal as Signal<RunFinished>))
          },
          ["run.finished"]
        )
        reacting.add(runId)
        return {
          finished: Deferred.await(finished),
          reacted,
          cancel: () => {
            listening.stop()
            Deferred.unsafeDone(finished, Exit.interrupt(FiberId.none))
            reacted()
          }
        }
      }
    } satisfies TurnRegistryService
  })
)

/** One id for a question's close on its deadline, whoever sends it (the turn or the sweeper): the actor closes it once. */
export const questionTimeoutCommandId = (questionId: string) => `timeout_${questionId}`
