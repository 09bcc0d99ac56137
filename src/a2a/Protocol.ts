/**
 * A2A v0.3 over JSON-RPC 2.0 (spec 2.7, 4.3, 7.4): the method names, the params the methods take
 * and the error codes. What the methods answer and streams carry is in src/platform/Wire.ts.
 */
import { Schema } from "effect"
import { StorableJsonObject, StorableString } from "../platform/StorableText.ts"
import type { TaskState } from "../platform/Wire.ts"

export const JSONRPC_PARSE_ERROR = -32700
export const JSONRPC_INVALID_REQUEST = -32600
export const JSONRPC_METHOD_NOT_FOUND = -32601
export const JSONRPC_INVALID_PARAMS = -32602
export const JSONRPC_INTERNAL_ERROR = -32603
/** Implementation-defined server error: a refusal by the checkpoint (402, 403, 409, 429...), with its HTTP meaning in `data`. */
export const JSONRPC_REFUSED = -32000
export const A2A_TASK_NOT_FOUND = -32001
export const A2A_TASK_NOT_CANCELABLE = -32002
export const A2A_PUSH_NOT_SUPPORTED = -32003
export const A2A_UNSUPPORTED_OPERATION = -32004
export const A2A_CONTENT_TYPE_NOT_SUPPORTED = -32005
/** A2A 1.0's VersionNotSupportedError: the request's `A2A-Version` names a version this endpoint does not serve. */
export const A2A_VERSION_NOT_SUPPORTED = -32009

/** The A2A versions `/a2a` serves, as `A2A-Version` names them (Major.Minor; a patch is allowed and ignored). */
export const SERVED_A2A_VERSIONS = ["0.3", "1.0"] as const
export type A2aVersion = (typeof SERVED_A2A_VERSIONS)[number]

/** The served version a request's `A2A-Version` names; absent (or empty) is 0.3; undefined: not served. */
export const versionOf = (header: string | undefined): A2aVersion | undefined => {
  const version = header?.trim() ?? ""
  if (version === "") return "0.3"
  return SERVED_A2A_VERSIONS.find((served) => version === served || version.startsWith(`${served}.`))
}

/**
 * The refusal of a request whose `A2A-Version` this endpoint does not serve, or undefined. A request
 * without the header is a 0.3 request, as A2A 1.0's negotiation says of a client that sends none.
 */
export const unservedVersion = (header: string | undefined): { readonly code: number; readonly message: string; readonly data: object } | undefined => {
  if (versionOf(header) !== undefined) return undefined
  const version = header?.trim() ?? ""
  return {
    code: A2A_VERSION_NOT_SUPPORTED,
    message: `A2A version '${version}' is not supported; this endpoint serves ${SERVED_A2A_VERSIONS.join(", ")}`,
    data: { supportedVersions: [...SERVED_A2A_VERSIONS] }
  }
}

export const A2A_METHODS = [
  "message/send",
  "message/stream",
  "tasks/get",
  "tasks/cancel",
  "tasks/resubscribe",
  "agent/getAuthenticatedExtendedCard"
] as const

/** Every `tasks/pushNotificationConfig/*` method answers -32003: the card says pushNotifications false. */
export const PUSH_CONFIG_PREFIX = "tasks/pushNotificationConfig/"

export const STREAMING_METHODS: ReadonlySet<string> = new Set(["message/stream", "tasks/resubscribe"])

const Metadata = Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

export const TextPart = Schema.Struct({ kind: Schema.Literal("text"), text: StorableString, metadata: Metadata })

export const DataPart = Schema.Struct({ kind: Schema.Literal("data"), data: StorableJsonObject, metadata: Metadata })

const FileFacts = {
  name: Schema.optional(StorableString.pipe(Schema.maxLength(255))),
  mimeType: Schema.optional(StorableString.pipe(Schema.maxLength(255)))
}

/** A file part: its bytes (base64, decoded here) or a URI, never both (A2A's FileWithBytes, FileWithUri). */
export const FilePart = Schema.Struct({
  kind: Schema.Literal("file"),
  file: Schema.Union(
    Schema.Struct({ ...FileFacts, bytes: Schema.Uint8ArrayFromBase64 }),
    Schema.Struct({ ...FileFacts, uri: StorableString })
  ),
  metadata: Metadata
})

export const IncomingPart = Schema.Union(TextPart, DataPart, FilePart)
export type IncomingPart = typeof IncomingPart.Type

export const IncomingMessage = Schema.Struct({
  kind: Schema.optional(Schema.Literal("message")),
  role: Schema.Literal("user"),
  parts: Schema.Array(IncomingPart).pipe(Schema.minItems(1)),
  messageId: StorableString.pipe(Schema.minLength(1), Schema.maxLength(200)),
  taskId: Schema.optional(Schema.String),
  contextId: Schema.optional(Schema.String),
  referenceTaskIds: Schema.optional(Schema.Array(Schema.String)),
  extensions: Schema.optional(Schema.Array(Schema.String)),
  metadata: Metadata
})
export type IncomingMessage = typeof IncomingMessage.Type

export const MessageSendParams = Schema.Struct({
  message: IncomingMessage,
  configuration: Schema.optional(
    Schema.Struct({
      acceptedOutputModes: Schema.optional(Schema.Array(Schema.String)),
      historyLength: Schema.optional(Schema.NonNegativeInt),
      blocking: Schema.optional(Schema.Boolean),
      pushNotificationConfig: Schema.optional(Schema.Unknown)
    })
  ),
  metadata: Metadata
})
export type MessageSendParams = typeof MessageSendParams.Type

export const TaskQueryParams = Schema.Struct({
  id: Schema.String,
  historyLength: Schema.optional(Schema.NonNegativeInt),
  metadata: Metadata
})

export const TaskIdParams = Schema.Struct({ id: Schema.String, metadata: Metadata })

export const EmptyParams = Schema.Struct({ metadata: Metadata })

/** States after which a stream ends: terminal, or waiting for the caller. */
export const FINAL_STATES: ReadonlySet<TaskState> = new Set(["completed", "canceled", "failed", "rejected", "input-required", "auth-required"])
