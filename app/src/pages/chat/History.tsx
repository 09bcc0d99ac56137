/**
 * A conversation's recorded turns (`conversation.get`): each person's message, the tool calls and
 * approvals of its run, the reply, and how the run ended. Memoized: the streaming message beside it
 * re-renders per chunk, the history only when the thread itself changes.
 */
import { memo, type ReactNode } from "react"
import { Icon } from "../../ui.tsx"
import type { Place } from "../../api.ts"
import { ApprovalCard, executionWords, ToolCall, type ToolState, TurnFailure, UsageLine } from "./Cards.tsx"
import { MarkdownText } from "./Markdown.tsx"
import type { ApprovalEntry, Thread, ThreadMessage, ThreadRun } from "./data.ts"

export const UserMessage = ({ content, files }: { content: string; files: ReadonlyArray<string> | number }) => {
  const count = typeof files === "number" ? files : files.length
  return (
    <article className="message user" aria-label="You">
      <p className="message-text">{content}</p>
      {count > 0 && (
        <p className="muted small">
          <Icon name="attach" />{" "}
          {typeof files === "number" ? `${count} attached file${count === 1 ? "" : "s"}` : `Attached: ${files.join(", ")}`}
        </p>
      )}
    </article>
  )
}

/** The assistant's side of one turn: whatever it holds, in order. */
export const AssistantMessage = ({ children, busy }: { children: ReactNode; busy?: boolean }) => (
  <article className="message assistant" aria-label="Assistant" aria-busy={busy}>
    {children}
  </article>
)

const OUTCOME_STATE: Readonly<Record<string, ToolState>> = { completed: "completed", failed: "failed", denied: "denied", cancelled: "cancelled" }

/** What became of a parked call; `ran` is the run that executed it once approved. */
const approvalOutcome = (approval: ApprovalEntry, ran: ThreadRun | undefined): string | undefined => {
  switch (approval.status) {
    case "pending":
      return undefined
    case "approved":
      return ran === undefined || ran.execution === null ? "Approved: the call is running." : executionWords(ran.execution)
    case "denied":
      return executionWords({ status: "denied" })
    case "expired":
      return executionWords({ status: "expired" })
  }
}

const HistoryTurn = ({ place, run, messages, approvalRuns, onRetry }: {
  place: Place
  run: ThreadRun
  messages: ReadonlyArray<ThreadMessage>
  /** The thread's approval runs by id. */
  approvalRuns: ReadonlyMap<string, ThreadRun>
  onRetry: (() => void) | undefined
}) => {
  const user = messages.filter((m) => m.role === "user")
  const replies = messages.filter((m) => m.role === "assistant")
  return (
    <>
      {user.map((message) => (
        <UserMessage key={message.messageId} content={message.content} files={message.attachments.length} />
      ))}
      <AssistantMessage busy={run.status === "running"}>
        {run.toolCalls
          // a parked call shows as its approval card, which says what became of it
          .filter((call) => call.approvalId === undefined)
          .map((call) => (
            <ToolCall key={call.toolCallId} capability={call.toolName} state={OUTCOME_STATE[call.outcome] ?? "completed"} durationMs={call.durationMs} />
          ))}
        {run.approvals.map((approval) => {
          const ran = approval.executionRunId === null ? undefined : approvalRuns.get(approval.executionRunId)
          return <ApprovalCard key={approval.approvalId} place={place} approval={approval} outcome={approvalOutcome(approval, ran)} output={ran?.output} />
        })}
        {replies.map((message) => (
          <MarkdownText key={message.messageId} text={message.content} />
        ))}
        {run.status === "running" && (
          <p className="muted" role="status">
            This turn is still running; its reply appears here when it ends.
          </p>
        )}
        {run.stopped && <p className="muted stopped">Stopped. The reply so far is kept.</p>}
        {run.status === "failed" && run.error !== null && <TurnFailure failure={run.error} onRetry={onRetry} />}
        {run.usage !== null && run.usage.totalTokens > 0 && <UsageLine usage={run.usage} />}
      </AssistantMessage>
    </>
  )
}

/** A recorded turn's request, sent again by Retry: its message, files, tier and effort. */
export interface Retried {
  readonly content: string
  readonly attachments: ReadonlyArray<string>
  readonly tier: string | undefined
  readonly effort: string | undefined
}

/**
 * The thread's turns, but those in `hidden` (the ones this page streamed, which show themselves).
 * `onRetry` resends the last turn's message when that turn failed.
 */
export const History = memo(({ place, thread, hidden, onRetry }: {
  place: Place
  thread: Thread
  hidden: ReadonlySet<string>
  onRetry: ((request: Retried) => void) | undefined
}) => {
  const messagesByRun = new Map<string, Array<ThreadMessage>>()
  for (const message of thread.messages) messagesByRun.set(message.runId, [...(messagesByRun.get(message.runId) ?? []), message])
  const approvalRuns = new Map(thread.runs.filter((run) => run.kind === "approval").map((run) => [run.runId, run] as const))
  const turns = thread.runs.filter((run) => run.kind === "turn")
  const last = turns.at(-1)
  return (
    <>
      {turns
        .filter((run) => !hidden.has(run.runId))
        .map((run) => {
          const messages = messagesByRun.get(run.runId) ?? []
          const asked = messages.find((m) => m.role === "user")
          const retry = run === last && run.status === "failed" && asked !== undefined && onRetry !== undefined
            ? () => onRetry({ content: asked.content, attachments: asked.attachments, tier: run.tier ?? undefined, effort: run.effort ?? undefined })
            : undefined
          return <HistoryTurn key={run.runId} place={place} run={run} messages={messages} approvalRuns={approvalRuns} onRetry={retry} />
        })}
    </>
  )
})
