/**
 * An A2A task is an assistant turn with a durable task around it (spec 3.1). It is recorded
 * submitted and working at once, under the run id its turn was prepared with; the turn's events
 * become the task's later state changes (commands to its actor) and the stream's A2A events:
 * `run` → working (on the stream); text → artifact chunks; a question → input-required (the
 * stream ends, the turn waits for the caller's next message); the turn's end → completed, failed
 * or rejected. A task cancelled meanwhile stays cancelled: its actor ignores the turn's late
 * reports.
 *
 * A caller answered from a task it started hears the actor's own answers; one that follows a task
 * run elsewhere (another request, another process) hears the task actor's events on this node's
 * tail of the log, and the response's text from its run's recorded stream (`run.streamed`).
 */
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Queue } from "effect"
import { randomUUID } from "node:crypto"
import { A2aTaskActor } from "../../actors/a2atask/actor.ts"
import type { MessageContent } from "../../actors/a2atask/events.ts"
import { type A2aTaskCommand, CompleteTask, FailTask, MarkWorking, RejectTask, RequireInput, SubmitTask } from "../../actors/a2atask/protocol.ts"
import type { Task } from "../../actors/a2atask/state.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { follow, LogSignals } from "../../streams/LogSignals.ts"
import { NodeMetrics } from "../../streams/Metrics.ts"
import { noteWrite, type Position } from "../../streams/ReadFence.ts"
import { newPublicId } from "../identity/ApiKeyToken.ts"
import type { TurnFailure, TurnSink } from "../assistant/ChatEvents.ts"
import type { PreparedTurn } from "../assistant/PreparedTurn.ts"
import { executeTurn } from "../assistant/Turn.ts"
import { findRun } from "../assistant/Queries.ts"
import { followRun, foundOnceCaughtUp } from "../assistant/TurnFollow.ts"
import { TurnRegistry, type TurnRegistryService } from "../assistant/TurnRegistry.ts"
import { startInBackground } from "../checkpoint/Background.ts"
import type { Invocation } from "../checkpoint/Capability.ts"
import { followedRelay, takeTurnShare } from "../platform/FairShares.ts"
import type { ChatEvent, Message, Task as A2aTask, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent, TaskStreamEvent, TextPart, TurnResult } from "../platform/Wire.ts"
import type { Started } from "../platform/Relay.ts"
import { FINAL_STATES } from "./Protocol.ts"
import { taskView } from "./Queries.ts"
import { sealedParts } from "./Parts.ts"
import { type PersonSealer, personSealer } from "../audit/PersonalData.ts"

/** A new task the checkpoint let through: its turn, the ids it will be known by, and the caller's message as its history keeps it. */
export interface NewTask {
  readonly taskId: string
  readonly contextId: string
  readonly turn: PreparedTurn
  readonly message: MessageContent
}

/** A report of the turn to its task's actor, and what follows once it is recorded. */
interface Report {
  readonly command: A2aTaskCommand | undefined
  readonly then: (recorded: Task | undefined, position: Position | undefined) => void
  readonly last: boolean
}

export interface TaskListener {
  /** The task is recorded as submitted (before its turn starts): the Task a stream opens with. */
  readonly submitted?: (task: A2aTask) => void
  /** The stream's events after the submitted Task (status and artifact updates), in order. */
  readonly event: (event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent) => void
  /**
   * The task reached a state a caller stops waiting at: terminal, or waiting for input. `task`:
   * as its actor answered the report that settled it; undefined when the cancel settled it.
   */
  readonly settled: (state: TaskState, task: Task | undefined, position?: Position) => void
}

/** The agent's messages are text. */
type AgentMessage = Message & { readonly parts: ReadonlyArray<TextPart> }

/** A message as the task's events keep it: the person's words sealed (actors/personal.ts). */
const sealedMessage = (sealer: PersonSealer, message: AgentMessage): AgentMessage => ({ ...message, parts: sealedParts(sealer, message.parts) })

const agentMessage = (taskId: string, contextId: string, text: string, messageId: string = newPublicId("msg")): AgentMessage => ({
  kind: "message",
  role: "agent",
  parts: [{ kind: "text", text }],
  messageId,
  taskId,
  contextId
})

/** `ctx_<hex>` ↔ `cnv_<hex>`: a context is the conversation its turns share. */
export const conversationOfContext = (contextId: string): string | null =>
  /^ctx_[0-9a-f]{32}$/.test(contextId) ? `cnv_${contextId.slice(4)}` : null
export const contextOfConversation = (publicId: string): string => `ctx_${publicId.slice(4)}`

/**
 * Records the task, submitted and working under its turn's run, before the turn starts; a failure
 * gives the turn's share back (`release`). The task as its submission alone left it: the Task a
 * stream opens with and a non-blocking send answers, `submitted` as a new task begins on the wire.
 */
const submit = (task: NewTask, sealer: PersonSealer, release: () => void) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const { taskId, contextId } = task
    const { invocation } = task.turn
    const submitted = yield* host.send(
      A2aTaskActor,
      taskId,
      new SubmitTask({
        taskId,
        contextId,
        orgId: invocation.orgId!,
        workspaceId: invocation.workspaceId!,
        userId: task.turn.userId,
        apiKeyId: invocation.principal.apiKeyId,
        conversationId: conversationOfContext(contextId)!,
        turnId: task.turn.turnId!,
        runId: task.turn.runId,
        message: { ...task.message, parts: sealedParts(sealer, task.message.parts) }
      }),
      { ...invocation.meta, commandId: `${invocation.meta.commandId}:submit` }
    ).pipe(Effect.onError(() => Effect.sync(release)))
    // a retried submission decides nothing again: its task as it stands now
    const [first] = submitted.events
    return (first?._tag === "a2a.task.submitted" ? A2aTaskActor.evolve(A2aTaskActor.initialState, first) : submitted.state) as Task
  })

/** Makes a report of the turn: its command (none: nothing to record), what follows once it is
 * recorded, and whether it is the turn's last. */
type Reporter = (command: A2aTaskCommand | undefined, then: Report["then"], last?: boolean) => void

/**
 * Starts the task's reporter in the background: reports reach the actor in the order the turn made
 * them, one after the other; the listener hears each after it is recorded, and `then` learns the
 * task as the actor answered the report (undefined when unknown). The turn's end makes the last report.
 */
const reportInOrder = (taskId: string, meta: () => CommandMeta) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const { a2aTasksInFlight } = yield* NodeMetrics
    const reports = yield* Queue.unbounded<Report>()
    const report: Reporter = (command, then, last = false) =>
      void Queue.unsafeOffer(reports, { command, then, last })
    // in flight until its turn's end is reported (or the node stops)
    a2aTasksInFlight.inc()
    yield* startInBackground(
      Effect.gen(function* () {
        for (;;) {
          const { command, then, last } = yield* Queue.take(reports)
          let recorded: Task | undefined
          let position: Position | undefined
          if (command !== undefined) {
            const exit = yield* Effect.exit(host.send(A2aTaskActor, taskId, command, meta()))
            if (Exit.isFailure(exit)) yield* Effect.logError(`a2a: task ${taskId} report failed`, Cause.squash(exit.cause))
            else if (exit.value.state._tag === "Task") {
              recorded = exit.value.state
              position = exit.value.position
            }
          }
          then(recorded, position)
          if (last) return
        }
      }).pipe(Effect.ensuring(Effect.sync(() => a2aTasksInFlight.dec())))
    )
    return report
  })

/** The stream's updates of a task: its status, and the chunks of its one artifact, the response. */
const updatesOf = (taskId: string, contextId: string, now: () => string) => {
  const status = (state: TaskState, final: boolean, message?: Message): TaskStatusUpdateEvent => ({
    kind: "status-update",
    taskId,
    contextId,
    status: { state, timestamp: now(), ...(message === undefined ? {} : { message }) },
    final
  })
  const artifactId = `art_${taskId.slice(4)}`
  const chunk = (text: string, append: boolean, lastChunk: boolean): TaskArtifactUpdateEvent => ({
    kind: "artifact-update",
    taskId,
    contextId,
    artifact: { artifactId, name: "response", parts: [{ kind: "text", text }] },
    append,
    lastChunk
  })
  return { status, artifactId, chunk }
}

/**
 * The response's text as artifact chunks, each sent as the next text comes: the last is held back
 * until then, so the final one can say lastChunk.
 */
const artifactChunks = (chunk: ReturnType<typeof updatesOf>["chunk"], send: (update: TaskArtifactUpdateEvent) => void) => {
  let held: string | undefined
  let sentChunks = 0
  const flush = (lastChunk: boolean) => {
    if (held === undefined) return
    const text = held
    held = undefined
    send(chunk(text, sentChunks++ > 0, lastChunk))
  }
  return {
    text: (text: string) => {
      flush(false)
      held = text
    },
    end: () => flush(true)
  }
}

/** What the turn tells its task: its events and its end, as reports to the task's actor that the
 * listener hears once they are recorded. */
const turnSink = (
  { taskId, contextId }: NewTask,
  sealer: PersonSealer,
  listener: TaskListener,
  report: Reporter,
  { status, artifactId, chunk }: ReturnType<typeof updatesOf>,
  registry: TurnRegistryService,
  canceled: () => boolean
): TurnSink => {
  const chunks = artifactChunks(chunk, (update) => report(undefined, () => listener.event(update)))

  const endCanceled = (recorded?: Task) => {
    listener.event(status("canceled", true))
    listener.settled("canceled", recorded)
  }

  let runId = ""
  return {
    event: (event: ChatEvent) => {
      switch (event.type) {
        case "run":
          runId = event.runId
          // the task works since its submission; the stream says so once the run is recorded
          report(undefined, () => {
            // cancelled before its run was recorded: the cancel found no run to stop, so the turn is
            // stopped here (it runs in this process); its end reports the cancel
            if (canceled()) return void registry.stop(event.runId)
            listener.event(status("working", false))
          })
          break
        case "text":
          chunks.text(event.text)
          break
        case "question": {
          const options = event.options.length === 0 ? "" : ` (${event.options.join(" / ")})`
          const asked = agentMessage(taskId, contextId, `${event.question}${options}`)
          report(new RequireInput({ taskId, questionId: event.id, agentMessage: sealedMessage(sealer, asked) }), (recorded, position) => {
            // cancelled meanwhile: the turn is being stopped, and its end reports the cancel
            if (recorded?.state === "canceled") return
            listener.event(status("input-required", true, asked))
            listener.settled("input-required", recorded, position)
          })
          break
        }
        case "question-end":
          // unanswered, the agent goes on with its assumption: the task is working again
          if (event.status === "closed" && event.reason === "timeout") report(new MarkWorking({ taskId, runId }), () => {})
          break
        default:
          break
      }
    },
    done: (outcome: { readonly result: TurnResult } | { readonly failure: TurnFailure }) => {
      if ("result" in outcome) {
        // a stopped turn is a cancelled task: the cancel recorded it already
        if (outcome.result.stopped) return report(undefined, () => endCanceled(), true)
        chunks.end()
        const reply = agentMessage(taskId, contextId, outcome.result.reply)
        report(
          new CompleteTask({
            taskId,
            agentMessage: sealedMessage(sealer, reply),
            artifact: { artifactId, name: "response", parts: sealedParts(sealer, [{ kind: "text", text: outcome.result.reply }]) }
          }),
          (recorded, position) => {
            // a cancel recorded first wins: the task stays canceled, and the stream says so
            if (recorded?.state === "canceled") return endCanceled(recorded)
            listener.event(status("completed", true, reply))
            listener.settled("completed", recorded, position)
          },
          true
        )
        return
      }
      const { code, message } = outcome.failure
      const rejected = code === "conversation_not_found"
      // a failure's message may quote the person's words: sealed as their messages are (docs/audit.md)
      report(
        rejected
          ? new RejectTask({ taskId, reason: sealer.seal(message) })
          : new FailTask({ taskId, error: { code: code ?? "stream_error", message: sealer.seal(message) } }),
        (recorded, position) => {
          if (recorded?.state === "canceled") return endCanceled(recorded)
          // the same status message tasks/get shows (the actor names it after the task)
          const state = rejected ? "rejected" : "failed"
          listener.event(status(state, true, agentMessage(taskId, contextId, message, `${taskId}-${state}`)))
          listener.settled(state, recorded, position)
        },
        true
      )
    }
  }
}

/**
 * Submits the task, then runs its turn in the background; the listener hears the task's updates.
 * Resolves with the task as submitted (the turn goes on after).
 */
export const startTask = (task: NewTask, listener: TaskListener) =>
  Effect.gen(function* () {
    const registry = yield* TurnRegistry
    const signals = yield* LogSignals
    const { taskId, contextId } = task
    const { invocation, runId } = task.turn
    const clock = yield* Effect.clock
    const now = () => new Date(clock.unsafeCurrentTimeMillis()).toISOString()
    const meta = (): CommandMeta => ({ commandId: randomUUID(), at: now(), actor: invocation.meta.actor })
    // the turn's place in the node (taken as it was prepared) and share of its key and workspace,
    // before anything is recorded; given back as the turn ends, or now if it does not start
    const { place } = task.turn
    const share = yield* takeTurnShare(invocation).pipe(Effect.onError(() => Effect.sync(place.ended)))
    // a cancel before the run is recorded finds no run to stop through the conversation: the turn
    // hears it on this node's tail (listening before the task exists, so it cannot be missed)
    let canceled = false
    const listening = signals.listen(A2aTaskActor, taskId, () => {
      canceled = true
      registry.stop(runId)
    }, ["a2a.task.canceled"])
    const release = () => {
      listening.stop()
      share()
      place.ended()
    }
    // the person's words go to the task's events sealed under their key (docs/audit.md)
    const sealer = yield* personSealer(task.turn.userId).pipe(Effect.onError(() => Effect.sync(release)))
    const submittedTask = yield* submit(task, sealer, release)
    listener.submitted?.(yield* taskView(submittedTask))
    const report = yield* reportInOrder(taskId, meta)
    const sink = turnSink(task, sealer, listener, report, updatesOf(taskId, contextId, now), registry, () => canceled)
    yield* startInBackground(executeTurn(task.turn, sink).pipe(Effect.ensuring(Effect.sync(release))))
    return submittedTask
  })

/** A task's status as a follower hears it. */
const statusOf = (task: Task): TaskStatusUpdateEvent => ({
  kind: "status-update",
  taskId: task.taskId,
  contextId: task.contextId,
  status: { state: task.state, timestamp: task.updatedAt },
  final: FINAL_STATES.has(task.state)
})

/**
 * Follows the task until it settles (terminal, or waiting for input), from its state once the
 * read models hold what this node's tail had delivered, then from its events on the tail;
 * `onChange` runs on its first state and on each new one. Follows a task run elsewhere: another
 * request, another process. The task as it settled; undefined when there is no such task in the
 * workspace.
 */
export const followTask = <E = never, R = never>(workspaceId: string, taskId: string, onChange?: (task: Task) => Effect.Effect<void, E, R>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const followed = yield* follow(A2aTaskActor, taskId)
      if (followed.state._tag !== "Task" || followed.state.workspaceId !== workspaceId) return undefined
      let task: Task = followed.state
      if (onChange !== undefined) yield* onChange(task)
      while (!FINAL_STATES.has(task.state)) {
        const next = A2aTaskActor.evolve(task, (yield* followed.take).event)
        if (next._tag !== "Task") return undefined
        if (next.state !== task.state && onChange !== undefined) yield* onChange(next)
        task = next
      }
      return task
    })
  )

/** How long a follower's final status waits for the rest of its run's chunks to be heard. */
const CHUNKS_BEFORE_END_MS = 10_000

/**
 * The response artifact of a task's run as the run's recorded stream gives it: from the run's
 * start (A2A gives a follower no place to resume from: the first chunk, `append: false`, replaces
 * what it held), then as it is recorded, until the run ends (or the follower stops it: the task
 * waits for input).
 */
const followArtifact = (workspaceId: string, runId: string, chunk: ReturnType<typeof updatesOf>["chunk"], send: (update: TaskArtifactUpdateEvent) => void) =>
  Effect.gen(function* () {
    const run = yield* foundOnceCaughtUp(findRun(workspaceId, runId))
    if (run === undefined) return
    const chunks = artifactChunks(chunk, send)
    yield* followRun(run, workspaceId, 0, {
      event: ({ event }) => {
        if (event.type === "text") chunks.text(event.text)
      },
      done: ({ outcome }) => {
        if ("result" in outcome && !outcome.result.stopped) chunks.end()
      }
    })
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning(`a2a: following run ${runId}'s response failed`, cause)))

/**
 * `tasks/resubscribe` (SubscribeToTask), and `message/stream` answering a task (`answered`): the
 * task's status updates, and the response artifact of each run it works under (followArtifact); a
 * run's chunks go out before the status that settles the task.
 */
const followTaskStream = (workspaceId: string, taskId: string, send: TaskListener["event"], answered: boolean) =>
  Effect.scoped(
    Effect.gen(function* () {
      const clock = yield* Effect.clock
      const now = () => new Date(clock.unsafeCurrentTimeMillis()).toISOString()
      let artifact: { readonly runId: string; readonly fiber: Fiber.RuntimeFiber<void> } | undefined
      let first = true
      yield* followTask(workspaceId, taskId, (task) =>
        Effect.gen(function* () {
          // an answer whose turn completed before this follow began: the caller's message made the
          // response, so its stream carries it, whole
          if (first && answered && task.state === "completed") {
            const text = (yield* taskView(task)).artifacts.flatMap((a) => a.parts.map((part) => (part.kind === "text" ? part.text : ""))).join("")
            if (text !== "") send(updatesOf(taskId, task.contextId, now).chunk(text, false, true))
          }
          first = false
          if (FINAL_STATES.has(task.state) && artifact !== undefined) {
            // a run that ended: its last chunks first; one that waits for input goes on without this follower
            if (task.state !== "input-required") yield* Fiber.await(artifact.fiber).pipe(Effect.timeoutOption(Duration.millis(CHUNKS_BEFORE_END_MS)))
            yield* Fiber.interrupt(artifact.fiber)
          }
          send(statusOf(task))
          if (task.state === "working" && task.runId !== null && artifact?.runId !== task.runId) {
            if (artifact !== undefined) yield* Fiber.interrupt(artifact.fiber)
            artifact = { runId: task.runId, fiber: yield* Effect.forkScoped(followArtifact(workspaceId, task.runId, updatesOf(taskId, task.contextId, now).chunk, send)) }
          }
        })
      )
    })
  )

/**
 * `message/stream` and `tasks/resubscribe`: a new task's Task as submitted and then its updates,
 * or a resumed (or followed) task's status updates, until it settles.
 */
export const streamTask = (invocation: Invocation, accepted: { readonly task: NewTask } | { readonly taskId: string; readonly answered?: boolean }) =>
  Effect.gen(function* () {
    // a place among the node's streams and a stream share of the caller's key and workspace until
    // the last update; refused, a new task's turn gives its place back
    const relay = yield* followedRelay<TaskStreamEvent, void>(invocation).pipe(
      Effect.onError(() => Effect.sync(() => ("task" in accepted ? accepted.task.turn.place.ended() : undefined)))
    )
    if ("task" in accepted) {
      yield* startTask(accepted.task, { submitted: relay.event, event: relay.event, settled: () => relay.done() }).pipe(
        Effect.onError(() => Effect.sync(() => relay.done()))
      )
    } else {
      yield* startInBackground(followTaskStream(invocation.workspaceId!, accepted.taskId, relay.event, accepted.answered === true).pipe(Effect.ensuring(Effect.sync(() => relay.done()))))
    }
    return relay satisfies Started<TaskStreamEvent, void>
  })

/**
 * `message/send`: runs a new task until it settles (or, not blocking, until it is submitted), or
 * waits for a resumed one to settle; then the Task as its actor answered.
 */
export const sendAndSettle = (workspaceId: string, accepted: { readonly task: NewTask } | { readonly taskId: string }, options: { readonly blocking: boolean; readonly historyLength?: number }) =>
  Effect.gen(function* () {
    const taskId = "task" in accepted ? accepted.task.taskId : accepted.taskId
    let task: Task | undefined
    if ("task" in accepted) {
      const settled = yield* Deferred.make<{ readonly task: Task | undefined; readonly position: Position | undefined }>()
      const submitted = yield* startTask(accepted.task, {
        event: () => {},
        settled: (_, recorded, position) => void Deferred.unsafeDone(settled, Exit.succeed({ task: recorded, position }))
      })
      if (options.blocking) {
        const end = yield* Deferred.await(settled)
        // the turn wrote the task's end: the caller's reads through other nodes wait for it too
        if (end.position !== undefined) yield* noteWrite(end.position)
        // settled by a cancel, whose state this request did not hear: the task's own events tell
        task = end.task ?? (yield* followTask(workspaceId, taskId))
      } else {
        task = submitted
      }
    } else {
      task = yield* followTask(workspaceId, taskId)
    }
    if (task === undefined) return yield* Effect.dieMessage(`task ${taskId} is not readable after it was recorded`)
    return yield* taskView(task, options.historyLength)
  })
