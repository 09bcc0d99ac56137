/**
 * The pieces of a turn that the streaming message, the history and the approvals inbox all show:
 * a tool call and its outcome, an approval with Approve and Deny, the agent's question with its
 * countdown, a failure with Retry, and the tokens a turn used.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, memo, type ReactNode, useEffect, useId, useState } from "react"
import { ApiError, invoke, type Place } from "../../api.ts"
import { ErrorNote, Icon, Time } from "../../ui.tsx"
import { APPROVALS_KEY, type Execution, RUN_KEY, type ThreadRun } from "./data.ts"
import type { Usage } from "../../../../src/platform/Wire.ts"
import type { Part } from "./turn.ts"

// ---------------------------------------------------------------------------------------------
// tool calls

export type ToolState = "running" | "completed" | "failed" | "denied" | "cancelled"

const TOOL_STATE_WORDS: Readonly<Record<ToolState, string>> = {
  running: "running…",
  completed: "done",
  failed: "failed",
  denied: "denied",
  cancelled: "cancelled"
}

const PREVIEW_CHARS = 2000

/** What a call answered, as JSON: its first characters, and the rest behind Show all. */
const CallOutput = ({ value }: { value: unknown }) => {
  const [whole, setWhole] = useState(false)
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2) ?? String(value)
  const long = text.length > PREVIEW_CHARS
  return (
    <>
      <pre>{long && !whole ? `${text.slice(0, PREVIEW_CHARS)}…` : text}</pre>
      {long && (
        <button type="button" className="link-button" aria-expanded={whole} onClick={() => setWhole(!whole)}>
          {whole ? "Show less" : `Show all (${text.length.toLocaleString()} characters)`}
        </button>
      )}
    </>
  )
}

export const ToolCall = memo(
  ({ capability, state, inputPreview, durationMs, output, errorReason }: {
    capability: string
    state: ToolState
    inputPreview?: string
    durationMs?: number
    output?: unknown
    errorReason?: string
  }) => (
    <div className={`tool-call tool-${state}`} role="group" aria-label={`Tool call ${capability}`}>
      <div className="row">
        <Icon name="tool" />
        <code>{capability}</code>
        <span className="badge-pill">{TOOL_STATE_WORDS[state]}</span>
        {durationMs !== undefined && <small className="muted">{Math.round(durationMs)} ms</small>}
      </div>
      {inputPreview !== undefined && inputPreview !== "" && <code className="tool-input">{inputPreview}</code>}
      {errorReason !== undefined && <p className="tool-error">{state === "denied" ? "Refused" : "Failed"}: {errorReason}</p>}
      {output !== undefined && (
        <details>
          <summary>Result</summary>
          <CallOutput value={output} />
        </details>
      )}
    </div>
  )
)

// ---------------------------------------------------------------------------------------------
// approvals

const EXECUTION_WORDS: Readonly<Record<Execution["status"], string>> = {
  succeeded: "Approved: the call ran and succeeded.",
  dispatched: "Approved: the call was sent off.",
  queued: "Approved: the call is queued to run.",
  indeterminate: "Approved: the call ran, but whether it succeeded is not known.",
  failed: "Approved, but the call failed",
  denied: "Denied: the call did not run.",
  expired: "This approval expired before it was answered."
}

export const executionWords = (execution: Execution) =>
  execution.status === "failed" ? `${EXECUTION_WORDS.failed}${execution.reason === undefined ? "." : `: ${execution.reason}.`}` : EXECUTION_WORDS[execution.status]

export interface ApprovalView {
  readonly approvalId: string
  readonly capability: string
  readonly inputPreview: string
  readonly expiresAt: string
}

/** Invalidates every read an answered approval changes: threads and the inbox. */
const useAfterResolve = (place: Place) => {
  const client = useQueryClient()
  return () =>
    Promise.all([
      client.invalidateQueries({ queryKey: ["chat", place.org, place.ws, "thread"] }),
      client.invalidateQueries({ queryKey: APPROVALS_KEY(place) })
    ])
}

const EXPIRED_REFUSAL = "This approval has expired or was already answered."

const isExpiredRefusal = (error: unknown) => error instanceof ApiError && error.status === 409 && error.reason === "approval_expired"

/**
 * A parked call. `outcome` is what became of it already (from the history), and `output` what the
 * approved call answered; while it is pending, `readOnly` names why this person may not answer it,
 * else Approve and Deny answer it, and an approved call's answer is read from its run.
 */
export const ApprovalCard = ({ place, approval, outcome, output, readOnly, onAnswered, children }: {
  place: Place
  approval: ApprovalView
  outcome?: string
  output?: unknown
  readOnly?: string
  /** Told what became of the call once this person answered it. */
  onAnswered?: (words: string) => void
  children?: ReactNode
}) => {
  const afterResolve = useAfterResolve(place)
  const resolve = useMutation({
    mutationFn: (decision: "approved" | "denied") =>
      invoke<{ execution: Execution }>(place, "agent.approvals.resolve", { approvalId: approval.approvalId, decision }),
    onSuccess: (answer) => onAnswered?.(executionWords(answer.execution)),
    onError: (error) => {
      if (isExpiredRefusal(error)) onAnswered?.(EXPIRED_REFUSAL)
    },
    onSettled: afterResolve
  })
  const ranRunId = resolve.data?.execution.status === "succeeded" ? resolve.data.execution.runId : undefined
  const ran = useQuery({
    queryKey: RUN_KEY(place, ranRunId ?? ""),
    queryFn: () => invoke<Pick<ThreadRun, "output">>(place, "run.get", { runId: ranRunId }),
    enabled: ranRunId !== undefined
  })
  const headingId = useId()
  const answered = resolve.data === undefined ? outcome : executionWords(resolve.data.execution)
  const answer = resolve.data === undefined ? output : ran.data?.output
  const expired = isExpiredRefusal(resolve.error)
  return (
    <section className="card approval" aria-labelledby={headingId}>
      <h3 id={headingId} className="approval-title">
        Approval requested: <code>{approval.capability}</code>
      </h3>
      <code className="tool-input">{approval.inputPreview}</code>
      {children}
      <p className="muted small">
        Expires <Time at={approval.expiresAt} />
      </p>
      {answered !== undefined ? (
        <p role="status" className={resolve.data?.execution.status === "failed" ? "error-note" : "ok-note"}>
          {answered}
        </p>
      ) : expired ? (
        <p role="alert" className="warn-note">
          {EXPIRED_REFUSAL}
        </p>
      ) : readOnly !== undefined ? (
        <p className="muted">{readOnly}</p>
      ) : (
        <div className="row">
          <button type="button" className="primary" disabled={resolve.isPending} onClick={() => resolve.mutate("approved")}>
            Approve
          </button>
          <button type="button" className="danger" disabled={resolve.isPending} onClick={() => resolve.mutate("denied")}>
            Deny
          </button>
          {resolve.isPending && (
            <span role="status" className="muted">
              Answering…
            </span>
          )}
        </div>
      )}
      {answer !== undefined && answer !== null && (
        <figure className="call-output">
          <figcaption className="small muted">Result</figcaption>
          <CallOutput value={answer} />
        </figure>
      )}
      {!expired && <ErrorNote error={resolve.error} title="The approval was not answered" />}
      <ErrorNote error={ran.error} title="The approved call's result could not be loaded" />
    </section>
  )
}

// ---------------------------------------------------------------------------------------------
// questions

/** How long the agent waits for an answer (spec 8). */
export const QUESTION_WAIT_MS = 5 * 60_000

const useNow = (active: boolean) => {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    if (!active) return
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [active])
  return now
}

const clock = (ms: number) => {
  const seconds = Math.max(0, Math.ceil(ms / 1000))
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`
}

/** A question of the turn, as its part holds it. */
export type QuestionView = Omit<Extract<Part, { kind: "question" }>, "kind">

const CLOSED_WORDS = {
  timeout: "No answer came within five minutes; the agent went on with its own assumption.",
  ended: "The turn ended before an answer came."
} as const

export const QuestionCard = ({ place, question }: { place: Place; question: QuestionView }) => {
  const [draft, setDraft] = useState("")
  const answer = useMutation({
    mutationFn: (text: string) => invoke<{ found: boolean }>(place, "assistant.question.answer", { questionId: question.id, answer: text })
  })
  const waiting = question.status === "waiting"
  const now = useNow(waiting)
  const headingId = useId()
  const inputId = useId()
  const sent = answer.variables !== undefined && answer.data?.found === true
  const locked = !waiting || answer.isPending || sent
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (draft.trim() !== "") answer.mutate(draft.trim())
  }
  return (
    <section className="card question" aria-labelledby={headingId}>
      <h3 id={headingId} className="question-title">
        The assistant asks: {question.question}
      </h3>
      {waiting && !sent && (
        <p role="timer" className="muted small">
          Closes in {clock(question.askedAt + QUESTION_WAIT_MS - now)}
        </p>
      )}
      {question.options.length > 0 && (
        <div className="row" role="group" aria-label="Answers to choose from">
          {question.options.map((option) => (
            <button key={option} type="button" disabled={locked} onClick={() => answer.mutate(option)} aria-pressed={answer.variables === option}>
              {option}
            </button>
          ))}
        </div>
      )}
      <form className="row question-answer" onSubmit={submit}>
        <label htmlFor={inputId}>Your answer</label>
        <input id={inputId} value={draft} maxLength={4000} disabled={locked} onChange={(event) => setDraft(event.target.value)} />
        <button type="submit" disabled={locked || draft.trim() === ""}>
          Answer
        </button>
      </form>
      <div role="status">
        {question.status === "answered" && <p className="ok-note">Answered{answer.variables === undefined ? "" : `: ${answer.variables}`}.</p>}
        {question.status === "closed" && <p className="warn-note">{CLOSED_WORDS[question.reason ?? "ended"]}</p>}
        {waiting && sent && <p className="muted">Answer sent: {answer.variables}</p>}
        {answer.data?.found === false && <p className="warn-note">This question is no longer open.</p>}
      </div>
      <ErrorNote error={answer.error} title="The answer was not sent" />
    </section>
  )
}

// ---------------------------------------------------------------------------------------------
// failures and usage

/** Spec 7.2's codes, in words. */
const FAILURE_WORDS: Readonly<Record<string, string>> = {
  engine_unavailable: "The assistant engine is down.",
  assistant_run_not_recorded: "The turn could not be recorded, so it was not answered.",
  engine_aborted: "The turn was cancelled before it answered.",
  model_call_failed: "The model could not answer.",
  assistant_model_key_limit: "The organization's model key reached its daily spend limit.",
  platform_provider_balance: "The model provider account ran out of balance.",
  codegraph_unavailable: "The code graph service is not available.",
  attachment_refused: "An attached file could not be read.",
  conversation_not_found: "This conversation was not found.",
  rate_limited: "Too many chat requests.",
  network_error: "The server could not be reached.",
  stream_broken: "The connection closed early."
}

export const TurnFailure = ({ failure, onRetry, retrying }: {
  failure: { readonly message: string; readonly code?: string | null; readonly reason?: string | null }
  onRetry?: () => void
  retrying?: boolean
}) => (
  <div role="alert" className="error-note turn-failure">
    <p>
      <strong>{FAILURE_WORDS[failure.code ?? ""] ?? "The turn failed."}</strong> {failure.message}
      {failure.reason !== undefined && failure.reason !== null && <span className="muted"> ({failure.reason})</span>}
    </p>
    {onRetry !== undefined && (
      <button type="button" onClick={onRetry} disabled={retrying}>
        Retry
      </button>
    )}
  </div>
)

export const UsageLine = ({ usage }: { usage: Usage }) => (
  <small className="muted usage">
    {usage.totalTokens.toLocaleString()} tokens ({usage.promptTokens.toLocaleString()} in, {usage.completionTokens.toLocaleString()} out)
  </small>
)
