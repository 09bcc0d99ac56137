/**
 * Server-sent events over a uWS response: the stream headers, `data:` and named events, a keep-alive
 * comment while quiet, and backpressure. The producer never waits on the client: while uWS reports
 * backpressure, writes queue here in order and onWritable drains them; once the client is gone,
 * writes are dropped.
 */
import type uWS from "uWebSockets.js"
import { errorFields, type LoggedError } from "../src/platform/Logging.ts"
import { routeHeaders, type StreamClosed, takeOverStream } from "./http.ts"

export const DEFAULT_KEEP_ALIVE_MS = 15_000

export interface SseOptions {
  /** A `: keep-alive` comment goes out after this long without any write. */
  readonly keepAliveMs?: number
  /** Sent after the three stream headers. */
  readonly headers?: Record<string, string>
}

/** `ended`: end() was called; `aborted`: the client went away first. */
export type SseCloseReason = "ended" | "aborted"

export interface SseWriter {
  /** `data: <JSON>`, after `id: <id>` when given. */
  data(json: unknown, id?: string): void
  /** `data: <text>`, the text as it is (one `data:` line per line of it). */
  dataText(text: string): void
  /** `event: <name>` then `data: <data>`, one `data:` line per line of `data`; after `id: <id>` when given. */
  event(name: string, data: string, id?: string): void
  comment(text: string): void
  /** An event a protocol's own encoder framed (`data:` lines and the blank line), sent as it is. */
  framed(event: string): void
  /** Flushes what is queued, then ends the response. */
  end(): void
  readonly closed: boolean
  /** Runs once, on end() or when the client goes away; at once if the writer is already closed. */
  onClose(callback: (reason: SseCloseReason) => void): void
  /** Resolves when nothing is queued in the writer (or the client is gone). */
  drained(): Promise<void>
  /** How many times uWS reported backpressure (res.write returned false). */
  readonly backpressureEvents: number
}

const KEEP_ALIVE = ": keep-alive\n\n"
const LINE_BREAK = /\r\n|\r|\n/

const prefixLines = (prefix: string, text: string): string => {
  let out = ""
  for (const line of text.split(LINE_BREAK)) out += `${prefix}${line}\n`
  return out
}

/** The `id:` line of an event; none without an id. */
const idLine = (id: string | undefined): string => {
  if (id === undefined) return ""
  if (LINE_BREAK.test(id) || id.includes("\0")) throw new TypeError("An SSE event id cannot contain a line break or NUL")
  return `id: ${id}\n`
}

/**
 * Writes status 200, the stream headers and those route() adds to every response (CORS). uWS
 * sends the end of the header block with the first body write, so a client sees the headers with
 * the first event or keep-alive.
 */
export const openSse = (res: uWS.HttpResponse, options: SseOptions = {}): SseWriter => new Writer(res, options)

class Writer implements SseWriter {
  backpressureEvents = 0
  #res: uWS.HttpResponse
  #closed = false
  #closeReason: SseCloseReason = "ended"
  /** The response may be written to: not ended and the client still there. */
  #live = true
  #ending = false
  /** uWS reported backpressure; writes queue until onWritable. */
  #blocked = false
  #queue: Array<string> = []
  #head = 0
  #keepAlive: NodeJS.Timeout | undefined = undefined
  #closeCallbacks: Array<(reason: SseCloseReason) => void> = []
  #drainWaiters: Array<() => void> = []
  #streamClosed: StreamClosed | undefined = undefined
  /** Sent to the client so far, what is queued included (end() flushes it after the close). */
  #bytes = 0

  constructor(res: uWS.HttpResponse, options: SseOptions) {
    this.#res = res
    this.#streamClosed = takeOverStream(res, () => this.#aborted())
    if (this.#streamClosed === undefined) {
      this.#live = false
      this.#closed = true
      this.#closeReason = "aborted"
      return
    }
    res.onWritable(() => this.#writable())
    res.cork(() => {
      res.writeStatus("200 OK")
      res.writeHeader("content-type", "text/event-stream")
      res.writeHeader("cache-control", "no-cache")
      res.writeHeader("connection", "keep-alive")
      const common = routeHeaders(res)
      if (common !== undefined) for (const name in common) res.writeHeader(name, common[name])
      const headers = options.headers
      if (headers !== undefined) for (const name in headers) res.writeHeader(name, headers[name])
    })
    this.#keepAlive = setTimeout(this.#onQuiet, options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS).unref()
  }

  get closed(): boolean {
    return this.#closed
  }

  data(json: unknown, id?: string): void {
    this.#send(`${idLine(id)}data: ${JSON.stringify(json)}\n\n`)
  }

  dataText(text: string): void {
    this.#send(`${prefixLines("data: ", text)}\n`)
  }

  event(name: string, data: string, id?: string): void {
    if (LINE_BREAK.test(name)) throw new TypeError("An SSE event name cannot contain a line break")
    this.#send(`${idLine(id)}event: ${name}\n${prefixLines("data: ", data)}\n`)
  }

  framed(event: string): void {
    this.#send(event)
  }

  comment(text: string): void {
    this.#send(`${prefixLines(": ", text)}\n`)
  }

  end(): void {
    if (this.#closed) return
    this.#ending = true
    this.#close("ended")
    if (!this.#blocked) this.#res.cork(this.#flush)
  }

  onClose(callback: (reason: SseCloseReason) => void): void {
    if (this.#closed) callback(this.#closeReason)
    else this.#closeCallbacks.push(callback)
  }

  drained(): Promise<void> {
    // Unblocked means the queue is empty: every send flushes it at once unless uWS pushes back.
    if (!this.#live || !this.#blocked) return Promise.resolve()
    return new Promise((resolve) => this.#drainWaiters.push(resolve))
  }

  #send(chunk: string): void {
    if (this.#closed) return
    this.#keepAlive?.refresh()
    this.#bytes += Buffer.byteLength(chunk)
    this.#queue.push(chunk)
    if (!this.#blocked) this.#res.cork(this.#flush)
  }

  /** Runs inside res.cork: writes queued chunks in order until uWS pushes back. */
  readonly #flush = (): void => {
    const queue = this.#queue
    while (this.#head < queue.length) {
      const chunk = queue[this.#head]
      queue[this.#head++] = ""
      // false: uWS kept the chunk in its own buffer; stop here and let onWritable resume.
      if (!this.#res.write(chunk)) {
        this.#blocked = true
        this.backpressureEvents++
        return
      }
    }
    queue.length = 0
    this.#head = 0
    if (this.#ending) {
      this.#live = false
      this.#res.end()
    }
    this.#settleDrainWaiters()
  }

  #writable(): boolean {
    this.#blocked = false
    // Cork even with nothing queued: while an onWritable handler is set, uWS leaves draining its own
    // buffer to us, and the uncork at the end of res.cork is what flushes it.
    this.#res.cork(this.#flush)
    return !this.#blocked
  }

  readonly #onQuiet = (): void => {
    // A blocked stream is busy, not quiet; a comment would only queue behind the backlog.
    if (this.#blocked) this.#keepAlive?.refresh()
    else this.#send(KEEP_ALIVE)
  }

  #aborted(): void {
    this.#live = false
    this.#blocked = false
    this.#queue = []
    this.#head = 0
    if (!this.#closed) this.#close("aborted")
    this.#settleDrainWaiters()
  }

  #close(reason: SseCloseReason): void {
    this.#closed = true
    this.#closeReason = reason
    clearTimeout(this.#keepAlive)
    const callbacks = this.#closeCallbacks
    this.#closeCallbacks = []
    // a callback that throws is a bug, stated on the stream's line; the others still run
    let failure: LoggedError | undefined
    for (const callback of callbacks) {
      try {
        callback(reason)
      } catch (cause) {
        failure ??= errorFields(cause)
      }
    }
    this.#streamClosed?.(reason, this.#bytes, failure)
  }

  #settleDrainWaiters(): void {
    if (this.#drainWaiters.length === 0) return
    const waiters = this.#drainWaiters
    this.#drainWaiters = []
    for (const resolve of waiters) resolve()
  }
}
