/**
 * A2A 1.0 on the wire, beside 0.3 (docs/a2a.md, "Versions"): the 1.0 methods, each the capability
 * its 0.3 twin is, and the mapping of params, answers and stream events between the two shapes.
 * 1.0 drops the `kind` discriminators: a part is one of text, raw (base64 bytes), url or data; a
 * stream response names its payload (task, statusUpdate, artifactUpdate); states and roles are
 * enum names (`TASK_STATE_WORKING`, `ROLE_USER`); a status update has no `final` (the stream's
 * close ends it). Nothing here decides anything about a task: the capabilities do, in 0.3 terms.
 */
import { Schema } from "effect"
import type { Artifact, Message, Part, Task, TaskState, TaskStreamEvent } from "../platform/Wire.ts"
import { TaskState as TaskStateSchema } from "../platform/Wire.ts"
import {
  A2A_CONTENT_TYPE_NOT_SUPPORTED,
  A2A_PUSH_NOT_SUPPORTED,
  A2A_TASK_NOT_CANCELABLE,
  A2A_TASK_NOT_FOUND,
  A2A_UNSUPPORTED_OPERATION,
  A2A_VERSION_NOT_SUPPORTED,
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_PARAMS,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_METHOD_NOT_FOUND,
  JSONRPC_PARSE_ERROR
} from "./Protocol.ts"

/** The 1.0 task states, as 0.3 names them; `unknown` has no 1.0 name but UNSPECIFIED. */
const STATE_NAMES: Readonly<Record<TaskState, string>> = {
  submitted: "TASK_STATE_SUBMITTED",
  working: "TASK_STATE_WORKING",
  "input-required": "TASK_STATE_INPUT_REQUIRED",
  "auth-required": "TASK_STATE_AUTH_REQUIRED",
  completed: "TASK_STATE_COMPLETED",
  canceled: "TASK_STATE_CANCELED",
  failed: "TASK_STATE_FAILED",
  rejected: "TASK_STATE_REJECTED",
  unknown: "TASK_STATE_UNSPECIFIED"
}

export const stateToV1 = (state: TaskState): string => STATE_NAMES[state]

/** A 1.0 state name as 0.3 names it; undefined for a name 1.0 does not have. */
export const stateFromV1 = (name: string): TaskState | undefined =>
  TaskStateSchema.literals.find((state) => STATE_NAMES[state] === name)

const ROLE_NAMES = { user: "ROLE_USER", agent: "ROLE_AGENT" } as const

const partToV1 = (part: Part): Record<string, unknown> => {
  switch (part.kind) {
    case "text":
      return { text: part.text }
    case "data":
      return { data: part.data }
    case "file":
      return { url: part.file.uri, ...(part.file.name === undefined ? {} : { filename: part.file.name }), ...(part.file.mimeType === undefined ? {} : { mediaType: part.file.mimeType }) }
  }
}

export const messageToV1 = (message: Message) => ({
  messageId: message.messageId,
  contextId: message.contextId,
  taskId: message.taskId,
  role: ROLE_NAMES[message.role],
  parts: message.parts.map(partToV1)
})

const artifactToV1 = (artifact: Artifact) => ({ artifactId: artifact.artifactId, name: artifact.name, parts: artifact.parts.map(partToV1) })

const statusToV1 = (status: Task["status"]) => ({
  state: stateToV1(status.state),
  timestamp: status.timestamp,
  ...(status.message === undefined ? {} : { message: messageToV1(status.message) })
})

/** A task as ListTasks lists it: its artifacts left out unless asked (1.0: absent, not empty). */
export type ListedTask = Omit<Task, "artifacts"> & { readonly artifacts?: Task["artifacts"] }

export const taskToV1 = (task: ListedTask) => ({
  id: task.id,
  contextId: task.contextId,
  status: statusToV1(task.status),
  ...(task.artifacts === undefined ? {} : { artifacts: task.artifacts.map(artifactToV1) }),
  history: task.history.map(messageToV1)
})

/** A stream's event as 1.0's StreamResponse: its payload named by its field. */
export const streamEventToV1 = (event: TaskStreamEvent) => {
  switch (event.kind) {
    case "task":
      return { task: taskToV1(event) }
    case "status-update":
      return { statusUpdate: { taskId: event.taskId, contextId: event.contextId, status: statusToV1(event.status) } }
    case "artifact-update":
      return { artifactUpdate: { taskId: event.taskId, contextId: event.contextId, artifact: artifactToV1(event.artifact), append: event.append, lastChunk: event.lastChunk } }
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A 1.0 message's fields under their JSON names: ProtoJSON parsers accept a field's proto name
 * (`context_id`) as well as its lowerCamel JSON name (`contextId`), and so does this endpoint. Only
 * the fields of 1.0's messages are renamed, never the keys of a `metadata` or `data` object.
 */
const jsonNames = (fields: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).map(([name, value]) => [name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase()), value]))

/**
 * A 1.0 part as 0.3 spells it; the 0.3 params' schema then checks it. A part with none of 1.0's
 * four contents is passed on as it is, so that check refuses it.
 */
const partFromV1 = (part: unknown): unknown => {
  if (!isObject(part)) return part
  const { text, raw, url, data, filename, mediaType, metadata } = jsonNames(part)
  const file = { ...(filename === undefined ? {} : { name: filename }), ...(mediaType === undefined ? {} : { mimeType: mediaType }) }
  const kept = metadata === undefined ? {} : { metadata }
  if (text !== undefined) return { kind: "text", text, ...kept }
  if (raw !== undefined) return { kind: "file", file: { ...file, bytes: raw }, ...kept }
  if (url !== undefined) return { kind: "file", file: { ...file, uri: url }, ...kept }
  if (data !== undefined) return { kind: "data", data, ...kept }
  return part
}

/** A 1.0 role name as 0.3 spells it; any other value is passed on for the 0.3 check to refuse. */
const roleFromV1 = (role: unknown) => (role === ROLE_NAMES.user ? "user" : role === ROLE_NAMES.agent ? "agent" : role)

const messageFromV1 = (message: unknown): unknown => {
  if (!isObject(message)) return message
  const { role, parts, ...rest } = jsonNames(message)
  return { ...rest, kind: "message", role: roleFromV1(role), parts: Array.isArray(parts) ? parts.map(partFromV1) : parts }
}

/**
 * SendMessage's params as message/send takes them: `returnImmediately` is 0.3's `blocking: false`,
 * `taskPushNotificationConfig` its `pushNotificationConfig`; a tenant names nothing here.
 */
const sendParamsFromV1 = (params: Record<string, unknown>) => {
  const { message, configuration, metadata } = jsonNames(params)
  const config = isObject(configuration) ? jsonNames(configuration) : undefined
  return {
    message: messageFromV1(message),
    ...(config === undefined
      ? {}
      : {
          configuration: {
            ...(config.acceptedOutputModes === undefined ? {} : { acceptedOutputModes: config.acceptedOutputModes }),
            ...(config.historyLength === undefined ? {} : { historyLength: config.historyLength }),
            ...(config.returnImmediately === true ? { blocking: false } : {}),
            ...(config.taskPushNotificationConfig === undefined ? {} : { pushNotificationConfig: config.taskPushNotificationConfig })
          }
        }),
    ...(metadata === undefined ? {} : { metadata })
  }
}

/** The params of a method naming one task (or ListTasks' filters), without 1.0's tenant. */
const taskParamsFromV1 = (params: Record<string, unknown>) => {
  const { tenant: _tenant, ...named } = jsonNames(params)
  return named
}

/** One 1.0 method: the capability that runs it, its params as that capability takes them, and its answer as 1.0 has it. */
export interface V1Method {
  readonly capability: string
  readonly streams: boolean
  readonly input: (params: Record<string, unknown>) => unknown
  readonly result: (value: unknown) => unknown
}

/** ListTasks' answer before its tasks are mapped (src/a2a/Methods.ts). */
export interface TaskPage {
  readonly tasks: ReadonlyArray<ListedTask>
  readonly nextPageToken: string
  readonly pageSize: number
  readonly totalSize: number
}

/** The 1.0 JSON-RPC methods (PascalCase). */
export const V1_METHODS: Readonly<Record<string, V1Method>> = {
  SendMessage: { capability: "a2a.message.send", streams: false, input: sendParamsFromV1, result: (task) => ({ task: taskToV1(task as Task) }) },
  SendStreamingMessage: { capability: "a2a.message.stream", streams: true, input: sendParamsFromV1, result: (value) => value },
  GetTask: { capability: "a2a.tasks.get", streams: false, input: taskParamsFromV1, result: (task) => taskToV1(task as Task) },
  CancelTask: { capability: "a2a.tasks.cancel", streams: false, input: taskParamsFromV1, result: (task) => taskToV1(task as Task) },
  // follows only a task that has not ended: an ended one is UnsupportedOperationError (spec 3.1.6)
  SubscribeToTask: { capability: "a2a.tasks.resubscribe", streams: true, input: (params) => ({ ...taskParamsFromV1(params), refuseEnded: true }), result: (value) => value },
  ListTasks: {
    capability: "a2a.tasks.list",
    streams: false,
    input: taskParamsFromV1,
    result: (value) => {
      const page = value as TaskPage
      return { ...page, tasks: page.tasks.map(taskToV1) }
    }
  },
  GetExtendedAgentCard: { capability: "a2a.card.extended", streams: false, input: taskParamsFromV1, result: (card) => cardToV1(card as V03Card) }
}

/** 1.0's push-notification methods: refused with -32003, as 0.3's are (the card says pushNotifications false). */
export const V1_PUSH_CONFIG_METHODS: ReadonlySet<string> = new Set([
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig"
])

/** ListTasks' params (A2A 1.0 ListTasksRequest): filters, and a page of at most 100 tasks, 50 unless asked. */
export const ListTasksParams = Schema.Struct({
  contextId: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  pageSize: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  pageToken: Schema.optional(Schema.String),
  historyLength: Schema.optional(Schema.NonNegativeInt),
  statusTimestampAfter: Schema.optional(Schema.String),
  includeArtifacts: Schema.optional(Schema.Boolean)
})
export type ListTasksParams = typeof ListTasksParams.Type

export const DEFAULT_PAGE_SIZE = 50

/** What the 1.0 card is made of: the 0.3 card (src/a2a/Card.ts), public or extended. */
interface V03Card {
  readonly name: string
  readonly description: string
  readonly version: string
  readonly capabilities: { readonly streaming: boolean; readonly pushNotifications: boolean; readonly extendedAgentCard: boolean; readonly extensions?: ReadonlyArray<unknown> }
  readonly defaultInputModes: ReadonlyArray<string>
  readonly defaultOutputModes: ReadonlyArray<string>
  readonly skills: ReadonlyArray<unknown>
  readonly supportedInterfaces: ReadonlyArray<unknown>
  readonly securitySchemes: { readonly bearer: { readonly scheme: string; readonly description: string } }
}

/** The 0.3 card as 1.0 has it: the same agent and skills, its interfaces listed, its security in 1.0's shape. */
export const cardToV1 = (card: V03Card) => ({
  name: card.name,
  description: card.description,
  supportedInterfaces: card.supportedInterfaces,
  version: card.version,
  capabilities: {
    streaming: card.capabilities.streaming,
    pushNotifications: card.capabilities.pushNotifications,
    extendedAgentCard: card.capabilities.extendedAgentCard,
    ...(card.capabilities.extensions === undefined ? {} : { extensions: card.capabilities.extensions })
  },
  securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: card.securitySchemes.bearer.scheme, description: card.securitySchemes.bearer.description } } },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  defaultInputModes: card.defaultInputModes,
  defaultOutputModes: card.defaultOutputModes,
  skills: card.skills
})

export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
const A2A_ERROR_DOMAIN = "a2a-protocol.org"

/**
 * 1.0's errors by JSON-RPC code, as the a2a-js SDK names and maps them: the ErrorInfo reason
 * (UPPER_SNAKE_CASE, no "Error"), and on HTTP+JSON the status and its gRPC status name.
 */
export const A2A_ERRORS: Readonly<Record<number, { readonly reason: string; readonly http?: readonly [status: number, grpcStatus: string] }>> = {
  [A2A_TASK_NOT_FOUND]: { reason: "TASK_NOT_FOUND", http: [404, "NOT_FOUND"] },
  [A2A_TASK_NOT_CANCELABLE]: { reason: "TASK_NOT_CANCELABLE", http: [400, "FAILED_PRECONDITION"] },
  [A2A_PUSH_NOT_SUPPORTED]: { reason: "PUSH_NOTIFICATION_NOT_SUPPORTED", http: [400, "FAILED_PRECONDITION"] },
  [A2A_UNSUPPORTED_OPERATION]: { reason: "UNSUPPORTED_OPERATION", http: [400, "FAILED_PRECONDITION"] },
  [A2A_CONTENT_TYPE_NOT_SUPPORTED]: { reason: "CONTENT_TYPE_NOT_SUPPORTED", http: [400, "INVALID_ARGUMENT"] },
  [A2A_VERSION_NOT_SUPPORTED]: { reason: "VERSION_NOT_SUPPORTED", http: [400, "FAILED_PRECONDITION"] },
  [JSONRPC_INVALID_PARAMS]: { reason: "INVALID_PARAMS", http: [400, "INVALID_ARGUMENT"] },
  [JSONRPC_METHOD_NOT_FOUND]: { reason: "METHOD_NOT_FOUND", http: [404, "NOT_FOUND"] },
  [JSONRPC_INVALID_REQUEST]: { reason: "INVALID_REQUEST" },
  [JSONRPC_PARSE_ERROR]: { reason: "PARSE_ERROR" },
  [JSONRPC_INTERNAL_ERROR]: { reason: "INTERNAL_ERROR" }
}

/** An error's facts (0.3's `data` object) as ErrorInfo's metadata, whose values are strings. */
const metadataOf = (data: unknown): Record<string, string> =>
  isObject(data)
    ? Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]))
    : {}

/**
 * An error's google.rpc.ErrorInfo (1.0's error details, spec 9.5 and 11.6): A2A's reason for one of
 * A2A's errors; a refusal of the platform's own (-32000, its HTTP meaning in the data) is reasoned by
 * its code under the platform's domain. The error's facts are its metadata.
 */
export const errorInfoOf = (error: { readonly code: number; readonly data?: unknown }, platformDomain: string) => {
  const a2aReason = A2A_ERRORS[error.code]?.reason
  const code = isObject(error.data) && typeof error.data.code === "string" ? error.data.code : undefined
  const metadata = metadataOf(error.data)
  return {
    "@type": ERROR_INFO_TYPE,
    reason: a2aReason ?? code?.toUpperCase() ?? "INTERNAL_ERROR",
    domain: a2aReason === undefined && code !== undefined ? platformDomain : A2A_ERROR_DOMAIN,
    ...(Object.keys(metadata).length === 0 ? {} : { metadata })
  }
}
