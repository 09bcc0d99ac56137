/**
 * `npm run bench:a2a`: what the A2A endpoint serves, with the built-in offline model (no provider),
 * beside a ceiling and two peers. JSON-RPC 2.0 on `POST /a2a` with the bootstrap workspace key as
 * Bearer, two methods:
 *
 * 1. `message/send`, content `hello`, a new `messageId` (UUID) per request and no task or context
 *    id, so every request is a new task: a whole assistant turn in a new conversation, answered
 *    once the task has settled (the default, blocking). Each answer must be the Task, `completed`.
 * 2. `tasks/get` of one existing task (the completed task of a `message/send` made before the
 *    loads): a read through the checkpoint (`invoke` → `readTask`, the owner's cached state or
 *    else `findTask` → `taskView`).
 *
 * The same requests, byte for byte, go to three other servers, each a child process on loopback
 * (this file again, with the server's name as argument):
 *
 * - `ceiling`: a bare uWebSockets.js JSON-RPC route: it reads the body, parses it, and answers
 *   `{jsonrpc, id, result}` with a fixed Task (the platform's own answer to the first `tasks/get`,
 *   so that both write the same bytes but the id).
 * - `reference`: the a2a-js 0.3 reference server (`@a2a-js/sdk`: Express, `jsonRpcHandler`,
 *   `DefaultRequestHandler`, `InMemoryTaskStore`) with an echo agent: it publishes the task, its
 *   answer `You said: hello` as the task's artifact, and the completed status with that answer as
 *   its message. No authentication, no persistence.
 * - `agent`: the same server whose agent runs one `streamText` turn of the `ai` SDK, on a mock
 *   model (`MockLanguageModelV3`) that streams what the offline model streams for `hello` (its
 *   reasoning, then `You said: hello` in chunks of three words), and publishes the turn's text the
 *   same way. The fair peer: every `message/send` of the platform is an agent turn.
 *
 * Then A2A 1.0: the same two calls as `SendMessage` and `GetTask` (1.0's shapes: `ROLE_USER`,
 * parts without `kind`, `{task}` as `SendMessage`'s result, `TASK_STATE_COMPLETED`) under the
 * header `A2A-Version: 1.0`, to the platform's `/a2a` and to the a2a-js 1.x reference server
 * (`@a2a-js/sdk` 1.3, installed as `@a2a-js/sdk-v1`: Express, its `jsonRpcHandler` without the
 * 0.3 compatibility layer, `DefaultRequestHandler`, `InMemoryTaskStore`), once with the echo
 * agent (`reference-v1`) and once with the `ai` SDK agent (`agent-v1`): the same answers, published
 * as 1.0 events. Then the same 1.0 calls on the HTTP+JSON binding, `POST /a2a/v1/message:send`
 * with `{message}` and `GET /a2a/v1/tasks/{id}` (the answers `{task}` and the Task), to the
 * platform's binding and to the 1.x reference servers' `restHandler`, mounted beside their
 * JSON-RPC route on the same server and task store. Every server of a binding is loaded by the same
 * client. The ceiling is measured in the 0.3 pass only. With BENCH_VERSIONS=0.3 or
 * BENCH_VERSIONS=1.0, only that version's servers run (1.0: both bindings).
 *
 * Each server and method runs for BENCH_SECONDS with BENCH_CONCURRENCY requests in flight (each
 * sends its next as soon as its answer is in; none is sent after the window), after
 * BENCH_WARMUP_SECONDS of warm-up. Requests per second: every answer ÷ the time from the first
 * request to the last answer (as in bench/auth.ts); p50/p99 latency: request start to the answer's
 * last byte. Also the serving process's CPU time per request (`process.cpuUsage()`, all its
 * threads: with PGlite, the database's too; a real Postgres's is not counted), and the event-loop
 * utilization of the serving process's main thread and of the load generator (near 100 %: the
 * client limits the figure). Platform ÷ each other server of the same version: the ratios close the
 * output.
 *
 * One node runs in this process, as in bench/chat.ts: embedded PGlite unless DATABASE_URL is set,
 * the embedded log unless KAFKA_BROKERS is set, the chat rate limit raised out of the way. The load
 * comes from another child process (argument `load`), over `node:http` with an agent without a
 * socket limit, one socket per request in flight. No child loads the platform's modules.
 * With BENCH_PROFILE=<directory>, the platform's two windows are CPU-profiled (the V8 sampling
 * profiler through `node:inspector`, which slows the node down) into `a2a-send.cpuprofile` and
 * `a2a-get.cpuprofile` there, and their top costs are printed after the tables.
 * With BENCH_ONLY=send or BENCH_ONLY=get, only that method's windows run.
 * Writes Markdown tables to stdout.
 */
import type { AgentCard, Message } from "@a2a-js/sdk"
import { type AgentExecutor, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server"
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express"
import { type AgentCard as AgentCardV1, type Message as MessageV1, type Part as PartV1, Role, TaskState } from "@a2a-js/sdk-v1"
import {
  AgentEvent,
  type AgentExecutor as AgentExecutorV1,
  DefaultRequestHandler as DefaultRequestHandlerV1,
  InMemoryTaskStore as InMemoryTaskStoreV1
} from "@a2a-js/sdk-v1/server"
import { jsonRpcHandler as jsonRpcHandlerV1, restHandler as restHandlerV1, UserBuilder as UserBuilderV1 } from "@a2a-js/sdk-v1/server/express"
import type { LanguageModelV3Prompt, LanguageModelV3StreamPart } from "@ai-sdk/provider"
import { streamText } from "ai"
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test"
import express from "express"
import { randomUUID } from "node:crypto"
import { mkdir, writeFile } from "node:fs/promises"
import http from "node:http"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import uWS from "uWebSockets.js"
import { a2aGet, a2aSend, countWork, workTable } from "./counting.ts"
import { type CpuProfile, openProfiler, profileTables } from "./profile.ts"
import {
  announce,
  ask,
  type Bench,
  brokers,
  database,
  int,
  kindIs,
  listenHttp,
  loadWindow,
  machine,
  type Measured,
  measured,
  ms,
  offlineAnswer,
  platformLabel,
  portOf,
  postForText,
  progressOf,
  quantile,
  ratio,
  ratios,
  row,
  runBench,
  serveCeiling,
  settle,
  startNode,
  table,
  type Usage,
  usageNow,
  usageOf,
  usageReply,
  type Window,
  WINDOW_ALIGN,
  WINDOW_COLUMNS,
  WINDOW_LEGEND,
  windowCells,
  windowSettings
} from "./harness.ts"

const { seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, concurrency: CONCURRENCY, requestTimeoutMs: REQUEST_TIMEOUT_MS } = windowSettings(64)
const PROFILE_DIR = process.env.BENCH_PROFILE || undefined
/** Operations of each method whose work is counted, one at a time, before the windows. */
const WORK_OPERATIONS = Number(process.env.BENCH_WORK_OPERATIONS ?? 30)
const ONLY = process.env.BENCH_ONLY === "send" ? "message/send" : process.env.BENCH_ONLY === "get" ? "tasks/get" : undefined
const HELLO = "hello"
const PATHNAME = "/a2a"
/** Where the HTTP+JSON binding is served, on the platform and on the 1.x peers. */
const REST_PATHNAME = "/a2a/v1"

/** The two calls measured, named as in 0.3; `WIRE` names them in each binding. */
type Method = "message/send" | "tasks/get"
type Version = "0.3" | "1.0"
const VERSIONS = (["0.3", "1.0"] as const).filter((version) => process.env.BENCH_VERSIONS === undefined || process.env.BENCH_VERSIONS.split(",").includes(version))
/** A version on one binding: 0.3 and 1.0 on JSON-RPC, and 1.0 on HTTP+JSON. */
type Binding = "0.3" | "1.0" | "1.0 HTTP+JSON"

type TaskLike = { id?: string; status?: { state?: string } }

/** One call on the wire: where it goes, its body (null: a GET), and the Task its parsed answer carries, or why there is none. */
interface WireRequest {
  readonly path: string
  readonly body: string | null
  readonly taskOf: (answer: unknown) => TaskLike | string
}

let nextId = 1

/** A JSON-RPC call with a fresh id: its answer must be the result of that id, `taskOf` reads the Task in it. */
const rpcRequest = (method: string, params: object, taskOf: (result: unknown) => TaskLike | undefined): WireRequest => {
  const id = nextId++
  return {
    path: PATHNAME,
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    taskOf: (answer) => {
      const { id: answered, result, error } = answer as { id?: unknown; result?: unknown; error?: { code: number; message: string } }
      if (error !== undefined) return `error ${error.code} ${error.message}`
      if (answered !== id) return `answered id ${String(answered)} to ${id}`
      return taskOf(result) ?? `not a Task: ${JSON.stringify(result)?.slice(0, 160)}`
    }
  }
}

const messageV1 = () => ({ role: "ROLE_USER", parts: [{ text: HELLO }], messageId: randomUUID() })

/** How each binding writes the two calls (a fresh messageId per send) and reads their answers. */
const WIRE: Record<Binding, {
  readonly version: Version
  readonly headers: Readonly<Record<string, string>>
  readonly methods: Record<Method, string>
  readonly request: (method: Method, taskId: string) => WireRequest
  readonly completed: string
}> = {
  "0.3": {
    version: "0.3",
    headers: {},
    methods: { "message/send": "message/send", "tasks/get": "tasks/get" },
    request: (method, taskId) => {
      const params = method === "message/send" ? { message: { kind: "message", role: "user", parts: [{ kind: "text", text: HELLO }], messageId: randomUUID() } } : { id: taskId }
      return rpcRequest(method, params, (result) => ((result as { kind?: string } | undefined)?.kind === "task" ? (result as TaskLike) : undefined))
    },
    completed: "completed"
  },
  "1.0": {
    version: "1.0",
    headers: { "A2A-Version": "1.0" },
    methods: { "message/send": "SendMessage", "tasks/get": "GetTask" },
    request: (method, taskId) =>
      method === "message/send"
        ? rpcRequest("SendMessage", { message: messageV1() }, (result) => (result as { task?: TaskLike } | undefined)?.task)
        : rpcRequest("GetTask", { id: taskId }, (result) => result as TaskLike | undefined),
    completed: "TASK_STATE_COMPLETED"
  },
  "1.0 HTTP+JSON": {
    version: "1.0",
    headers: { "A2A-Version": "1.0" },
    methods: { "message/send": "POST /message:send", "tasks/get": "GET /tasks/{id}" },
    request: (method, taskId) =>
      method === "message/send"
        ? { path: `${REST_PATHNAME}/message:send`, body: JSON.stringify({ message: messageV1() }), taskOf: (answer) => (answer as { task?: TaskLike }).task ?? `no task: ${JSON.stringify(answer).slice(0, 160)}` }
        : { path: `${REST_PATHNAME}/tasks/${encodeURIComponent(taskId)}`, body: null, taskOf: (answer) => answer as TaskLike },
    completed: "TASK_STATE_COMPLETED"
  }
}

// ---------------------------------------------------------------------------------------------
// The ceiling (child process): a bare uWS JSON-RPC route answering a fixed Task.

const startCeiling = () => {
  let result: unknown = null
  const app = uWS.App()
  app.post(PATHNAME, (res) => {
    let aborted = false
    let body = Buffer.alloc(0)
    res.onAborted(() => void (aborted = true))
    res.onData((part, isLast) => {
      body = Buffer.concat([body, Buffer.from(part)])
      if (!isLast) return
      const { id } = JSON.parse(body.toString("utf8")) as { id: string | number | null }
      if (aborted) return
      const answer = JSON.stringify({ jsonrpc: "2.0", id, result })
      res.cork(() => {
        res.writeStatus("200 OK")
        res.writeHeader("content-type", "application/json")
        res.end(answer)
      })
    })
  })
  void serveCeiling(app, async (message: { kind: "usage" } | { kind: "result"; result: unknown }) => {
    if (message.kind === "usage") return usageReply()
    result = message.result
    return { kind: "result" }
  })
}

// ---------------------------------------------------------------------------------------------
// The peers (child processes): the a2a-js reference servers, 0.3 and 1.x, each with an echo agent
// or an `ai` SDK agent.

const CARD: AgentCard = {
  name: "Bench peer",
  description: "Answers a message, for bench/a2a.ts",
  protocolVersion: "0.3.0",
  version: "0.1.0",
  url: `http://127.0.0.1${PATHNAME}`,
  skills: [{ id: "chat", name: "Chat", description: "Answers a message", tags: ["chat"] }],
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ["text"],
  defaultOutputModes: ["text"]
}

const textOfMessage = (message: Message) => message.parts.flatMap((part) => (part.kind === "text" ? [part.text] : [])).join("\n")

/**
 * A peer's agent: it publishes the task (submitted), then what `answer` makes of the user's text
 * as the task's artifact, and the completed status with that text as its message.
 */
const agentAnswering = (answer: (content: string) => Promise<string>): AgentExecutor => ({
  execute: async ({ taskId, contextId, userMessage }, bus) => {
    bus.publish({ kind: "task", id: taskId, contextId, status: { state: "submitted", timestamp: new Date().toISOString() }, history: [userMessage] })
    const text = await answer(textOfMessage(userMessage))
    const parts = [{ kind: "text" as const, text }]
    bus.publish({ kind: "artifact-update", taskId, contextId, artifact: { artifactId: randomUUID(), name: "answer", parts } })
    bus.publish({
      kind: "status-update",
      taskId,
      contextId,
      final: true,
      status: { state: "completed", timestamp: new Date().toISOString(), message: { kind: "message", role: "agent", messageId: randomUUID(), taskId, contextId, parts } }
    })
    bus.finished()
  },
  cancelTask: async () => {}
})

/** 1.0's card: the same agent, its JSON-RPC and HTTP+JSON 1.0 interfaces. */
const CARD_V1: AgentCardV1 = {
  name: CARD.name,
  description: CARD.description,
  supportedInterfaces: [
    { url: CARD.url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    { url: `http://127.0.0.1${REST_PATHNAME}`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" }
  ],
  provider: undefined,
  version: CARD.version,
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: CARD.defaultInputModes,
  defaultOutputModes: CARD.defaultOutputModes,
  skills: CARD.skills.map((skill) => ({ ...skill, examples: [], inputModes: [], outputModes: [], securityRequirements: [] })),
  signatures: []
}

const textOfMessageV1 = (message: MessageV1) => message.parts.flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : [])).join("\n")

/** `agentAnswering` in 1.0's events: the task, the answer as its artifact, the completed status. */
const agentAnsweringV1 = (answer: (content: string) => Promise<string>): AgentExecutorV1 => ({
  execute: async ({ taskId, contextId, userMessage }, bus) => {
    bus.publish(AgentEvent.task({
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
      artifacts: [],
      history: [userMessage],
      metadata: undefined
    }))
    const text = await answer(textOfMessageV1(userMessage))
    const parts: Array<PartV1> = [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }]
    bus.publish(AgentEvent.artifactUpdate({
      taskId,
      contextId,
      artifact: { artifactId: randomUUID(), name: "answer", description: "", parts, metadata: undefined, extensions: [] },
      append: false,
      lastChunk: true,
      metadata: undefined
    }))
    const message: MessageV1 = { messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] }
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: new Date().toISOString(), message }, metadata: undefined }))
    bus.finished()
  },
  cancelTask: async () => {}
})

const lastUserText = (prompt: LanguageModelV3Prompt) => {
  const user = prompt.findLast((message) => message.role === "user")
  return user === undefined || user.role !== "user" ? "" : user.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
}

/**
 * A mock model streaming what the offline model streams for a text answer: its reasoning, then
 * the answer in chunks of three words, finish reason `stop`. A model per turn, so that the mock's
 * record of its calls does not grow over the run.
 */
const offlineLikeModel = () =>
  new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      const { reasoning, chunks } = offlineAnswer(lastUserText(prompt))
      const output = Math.ceil((reasoning.length + chunks.join("").length) / 4)
      return {
        stream: convertArrayToReadableStream<LanguageModelV3StreamPart>([
          { type: "stream-start", warnings: [] },
          { type: "reasoning-start", id: "reasoning-0" },
          { type: "reasoning-delta", id: "reasoning-0", delta: reasoning },
          { type: "reasoning-end", id: "reasoning-0" },
          { type: "text-start", id: "text-0" },
          ...chunks.map((delta): LanguageModelV3StreamPart => ({ type: "text-delta", id: "text-0", delta })),
          { type: "text-end", id: "text-0" },
          {
            type: "finish",
            finishReason: { unified: "stop", raw: "stop" },
            usage: {
              inputTokens: { total: 2, noCache: 2, cacheRead: 0, cacheWrite: 0 },
              outputTokens: { total: output, text: output - Math.ceil(reasoning.length / 4), reasoning: Math.ceil(reasoning.length / 4) }
            }
          }
        ])
      }
    }
  })

/** One `streamText` turn on the mock model; its text, gathered from the stream's parts. */
const agentTurn = async (content: string) => {
  const turn = streamText({ model: offlineLikeModel(), prompt: content })
  let text = ""
  for await (const part of turn.fullStream) {
    if (part.type === "text-delta") text += part.text
    else if (part.type === "error") throw part.error
  }
  return text
}

const echo = async (content: string) => `You said: ${content}`

/** A peer: the reference server with `agent`, on `POST /a2a`, no authentication. */
const startPeer = (agent: AgentExecutor) => () => {
  const requestHandler = new DefaultRequestHandler(CARD, new InMemoryTaskStore(), agent)
  const app = express()
  app.use(PATHNAME, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }))
  void announce(listenHttp(http.createServer(app)), async () => usageReply())
}

/** A 1.x peer: the 1.x reference server with `agent`, HTTP+JSON 1.0 under `/a2a/v1` and JSON-RPC 1.0 on `POST /a2a`, one task store, no authentication. */
const startPeerV1 = (agent: AgentExecutorV1) => () => {
  const requestHandler = new DefaultRequestHandlerV1(CARD_V1, new InMemoryTaskStoreV1(), agent)
  const app = express()
  // the longer prefix first: `/a2a` would take its requests too
  app.use(REST_PATHNAME, restHandlerV1({ requestHandler, userBuilder: UserBuilderV1.noAuthentication }))
  app.use(PATHNAME, jsonRpcHandlerV1({ requestHandler, userBuilder: UserBuilderV1.noAuthentication }))
  void announce(listenHttp(http.createServer(app)), async () => usageReply())
}

// ---------------------------------------------------------------------------------------------
// The load generator (child process): node:http, one socket per request in flight.

interface Load {
  readonly kind: "load"
  readonly port: number
  readonly key: string
  readonly method: Method
  readonly binding: Binding
  /** tasks/get: the task read. */
  readonly taskId: string
  readonly concurrency: number
  readonly seconds: number
}

/** The Task in an answer to `request` of `method`, or its failure: it must be the Task, and for message/send a completed one. */
const taskAnswered = (method: Method, binding: Binding, request: WireRequest, status: number, text: string): TaskLike | string => {
  if (status !== 200) return `${status} ${text.slice(0, 160)}`
  let answer: unknown
  try {
    answer = JSON.parse(text)
  } catch {
    return `not JSON: ${text.slice(0, 160)}`
  }
  const task = request.taskOf(answer)
  if (typeof task === "string") return task
  if (task?.id === undefined) return `not a Task: ${text.slice(0, 160)}`
  if (method === "message/send" && task.status?.state !== WIRE[binding].completed) return `task ${task.status?.state}`
  return task
}

const generateLoad = ({ port, key, method, binding, taskId, concurrency, seconds }: Load) =>
  loadWindow(concurrency, seconds, () => {
    const request = WIRE[binding].request(method, taskId)
    return postForText({ port, path: request.path, key, headers: WIRE[binding].headers }, request.body, REQUEST_TIMEOUT_MS, (status, text) => {
      const task = taskAnswered(method, binding, request, status, text)
      return typeof task === "string" ? task : undefined
    })
  })

// ---------------------------------------------------------------------------------------------
// The bench (this process): a node, the children, the measurements, the tables.

const progress = progressOf("bench:a2a")

/** The servers measured, in the order of their windows, each with the binding it is spoken on. */
const BINDING_OF = {
  ceiling: "0.3",
  reference: "0.3",
  agent: "0.3",
  platform: "0.3",
  "reference-v1": "1.0",
  "agent-v1": "1.0",
  "platform-v1": "1.0",
  "reference-v1-rest": "1.0 HTTP+JSON",
  "agent-v1-rest": "1.0 HTTP+JSON",
  "platform-v1-rest": "1.0 HTTP+JSON"
} as const satisfies Record<string, Binding>
type Which = keyof typeof BINDING_OF
const SERVERS = (Object.keys(BINDING_OF) as Array<Which>).filter((which) => VERSIONS.includes(WIRE[BINDING_OF[which]].version))
const BINDINGS = [...new Set(SERVERS.map((which) => BINDING_OF[which]))]
/** The platform's pass on each binding. */
const PLATFORM: Record<Binding, Which> = { "0.3": "platform", "1.0": "platform-v1", "1.0 HTTP+JSON": "platform-v1-rest" }
const isPlatform = (which: Which) => Object.values(PLATFORM).includes(which)
/** The child processes: a 1.x peer serves both bindings. */
const PROCESS_OF = {
  ceiling: "ceiling",
  reference: "reference",
  agent: "agent",
  "reference-v1": "reference-v1",
  "agent-v1": "agent-v1",
  "reference-v1-rest": "reference-v1",
  "agent-v1-rest": "agent-v1"
} as const satisfies Partial<Record<Which, string>>
type Child = (typeof PROCESS_OF)[keyof typeof PROCESS_OF]
const processOf = (which: Which): Child | undefined => (PROCESS_OF as Partial<Record<Which, Child>>)[which]

/** Platform ÷ each other server of its binding, a line per method and binding. */
const ratioLines = (methods: ReadonlyArray<Method>, results: Record<Method, Partial<Record<Which, Measured>>>, labels: Record<Which, string>) =>
  methods.flatMap((method) =>
    BINDINGS.map((binding) => {
      const platform = results[method][PLATFORM[binding]]!
      const others = SERVERS.filter((which) => BINDING_OF[which] === binding && !isPlatform(which))
      return `- ${WIRE[binding].methods[method]} (${binding}): ${others.map((which) => `÷ ${labels[which]}: ${ratios(platform, results[method][which]!)}`).join("; ")}`
    })
  )

/** Issue 24's targets, measured on the 0.3 pass. */
const targetLines = (results: Record<Method, Partial<Record<Which, Measured>>>, works: ReadonlyArray<{ what: string; p50Ms: number }>) => {
  const send = results["message/send"] as Partial<Record<Which, Measured>> | undefined
  const get = results["tasks/get"] as Partial<Record<Which, Measured>> | undefined
  const lines: Array<string> = []
  if (send?.platform !== undefined && send.agent !== undefined) {
    const sendP99 = quantile(send.platform.sorted, 0.99)
    const sendMet = send.platform.rate >= 0.5 * send.agent.rate && send.platform.cpuMs <= 2 * send.agent.cpuMs
    const loneSend = works.find((work) => work.what === "`message/send`")?.p50Ms
    lines.push(
      `Targets (issue 24): message/send at least 0.5 × the \`ai\` SDK agent peer at most twice its CPU per send: ${sendMet ? "met" : "not met"} ` +
        `(${ratio(send.platform.rate, send.agent.rate)} ×, ${ratio(send.platform.cpuMs, send.agent.cpuMs)} × its CPU; p99 ${ms(sendP99)} ms); ` +
        `a lone send answered in at most 25 ms at p50: ${loneSend !== undefined && loneSend <= 25 ? "met" : "not met"} (${loneSend === undefined ? "–" : ms(loneSend)} ms).`
    )
  }
  if (get?.platform !== undefined && get.reference !== undefined) {
    const getMet = get.platform.rate >= get.reference.rate
    lines.push(`Target: tasks/get at least the reference's rate: ${getMet ? "met" : "not met"} (${int(get.platform.rate)}/s, ${ratio(get.platform.rate, get.reference.rate)} ×).`)
  }
  return lines
}

const bench = async (context: Bench) => {
  progress(`starting a node (${database}, ${brokers.length === 0 ? "embedded" : "Kafka"} log)`)
  const node = await startNode(context, { unlimitedChat: true })
  const key = node.bootstrap.workspaceKey
  const labels: Record<Which, string> = {
    ceiling: "ceiling (bare uWS)",
    reference: "a2a-js 0.3 reference (Express, echo agent)",
    agent: "a2a-js 0.3 reference, `ai` SDK agent (mock model)",
    platform: `${platformLabel(node.log.mode)}, 0.3`,
    "reference-v1": "a2a-js 1.x reference (Express, echo agent)",
    "agent-v1": "a2a-js 1.x reference, `ai` SDK agent (mock model)",
    "platform-v1": `${platformLabel(node.log.mode)}, 1.0`,
    "reference-v1-rest": "a2a-js 1.x reference (Express, echo agent)",
    "agent-v1-rest": "a2a-js 1.x reference, `ai` SDK agent (mock model)",
    "platform-v1-rest": `${platformLabel(node.log.mode)}, 1.0 HTTP+JSON`
  }

  const childNames = [...new Set(SERVERS.flatMap((which) => processOf(which) ?? []))]
  const children = Object.fromEntries(childNames.map((name) => [name, context.fork(name)])) as Partial<Record<Child, ReturnType<Bench["fork"]>>>
  const load = context.fork("load")
  const childPorts = {} as Record<Child, number>
  for (const [name, child] of Object.entries(children)) childPorts[name as Child] = await portOf(child)
  const portOfServer = (which: Which) => (isPlatform(which) ? node.port : childPorts[processOf(which)!])

  /** One call from this process, for the setup: the Task answered, and the answer's text. */
  const call = async (which: Which, method: Method, taskId = "") => {
    const binding = BINDING_OF[which]
    const request = WIRE[binding].request(method, taskId)
    const reply = await fetch(`http://127.0.0.1:${portOfServer(which)}${request.path}`, {
      method: request.body === null ? "GET" : "POST",
      headers: { ...WIRE[binding].headers, authorization: `Bearer ${key}`, ...(request.body === null ? {} : { "content-type": "application/json" }) },
      ...(request.body === null ? {} : { body: request.body })
    })
    const text = await reply.text()
    const task = taskAnswered(method, binding, request, reply.status, text)
    if (typeof task === "string") throw new Error(`${which}: ${WIRE[binding].methods[method]}: ${task}`)
    return { id: task.id!, text }
  }
  /** The task each server's tasks/get reads: the completed task of a first message/send. */
  const taskIds = {} as Record<Which, string>
  for (const which of SERVERS.filter((which) => which !== "ceiling")) taskIds[which] = (await call(which, "message/send")).id
  // the ceiling answers with the platform's Task
  if (children.ceiling !== undefined) {
    taskIds.ceiling = "any"
    const { text } = await call("platform", "tasks/get", taskIds.platform)
    await ask(children.ceiling, { kind: "result", result: (JSON.parse(text) as { result: unknown }).result }, kindIs("result"))
  }

  // the work one send and one get cost the node, counted before the windows (`counting.ts`)
  progress("platform: the work per operation, counted")
  const works = [await countWork(node, "`message/send`", a2aSend(node), WORK_OPERATIONS), await countWork(node, "`tasks/get`", await a2aGet(node), WORK_OPERATIONS)]

  const usage = (which: Which): Promise<Usage> => (isPlatform(which) ? Promise.resolve(usageNow()) : usageOf(children[processOf(which)!]!))

  const session = PROFILE_DIR === undefined ? undefined : await openProfiler()
  if (PROFILE_DIR !== undefined) await mkdir(PROFILE_DIR, { recursive: true })
  const profiles: Partial<Record<Method, CpuProfile>> = {}

  const measure = async (which: Which, method: Method, seconds: number, profiled = false) => {
    progress(`${which}: ${WIRE[BINDING_OF[which]].methods[method]}, ${CONCURRENCY} in flight, ${seconds} s`)
    if (isPlatform(which)) await settle(node)
    // the 0.3 pass is the one profiled
    const profiling = profiled && which === "platform" && session !== undefined
    if (profiling) await session.start()
    const before = await usage(which)
    const window = await ask<Window>(
      load,
      { kind: "load", port: portOfServer(which), key, method, binding: BINDING_OF[which], taskId: taskIds[which], concurrency: CONCURRENCY, seconds } satisfies Load,
      kindIs("window")
    )
    const after = await usage(which)
    if (profiling) {
      const profile = await session.stop()
      profiles[method] = profile
      await writeFile(path.join(PROFILE_DIR!, `a2a-${method === "message/send" ? "send" : "get"}.cpuprofile`), JSON.stringify(profile))
    }
    return measured(`${which}, ${method}`, window, before, after)
  }

  const methods = (["message/send", "tasks/get"] as const).filter((method) => ONLY === undefined || method === ONLY)
  // warm every server up, then measure each in turn
  for (const method of methods) for (const which of SERVERS) await measure(which, method, WARMUP_SECONDS)
  const results = {} as Record<Method, Partial<Record<Which, Measured>>>
  for (const method of methods) {
    results[method] = {}
    for (const which of SERVERS) results[method][which] = await measure(which, method, SECONDS, true)
  }
  session?.close()

  const methodRow = (method: Method, which: Which) => row([WIRE[BINDING_OF[which]].methods[method], BINDING_OF[which], labels[which], ...windowCells(results[method][which]!)])
  const profiled = methods.flatMap((method) => {
    const profile = profiles[method]
    return profile === undefined ? [] : ["", ...profileTables(`the platform's ${method} window`, profile)]
  })

  console.log([
    `${machine(node.log.mode)}; offline model; ${CONCURRENCY} in flight, ${SECONDS} s per window${PROFILE_DIR === undefined ? "" : "; the platform's 0.3 windows CPU-profiled (slower)"}.`,
    "",
    `A2A ${BINDINGS.join(", ")} (JSON-RPC on \`POST ${PATHNAME}\`, HTTP+JSON under \`${REST_PATHNAME}\`; ${WINDOW_LEGEND}):`,
    "",
    ...table(
      ["method", "binding", "server", ...WINDOW_COLUMNS],
      `lll${WINDOW_ALIGN}`,
      methods.flatMap((method) => SERVERS.map((which) => methodRow(method, which)))
    ),
    "",
    "The work one operation costs the platform (0.3), one at a time:",
    "",
    ...workTable(works),
    "",
    "Ratios, platform ÷ each server of the same version and binding:",
    "",
    ...ratioLines(methods, results, labels),
    "",
    ...targetLines(results, works),
    ...profiled
  ].join("\n"))
}

runBench(import.meta.url, {
  bench,
  load: generateLoad,
  servers: {
    ceiling: startCeiling,
    reference: startPeer(agentAnswering(echo)),
    agent: startPeer(agentAnswering(agentTurn)),
    "reference-v1": startPeerV1(agentAnsweringV1(echo)),
    "agent-v1": startPeerV1(agentAnsweringV1(agentTurn))
  }
})
