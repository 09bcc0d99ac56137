/** Small shared pieces: failures in words, busy states, labelled fields, a copy button. */
import { Component, type ErrorInfo, type ReactNode, useId, useState } from "react"
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

/** Drawn icons, not emoji (a machine without an emoji font shows a box); decorative, so hidden from screen readers. */
const ICON_PATHS = {
  bell: ["M18 8a6 6 0 0 0-12 0c0 7-3 9-3 9h18s-3-2-3-9", "M13.73 21a2 2 0 0 1-3.46 0"],
  tool: ["M14.7 6.3a1 1 0 0 0 0 1.4l1.6 1.6a1 1 0 0 0 1.4 0l3.77-3.77a6 6 0 0 1-7.94 7.94l-6.91 6.91a2.12 2.12 0 0 1-3-3l6.91-6.91a6 6 0 0 1 7.94-7.94l-3.76 3.76z"],
  attach: ["M21.44 11.05l-9.19 9.19a6 6 0 0 1-8.49-8.49l9.19-9.19a4 4 0 0 1 5.66 5.66l-9.2 9.19a2 2 0 0 1-2.83-2.83l8.49-8.48"]
} as const

export const Icon = ({ name, size = 16 }: { name: keyof typeof ICON_PATHS; size?: number }) => (
  <svg aria-hidden="true" focusable="false" width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" className="icon">
    {ICON_PATHS[name].map((d) => (
      <path key={d} d={d} />
    ))}
  </svg>
)

/**
 * A page that throws while rendering is replaced by its failure in words (React would otherwise
 * unmount the whole app and leave a blank page); the frame around it keeps working. `resetKey`
 * (the location) clears it when the person goes elsewhere.
 */
export class PageErrorBoundary extends Component<{ resetKey: string; children: ReactNode }, { error: unknown; key: string }> {
  override state = { error: null as unknown, key: this.props.resetKey }

  static getDerivedStateFromError(error: unknown) {
    return { error }
  }

  static getDerivedStateFromProps(props: { resetKey: string }, state: { error: unknown; key: string }) {
    return props.resetKey === state.key ? null : { error: null, key: props.resetKey }
  }

  override componentDidCatch(error: unknown, info: ErrorInfo) {
    console.error("page failed", error, info.componentStack)
  }

  override render() {
    if (this.state.error === null) return this.props.children
    return (
      <>
        <h1>This page failed</h1>
        <ErrorNote error={this.state.error} />
        <p>
          <button type="button" onClick={() => window.location.reload()}>
            Reload the page
          </button>
        </p>
      </>
    )
  }
}
