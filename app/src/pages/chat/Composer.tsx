/**
 * Writing a message: the text (Enter sends, Shift+Enter starts a new line), the model tier and
 * effort, files attached with the picker or dropped onto the composer (uploaded at once; a refused
 * file is said in words), and Send, or Stop while a turn streams.
 */
import { useQuery } from "@tanstack/react-query"
import { type DragEvent, type FormEvent, type KeyboardEvent, memo, useRef, useState } from "react"
import { ApiError, invoke, type Place } from "../../api.ts"
import { useAccess } from "../../session.tsx"
import { ErrorNote } from "../../ui.tsx"
import { type Attached, type TierList, uploadFiles } from "./data.ts"

/** The message box's id: the page gives focus back to it. */
export const COMPOSER_ID = "chat-message"
const MAX_CONTENT = 32_768
const MAX_ATTACHMENTS = 10
const OPERATOR_TIERS = ["fast", "balanced", "precise"] as const
const EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const

export interface Outgoing {
  readonly content: string
  readonly attachments: ReadonlyArray<Attached>
  readonly tier: string | undefined
  readonly effort: string | undefined
}

/** The tiers a turn may name: the organization's (read by those who may), else the operator's slugs, which always apply (spec 2.2). */
const useTierChoices = (place: Place) => {
  const access = useAccess(place)
  const canList = access.can("org.model_tier.list")
  const tiers = useQuery({
    queryKey: ["model-tiers", place.org],
    queryFn: () => invoke<TierList>(place, "org.model_tier.list"),
    enabled: canList,
    staleTime: 60_000
  })
  const own = (tiers.data?.tiers ?? []).filter((tier) => !tier.archived && tier.model !== null)
  const operator = OPERATOR_TIERS.filter((slug) => !own.some((tier) => tier.slug === slug))
  const defaultTier = tiers.data === undefined ? undefined : tiers.data.defaultTier ?? tiers.data.operatorDefaultTier
  return {
    choices: [...own.map((tier) => ({ slug: tier.slug, label: `${tier.slug} (${tier.model})` })), ...operator.map((slug) => ({ slug, label: slug }))],
    defaultLabel: defaultTier === undefined ? "Default" : `Default (${defaultTier})`
  }
}

/** Upload refusals (src/assistant/Files.ts), in words. */
const REFUSAL_WORDS: Readonly<Record<string, string>> = {
  unsupported_type: "files of this type cannot be attached",
  content_mismatch: "the file's contents are not what its type says",
  file_too_large: "the file is too large",
  empty_file: "the file is empty",
  too_many_files: `at most ${MAX_ATTACHMENTS} files can be attached`,
  no_files: "no file was sent",
  not_multipart: "the upload was not understood"
}

const refusalText = (error: unknown) => {
  if (!(error instanceof ApiError)) return undefined
  const words = error.reason === undefined ? undefined : REFUSAL_WORDS[error.reason]
  return words === undefined ? error.message : `${words}. ${error.message}`
}

export const Composer = memo(({ place, busy, stopping, onSend, onStop }: {
  place: Place
  busy: boolean
  stopping: boolean
  onSend: (outgoing: Outgoing) => void
  onStop: () => void
}) => {
  const [content, setContent] = useState("")
  const [attached, setAttached] = useState<ReadonlyArray<Attached>>([])
  const [uploading, setUploading] = useState(0)
  const [refusal, setRefusal] = useState<unknown>(null)
  const [dragging, setDragging] = useState(false)
  const [tier, setTier] = useState("")
  const [effort, setEffort] = useState("")
  const picker = useRef<HTMLInputElement>(null)
  const form = useRef<HTMLFormElement>(null)
  const tiers = useTierChoices(place)

  const attach = async (files: ReadonlyArray<File>) => {
    if (files.length === 0) return
    setRefusal(null)
    if (attached.length + files.length > MAX_ATTACHMENTS) {
      setRefusal(new ApiError(400, "attachment_refused", "too_many_files", `a message holds at most ${MAX_ATTACHMENTS} files; remove some first`))
      return
    }
    setUploading(files.length)
    try {
      const uploaded = await uploadFiles(place, files)
      setAttached((current) => [...current, ...uploaded])
    } catch (error) {
      setRefusal(error)
    } finally {
      setUploading(0)
    }
  }

  const trimmed = content.trim()
  const canSend = !busy && uploading === 0 && trimmed !== "" && content.length <= MAX_CONTENT
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (!canSend) return
    onSend({ content: trimmed, attachments: attached, tier: tier === "" ? undefined : tier, effort: effort === "" ? undefined : effort })
    setContent("")
    setAttached([])
    setRefusal(null)
  }
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      form.current?.requestSubmit()
    }
  }
  const onDrop = (event: DragEvent) => {
    event.preventDefault()
    setDragging(false)
    void attach([...event.dataTransfer.files])
  }
  const refused = refusalText(refusal)

  return (
    <form
      ref={form}
      className={`composer${dragging ? " dragging" : ""}`}
      onSubmit={submit}
      onDragOver={(event) => {
        if (!event.dataTransfer.types.includes("Files")) return
        event.preventDefault()
        setDragging(true)
      }}
      onDragLeave={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDragging(false)
      }}
      onDrop={onDrop}
      aria-label="Write to the assistant"
    >
      <label htmlFor={COMPOSER_ID} className="visually-hidden">
        Message
      </label>
      <textarea
        id={COMPOSER_ID}
        rows={3}
        value={content}
        placeholder="Ask the assistant… (Enter sends, Shift+Enter for a new line; drop files here to attach them)"
        onChange={(event) => setContent(event.target.value)}
        onKeyDown={onKeyDown}
        aria-describedby={content.length > MAX_CONTENT ? "chat-message-length" : undefined}
      />
      {content.length > MAX_CONTENT && (
        <p id="chat-message-length" className="error-note">
          A message holds at most {MAX_CONTENT.toLocaleString()} characters; this one has {content.length.toLocaleString()}.
        </p>
      )}
      {attached.length > 0 && (
        <ul className="attachments" aria-label="Attached files">
          {attached.map((file) => (
            <li key={file.fileId} className="badge-pill">
              {file.name}{" "}
              <button type="button" className="link-button" aria-label={`Remove ${file.name}`} onClick={() => setAttached((current) => current.filter((f) => f !== file))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {uploading > 0 && (
        <p role="status" className="muted small">
          Uploading {uploading} file{uploading === 1 ? "" : "s"}…
        </p>
      )}
      {refused !== undefined ? (
        <div role="alert" className="error-note">
          <strong>Not attached:</strong> {refused}
        </div>
      ) : (
        <ErrorNote error={refusal} title="Not attached" />
      )}
      <div className="composer-bar row">
        <label className="inline-field">
          <span>Model tier</span>
          <select value={tier} onChange={(event) => setTier(event.target.value)}>
            <option value="">{tiers.defaultLabel}</option>
            {tiers.choices.map((choice) => (
              <option key={choice.slug} value={choice.slug}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          <span>Effort</span>
          <select value={effort} onChange={(event) => setEffort(event.target.value)}>
            <option value="">Default</option>
            {EFFORTS.map((level) => (
              <option key={level} value={level}>
                {level}
              </option>
            ))}
          </select>
        </label>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          onChange={(event) => {
            void attach([...(event.target.files ?? [])])
            event.target.value = ""
          }}
        />
        <button type="button" onClick={() => picker.current?.click()} disabled={uploading > 0 || attached.length >= MAX_ATTACHMENTS}>
          Attach files
        </button>
        <span className="composer-send">
          {busy && (
            <button type="button" className="danger" onClick={onStop} disabled={stopping}>
              {stopping ? "Stopping…" : "Stop"}
            </button>
          )}
          <button type="submit" className="primary" disabled={!canSend}>
            Send
          </button>
        </span>
      </div>
    </form>
  )
})
