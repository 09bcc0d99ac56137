/**
 * The turn being streamed, rendered as its events arrive: text appended, reasoning folded away,
 * tool calls with their outcome, approval and question cards, a failure with Retry, the usage.
 * It subscribes to its own turn, so a text chunk re-renders this message only; each part is
 * memoized, so a chunk re-renders the text it grows and nothing else.
 */
import { memo, useLayoutEffect, useRef, useSyncExternalStore } from "react"
import type { Place } from "../../api.ts"
import { ApprovalCard, QuestionCard, ToolCall, TurnFailure, UsageLine } from "./Cards.tsx"
import { AssistantMessage, UserMessage } from "./History.tsx"
import { MarkdownText } from "./Markdown.tsx"
import { type LiveTurn, type Part, TEXT_PAINTED } from "./turn.ts"

/** Runs `callback` once the frame holding the current DOM has been painted. */
const afterPaint = (callback: () => void) =>
  requestAnimationFrame(() => {
    const channel = new MessageChannel()
    channel.port1.onmessage = () => {
      channel.port1.close()
      callback()
    }
    channel.port2.postMessage(null)
  })

/** How close to the bottom (px, new text included) the page must be for new text to keep it there. */
const STICK_PX = 400

const PartView = memo(({ place, part }: { place: Place; part: Part }) => {
  switch (part.kind) {
    case "text":
      return <MarkdownText text={part.text} />
    case "reasoning":
      return (
        <details className="reasoning">
          <summary>{part.durationMs === null ? "Reasoning…" : `Reasoning (${(part.durationMs / 1000).toFixed(1)} s)`}</summary>
          <p className="message-text muted">{part.text}</p>
        </details>
      )
    case "tool":
      return (
        <ToolCall
          capability={part.capability}
          state={part.status}
          inputPreview={part.inputPreview}
          durationMs={part.durationMs}
          output={part.output}
          errorReason={part.errorReason}
        />
      )
    case "approval":
      return <ApprovalCard place={place} approval={part} />
    case "question":
      return <QuestionCard place={place} question={part} />
  }
})

/** `onRetry` is given to the page's last turn only: a failed turn is retried from there. */
export const LiveMessage = ({ place, turn, onRetry }: { place: Place; turn: LiveTurn; onRetry: ((turn: LiveTurn) => void) | undefined }) => {
  const state = useSyncExternalStore(turn.subscribe, turn.getState)
  const painted = useRef(0)

  // mark each text event painted once the DOM showing it is on screen, and keep the newest text in
  // view for a person reading along at the bottom
  useLayoutEffect(() => {
    const upTo = state.textEvents
    if (upTo <= painted.current) return
    const from = painted.current + 1
    painted.current = upTo
    const root = document.scrollingElement ?? document.documentElement
    if (root.scrollHeight - root.clientHeight - root.scrollTop < STICK_PX) root.scrollTop = root.scrollHeight
    afterPaint(() => {
      for (let n = from; n <= upTo; n++) performance.mark(TEXT_PAINTED, { detail: n })
    })
  }, [state.textEvents])

  const streaming = state.phase === "sending" || state.phase === "streaming"
  const stopped = state.result?.stopped === true
  return (
    <>
      <UserMessage content={state.request.content} files={state.files} />
      <AssistantMessage busy={streaming}>
        {state.parts.map((part, index) => (
          <PartView key={index} place={place} part={part} />
        ))}
        {streaming && (
          <p className="muted small" role="status">
            {state.phase === "sending" ? "Sending…" : "The assistant is writing…"}
          </p>
        )}
        {stopped && <p className="muted stopped">Stopped. The reply so far is kept.</p>}
        {state.phase === "failed" && state.failure !== undefined && <TurnFailure failure={state.failure} onRetry={onRetry === undefined ? undefined : () => onRetry(turn)} />}
        {state.usage !== undefined && <UsageLine usage={state.usage} />}
      </AssistantMessage>
    </>
  )
}
