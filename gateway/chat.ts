/**
 * The two turn routes of spec 4.1: `chat/stream` (SSE) and `assistant/ask` (one JSON result). Both
 * invoke `ask_assistant` through the checkpoint, so every refusal of 7.1 is a JSON error before any
 * stream opens; the capability answers with the started turn, whose events this route frames. On the stream, a failure after it opened is one
 * `error` event and `done` with `[DONE]` (7.2); on the ask route it is a JSON error.
 *
 * Every event of the stream carries `id:`, its place in the turn's stream (1 for `run`, then one
 * more per event, `done` included): the turn records its stream with the same numbers
 * (src/assistant/TurnStreamLog.ts). `GET chat/turns/{turnId}/stream` resumes a stream after the
 * `Last-Event-ID` a client saw, through `assistant.turn.stream` (docs/chat.md, "Resuming a stream").
 *
 * `chat/ui` is the same turn for the AI SDK's `useChat`, framed as its UI message stream by
 * src/assistant/UiMessageStream.ts; `GET chat/ui/{id}/stream` resumes a chat's running turn (204 when
 * none runs) and `POST chat/ui/{id}/stop` stops it (docs/decisions.md, "Issue 26: the AI SDK UI message stream").
 */
import { type Cause, Effect, Exit, Schema } from "effect"
import type uWS from "uWebSockets.js"
import type { StartedTurn, TurnFailure, TurnOutcome, TurnSink } from "../src/assistant/ChatEvents.ts"
import type { ResumedTurn } from "../src/assistant/TurnFollow.ts"
import type { UiChatAnswer } from "../src/assistant/UiChat.ts"
import type { AGUIEvent } from "@ag-ui/core"
import { AgUiStream, encodeAgUiEvent, resumeAnswerEvents } from "../src/assistant/AgUi.ts"
import type { AgUiAnswer, AgUiConnection } from "../src/assistant/AgUiRun.ts"
import { approvalAnswerChunks, UI_MESSAGE_STREAM_END, UI_MESSAGE_STREAM_HEADERS, type UiChunk, UiMessageStream } from "../src/assistant/UiMessageStream.ts"
import { invoke } from "../src/checkpoint/Checkpoint.ts"
import { authenticate } from "../src/identity/Auth.ts"
import { askAndAwait, MODEL_OVERRIDE_FIELDS } from "../src/assistant/Assistant.ts"
import { checkTurnAdmission } from "../src/platform/Admission.ts"
import { BadRequest } from "../src/platform/Errors.ts"
import { ChatEvent, TurnResult } from "../src/platform/Wire.ts"
import { replyForFailure } from "./errors.ts"
import { type HttpReply, type HttpRequest, jsonBody, jsonError, PayloadTooLarge, route, Streaming } from "./http.ts"
import { openSse, type SseWriter } from "./sse.ts"

export interface ChatRouteOptions {
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<Exit.Exit<A, E>>
  readonly limits: { readonly maxBodyBytes: number }
}

type Mode = "stream" | "ask" | "ui" | "agui"

/** The capability each turn route invokes. */
const CAPABILITY_OF: Readonly<Record<Mode, string>> = { stream: "ask_assistant", ask: "ask_assistant", ui: "assistant.chat.ui", agui: "assistant.chat.agui" }

/** The ask route's status for a failure after the turn started (7.2 codes; the stream has no status to give). */
const ASK_FAILURE_STATUS: Readonly<Record<string, number>> = {
  conversation_not_found: 404,
  attachment_refused: 400,
  assistant_model_key_limit: 402,
  model_call_failed: 502,
  platform_provider_balance: 502,
  engine_unavailable: 503,
  engine_aborted: 503,
  assistant_run_not_recorded: 503,
  codegraph_unavailable: 503
}

const askFailure = (failure: TurnFailure): HttpReply =>
  jsonError(ASK_FAILURE_STATUS[failure.code ?? ""] ?? 500, failure.code ?? "stream_error", failure.message, failure.reason ?? undefined)

/** The request body; the ask route refuses the model override fields before the schema sees them. */
const chatInput = (req: HttpRequest, mode: Mode) =>
  Effect.flatMap(jsonBody(req), (body) => {
    if (mode === "ask" && typeof body === "object" && body !== null) {
      const override = MODEL_OVERRIDE_FIELDS.find((field) => Object.hasOwn(body, field))
      if (override !== undefined) {
        return Effect.fail(new BadRequest({ reason: "model_override_not_allowed", message: `the ask route does not take '${override}'; use chat/stream to choose a model` }))
      }
    }
    return Effect.succeed(body)
  })

const encodeEvent = Schema.encodeSync(ChatEvent)
const encodeResult = Schema.encodeSync(TurnResult)

/**
 * The turn's end as its stream frames it, from id `id` on (`done`, or `error` then `done`), leaving
 * out what a resuming client saw (ids up to `after`); without ids when `id` is null. Ends the stream.
 */
const frameEnd = (sse: SseWriter, outcome: TurnOutcome, id: number | null, after: number): void => {
  const idOf = (offset: number) => (id === null ? undefined : String(id + offset))
  const due = (offset: number) => id === null || id + offset > after
  if ("result" in outcome) {
    if (due(0)) sse.event("done", JSON.stringify(encodeResult(outcome.result)), idOf(0))
  } else {
    const { code, reason, message } = outcome.failure
    if (due(0)) sse.data(encodeEvent({ type: "error", message, ...(code === null ? {} : { code }), ...(reason === null ? {} : { reason }) }), idOf(0))
    if (due(1)) sse.event("done", "[DONE]", idOf(1))
  }
  sse.end()
}

/** The turn's own stream: each event numbered in the order it comes, as the turn records it. */
const streamSink = (res: uWS.HttpResponse): TurnSink => {
  const sse = openSse(res)
  let id = 0
  return {
    event: (event) => sse.data(encodeEvent(event), String(++id)),
    done: (outcome) => frameEnd(sse, outcome, id + 1, 0)
  }
}

/** A resumed stream: the events with the ids the turn's stream gave them, then its end. */
const resumeSink = (res: uWS.HttpResponse, resumed: ResumedTurn) => {
  const sse = openSse(res)
  // a client that goes away stops the following, not the turn
  sse.onClose((reason) => {
    if (reason === "aborted") resumed.stop()
  })
  resumed.listen({
    event: ({ id, event }) => sse.data(encodeEvent(event), String(id)),
    done: ({ outcome, id }) => frameEnd(sse, outcome, id, resumed.after)
  })
}

const LAST_EVENT_ID = /^\d{1,9}$/

/** `Last-Event-ID` (the header an EventSource sends again), else the `lastEventId` query parameter; null when malformed. */
const lastEventIdOf = (req: HttpRequest): number | undefined | null => {
  const given = req.headers["last-event-id"] ?? new URLSearchParams(req.query).get("lastEventId") ?? undefined
  if (given === undefined || given.trim() === "") return undefined
  return LAST_EVENT_ID.test(given.trim()) ? Number(given.trim()) : null
}

const decodedParams = (req: HttpRequest): Array<string | undefined> =>
  req.params.map((p) => {
    try {
      return decodeURIComponent(p)
    } catch {
      return undefined
    }
  })

/** The resume route: the caller's turn followed from after the last event they saw; 204 when they have no such turn. */
const resumeHandler = (options: ChatRouteOptions, from: "path" | "body") => async (req: HttpRequest, res: uWS.HttpResponse): Promise<HttpReply | typeof Streaming> => {
  const [orgSlug, workspaceSlug, turnId] = decodedParams(req)
  if (orgSlug === undefined || workspaceSlug === undefined || (from === "path" && turnId === undefined)) {
    return jsonError(400, "bad_request", "the path is not valid percent-encoded UTF-8", "invalid_path")
  }
  const lastEventId = lastEventIdOf(req)
  if (lastEventId === null) return jsonError(400, "bad_request", "Last-Event-ID must be the id of an event of the turn's stream (a whole number)", "invalid_last_event_id")
  const input = from === "path"
    ? Effect.succeed({ turnId, ...(lastEventId === undefined ? {} : { lastEventId }) })
    : Effect.map(jsonBody(req), (body) => (lastEventId === undefined || typeof body !== "object" || body === null ? body : { lastEventId, ...body }))
  const exit = await options.run<unknown, unknown>(
    invoke({
      authorization: req.headers.authorization,
      cookie: req.headers.cookie,
      surface: "api",
      capability: "assistant.turn.stream",
      path: { orgSlug, workspaceSlug },
      input,
      position: req.headers["svc-position"],
      trace: req
    })
  )
  if (Exit.isFailure(exit)) return refusal(exit.cause)
  if (exit.value === null) return { status: 204 }
  resumeSink(res, exit.value as ResumedTurn)
  return Streaming
}

/** A chat route's refusal before its stream opens: the chat routes' 429 body (spec 7.1), or the error table's. */
const refusal = (cause: Cause.Cause<unknown>): HttpReply | typeof Streaming => {
  const error = cause._tag === "Fail" ? (cause.error as { _tag?: string; retryAfterSeconds?: number }) : undefined
  // the body was too large: the route answered already
  if (error instanceof PayloadTooLarge) return Streaming
  if (error?._tag === "RateLimited") return { status: 429, headers: { "retry-after": String(error.retryAfterSeconds) }, json: { error: "rate_limited" } }
  return replyForFailure(cause)
}

/** A UI message stream: the protocol's headers, each chunk a `data:` line, then `[DONE]`. */
const openUiStream = (res: uWS.HttpResponse) => {
  const sse = openSse(res, { headers: UI_MESSAGE_STREAM_HEADERS })
  return {
    sse,
    write: (chunks: ReadonlyArray<UiChunk>) => {
      for (const chunk of chunks) sse.data(chunk)
    },
    end: () => {
      sse.dataText(UI_MESSAGE_STREAM_END)
      sse.end()
    }
  }
}

/** A started turn relayed through a protocol's mapping (src/assistant/UiMessageStream.ts, AgUi.ts): each event's frames, then the end's, then `end`. */
const relayMapped = <F>(
  turn: StartedTurn,
  mapping: { readonly event: (event: ChatEvent) => ReadonlyArray<F>; readonly end: (outcome: TurnOutcome) => ReadonlyArray<F> },
  write: (frames: ReadonlyArray<F>) => void,
  end: () => void
) =>
  turn.listen({
    event: (event) => write(mapping.event(event)),
    done: (outcome) => {
      write(mapping.end(outcome))
      end()
    }
  })

/** What a useChat request started, as its UI message stream: the turn's events and end, or the approvals it answered. */
const uiSink = (res: uWS.HttpResponse, answer: UiChatAnswer): void => {
  const ui = openUiStream(res)
  if (answer._tag === "approvals") {
    ui.write(approvalAnswerChunks(answer.messageId, answer.answers))
    return ui.end()
  }
  relayMapped(answer.turn, new UiMessageStream(), ui.write, ui.end)
}

/** An AG-UI stream: each event framed by @ag-ui/encoder. */
const openAgUiStream = (res: uWS.HttpResponse) => {
  const sse = openSse(res)
  return {
    sse,
    write: (events: ReadonlyArray<AGUIEvent>) => {
      for (const event of events) sse.framed(encodeAgUiEvent(event))
    }
  }
}

/**
 * What an AG-UI run started, as its events over SSE: the turn's events and end, or the interrupts it
 * answered. AG-UI's stop is the client's abort of its run (`abortRun`): a client that leaves a turn's
 * run before its end has the turn cancelled, by `cancel` with its turnId.
 */
const agUiSink = (res: uWS.HttpResponse, answer: AgUiAnswer, cancel: (turnId: string) => void): void => {
  const agUi = openAgUiStream(res)
  if (answer._tag === "resumed") {
    agUi.write(resumeAnswerEvents(answer.run, answer.answers))
    return agUi.sse.end()
  }
  agUi.sse.onClose((reason) => {
    if (reason === "aborted") cancel(answer.turnId)
  })
  relayMapped(answer.turn, new AgUiStream(answer.run), agUi.write, () => agUi.sse.end())
}

/** A connect to an AG-UI thread: its running turn from its start, as the run's events; none running, a stream that ends at once. */
const answerAgUiConnect = (value: unknown, res: uWS.HttpResponse): typeof Streaming => {
  const { run, resumed } = value as AgUiConnection
  const agUi = openAgUiStream(res)
  if (resumed === null) {
    agUi.sse.end()
    return Streaming
  }
  // a connected client that goes away stops the following, not the turn: it did not start it
  agUi.sse.onClose((reason) => {
    if (reason === "aborted") resumed.stop()
  })
  const stream = new AgUiStream(run)
  resumed.listen({
    event: ({ event }) => agUi.write(stream.event(event)),
    done: ({ outcome }) => {
      agUi.write(stream.end(outcome))
      agUi.sse.end()
    }
  })
  return Streaming
}

/** A chat's running turn followed from its start, as its UI message stream (the message a reloaded useChat shows again). */
const uiResumeSink = (res: uWS.HttpResponse, resumed: ResumedTurn): void => {
  const ui = openUiStream(res)
  ui.sse.onClose((reason) => {
    if (reason === "aborted") resumed.stop()
  })
  const stream = new UiMessageStream()
  resumed.listen({
    event: ({ event }) => ui.write(stream.event(event)),
    done: ({ outcome }) => {
      ui.write(stream.end(outcome))
      ui.end()
    }
  })
}

/**
 * A useChat route naming its chat in the path (`chat/ui/{id}/stream`, `chat/ui/{id}/stop`, the
 * capability invoked with `{id}`) or in the body (`chat/ui/stream`), its answer framed by `answer`.
 */
const chatIdHandler = (options: ChatRouteOptions, capability: string, from: "path" | "body", answer: (value: unknown, res: uWS.HttpResponse) => HttpReply | typeof Streaming) =>
  async (req: HttpRequest, res: uWS.HttpResponse): Promise<HttpReply | typeof Streaming> => {
    const [orgSlug, workspaceSlug, id] = decodedParams(req)
    if (orgSlug === undefined || workspaceSlug === undefined || (from === "path" && id === undefined)) {
      return jsonError(400, "bad_request", "the path is not valid percent-encoded UTF-8", "invalid_path")
    }
    const exit = await options.run<unknown, unknown>(
      invoke({
        authorization: req.headers.authorization,
        cookie: req.headers.cookie,
        surface: "api",
        capability,
        path: { orgSlug, workspaceSlug },
        input: from === "path" ? Effect.succeed({ id }) : jsonBody(req),
        position: req.headers["svc-position"],
        trace: req
      })
    )
    return Exit.isFailure(exit) ? refusal(exit.cause) : answer(exit.value, res)
  }

/** The resumed UI stream, or 204 when the chat has no running turn. */
const answerUiResume = (value: unknown, res: uWS.HttpResponse): HttpReply | typeof Streaming => {
  if (value === null) return { status: 204 }
  uiResumeSink(res, value as ResumedTurn)
  return Streaming
}

export const chatRoutes = (app: uWS.TemplatedApp, options: ChatRouteOptions): void => {
  const handler = (mode: Mode) => async (req: HttpRequest, res: uWS.HttpResponse): Promise<HttpReply | typeof Streaming> => {
    const [orgSlug, workspaceSlug] = req.params.map((p) => {
      try {
        return decodeURIComponent(p)
      } catch {
        return undefined
      }
    })
    if (orgSlug === undefined || workspaceSlug === undefined) return jsonError(400, "bad_request", "the path is not valid percent-encoded UTF-8", "invalid_path")
    // the caller is known first (a2a.ts does the same), so one without a valid credential is told
    // 401 whatever the node's load
    const authenticated = await options.run(authenticate({ authorization: req.headers.authorization, cookie: req.headers.cookie }))
    if (Exit.isFailure(authenticated)) return replyForFailure(authenticated.cause)
    // then a full node answers before it spends more on the request (its body, its reads): a burst
    // past the bound costs the node little, and what it runs stays quick (docs/decisions.md,
    // "Admission control"); the place itself is taken behind the checkpoint, as the turn is prepared
    const full = await options.run(checkTurnAdmission)
    if (Exit.isFailure(full)) return replyForFailure(full.cause)
    const request = {
      authorization: undefined,
      principal: authenticated.value,
      surface: "api" as const,
      capability: CAPABILITY_OF[mode],
      path: { orgSlug, workspaceSlug },
      input: mode === "ui" || mode === "agui" ? jsonBody(req) : chatInput(req, mode),
      idempotencyKey: req.headers["idempotency-key"],
      trace: req
    }
    // the streams frame the started turn's events; the ask route answers with its outcome
    const exit = await options.run<StartedTurn | TurnOutcome | UiChatAnswer | AgUiAnswer, unknown>(mode === "ask" ? askAndAwait(request) : invoke(request))
    if (Exit.isFailure(exit)) return refusal(exit.cause)
    // the turn runs to its end whether or not the client stays (spec 3.2)
    if (mode === "stream") {
      ;(exit.value as StartedTurn).listen(streamSink(res))
      return Streaming
    }
    if (mode === "ui") {
      uiSink(res, exit.value as UiChatAnswer)
      return Streaming
    }
    if (mode === "agui") {
      // the cancel route's capability, invoked as the caller
      const cancel = (turnId: string) =>
        void options.run(
          invoke({ ...request, capability: "assistant.turn.cancel", input: Effect.succeed({ turnId }), idempotencyKey: undefined }).pipe(
            Effect.catchAllCause((cause) => Effect.logError(`agui: cancelling turn ${turnId} of an aborted run failed`, cause))
          )
        )
      agUiSink(res, exit.value as AgUiAnswer, cancel)
      return Streaming
    }
    const outcome = exit.value as TurnOutcome
    return "result" in outcome ? { status: 200, json: encodeResult(outcome.result) } : askFailure(outcome.failure)
  }
  route(app, "post", "/v1/:orgSlug/:workspaceSlug/chat/stream", handler("stream"), options.limits)
  route(app, "post", "/v1/:orgSlug/:workspaceSlug/assistant/ask", handler("ask"), options.limits)
  route(app, "get", "/v1/:orgSlug/:workspaceSlug/chat/turns/:turnId/stream", resumeHandler(options, "path"), options.limits)
  route(app, "post", "/v1/:orgSlug/:workspaceSlug/chat/turns/stream", resumeHandler(options, "body"), options.limits)
  route(app, "post", "/v1/:orgSlug/:workspaceSlug/chat/ui", handler("ui"), options.limits)
  route(app, "post", "/v1/:orgSlug/:workspaceSlug/agui", handler("agui"), options.limits)
  route(app, "post", "/v1/:orgSlug/:workspaceSlug/agui/connect", chatIdHandler(options, "assistant.chat.agui.connect", "body", answerAgUiConnect), options.limits)
  route(app, "get", "/v1/:orgSlug/:workspaceSlug/chat/ui/:id/stream", chatIdHandler(options, "assistant.chat.ui.stream", "path", answerUiResume), options.limits)
  route(app, "post", "/v1/:orgSlug/:workspaceSlug/chat/ui/stream", chatIdHandler(options, "assistant.chat.ui.stream", "body", answerUiResume), options.limits)
  route(app, "post", "/v1/:orgSlug/:workspaceSlug/chat/ui/:id/stop", chatIdHandler(options, "assistant.chat.ui.stop", "path", (value) => ({ status: 200, json: value })), options.limits)
}
