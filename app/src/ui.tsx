/** Small shared pieces: failures in words, busy states, labelled fields, a copy button. */
import { type ReactNode, useId, useState } from "react"
import { describeError } from "./api.ts"

/** A failure stated in words, announced to screen readers. */
export const ErrorNote = ({ error, title }: { error: unknown; title?: string }) =>
  error === null || error === undefined ? null : (
    <div role="alert" className="error-note">
      {title !== undefined && <strong>{title}: </strong>}
      {describeError(error)}
    </div>
  )

export const Loading = ({ what }: { what: string }) => (
  <p className="muted" role="status" aria-live="polite">
    Loading {what}…
  </p>
)

/** A labelled input; `hint` is read with it. */
export const Field = ({ label, hint, children }: { label: string; hint?: string; children: (id: string, describedBy: string | undefined) => ReactNode }) => {
  const id = useId()
  const hintId = hint === undefined ? undefined : `${id}-hint`
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id, hintId)}
      {hint !== undefined && (
        <small id={hintId} className="muted">
          {hint}
        </small>
      )}
    </div>
  )
}

export const CopyButton = ({ text, label = "Copy" }: { text: string; label?: string }) => {
  const [copied, setCopied] = useState(false)
  return (
    <button
      type="button"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text)
          setCopied(true)
        } catch {
          setCopied(false)
        }
      }}
    >
      {copied ? "Copied" : label}
    </button>
  )
}

export const PageTitle = ({ children, actions }: { children: ReactNode; actions?: ReactNode }) => (
  <header className="page-title">
    <h1 tabIndex={-1}>{children}</h1>
    {actions !== undefined && <div className="actions">{actions}</div>}
  </header>
)

/** A time in the person's locale, with the exact instant on hover. */
export const Time = ({ at }: { at: string | null | undefined }) =>
  at === null || at === undefined ? <span className="muted">—</span> : <time dateTime={at} title={at}>{new Date(at).toLocaleString()}</time>
