/**
 * What the chat pages read and write besides the stream: conversations (`conversation.list`,
 * `conversation.get`), a run (`run.get`), pending approvals (`approval.list`), the organization's
 * tiers, and attachment uploads. Shapes as src/assistant/Api.ts declares them.
 */
import { ApiError, type Place, readError } from "../../api.ts"
import type { Usage } from "../../../../src/platform/Wire.ts"

export interface ConversationEntry {
  /** `cnv_`. */
  readonly publicId: string
  readonly title: string
  readonly messageCount: number
  readonly createdAt: string
  readonly lastMessageAt: string
}

export interface ApprovalEntry {
  readonly approvalId: string
  readonly capability: string
  readonly inputPreview: string
  readonly status: "pending" | "approved" | "denied" | "expired"
  readonly requestedBy: string
  readonly expiresAt: string
  readonly resolvedAt: string | null
  readonly note: string | null
  readonly executionRunId: string | null
}

export interface Execution {
  readonly status: "succeeded" | "dispatched" | "failed" | "indeterminate" | "queued" | "denied" | "expired"
  readonly runId?: string
  readonly reason?: string
}

export interface RunError {
  readonly code: string | null
  readonly reason: string | null
  readonly message: string
}

export interface ThreadRun {
  readonly runId: string
  readonly kind: "turn" | "approval"
  readonly status: "running" | "finished" | "failed" | "stopped"
  readonly tier: string | null
  readonly effort: string | null
  readonly usage: Usage | null
  readonly error: RunError | null
  readonly toolCalls: ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string; readonly outcome: string; readonly durationMs: number; readonly approvalId?: string }>
  readonly stopped: boolean
  readonly execution: Execution | null
  /** What an approval run's call answered; null for a turn, a failed call or one still running. */
  readonly output: unknown
  readonly approvals: ReadonlyArray<ApprovalEntry>
}

export interface ThreadMessage {
  readonly messageId: string
  readonly role: "user" | "assistant"
  readonly content: string
  readonly attachments: ReadonlyArray<string>
  readonly runId: string
}

export interface Thread {
  readonly publicId: string
  readonly title: string
  readonly messages: ReadonlyArray<ThreadMessage>
  readonly runs: ReadonlyArray<ThreadRun>
}

export interface PendingApproval {
  readonly approvalId: string
  readonly capability: string
  readonly inputPreview: string
  readonly requestedBy: string
  /** The asking person's name, or their email. */
  readonly requestedByName: string
  /** `cnv_`; null on another person's call (their conversation is theirs alone). */
  readonly conversationId: string | null
  readonly parkedAt: string
  readonly expiresAt: string
  readonly canAnswer: boolean
}

export interface TierList {
  readonly tiers: ReadonlyArray<{ readonly slug: string; readonly model: string | null; readonly archived: boolean }>
  readonly defaultTier: string | null
  readonly operatorTiers: Readonly<Record<string, string>>
  readonly operatorDefaultTier: string
}

export const CONVERSATIONS_KEY = (place: Place) => ["chat", place.org, place.ws, "conversations"] as const
export const THREAD_KEY = (place: Place, conversationId: string) => ["chat", place.org, place.ws, "thread", conversationId] as const
export const RUN_KEY = (place: Place, runId: string) => ["chat", place.org, place.ws, "run", runId] as const
export const APPROVALS_KEY = (place: Place) => ["approvals", place.org, place.ws] as const

/** An uploaded file (`gen_` id) ready to attach. */
export interface Attached {
  readonly fileId: string
  readonly name: string
}

/** Uploads files as multipart/form-data (gateway/upload.ts); a refusal rejects as ApiError. */
export const uploadFiles = async (place: Place, files: ReadonlyArray<File>): Promise<ReadonlyArray<Attached>> => {
  const form = new FormData()
  for (const file of files) form.append("file", file, file.name)
  let response: Response
  try {
    response = await fetch(`/v1/${encodeURIComponent(place.org)}/${encodeURIComponent(place.ws)}/assistant/attachments/upload`, {
      method: "POST",
      credentials: "same-origin",
      headers: { accept: "application/json" },
      body: form
    })
  } catch {
    throw new ApiError(0, "network_error", undefined, "the server could not be reached; check your connection and try again")
  }
  if (!response.ok) throw await readError(response)
  const body = (await response.json()) as { files: ReadonlyArray<{ id: string; name: string }> }
  return body.files.map((file) => ({ fileId: file.id, name: file.name }))
}
