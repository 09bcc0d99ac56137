/**
 * The node's log: one JSON object per line on stdout (`LOG_FORMAT=pretty`: one readable line),
 * written alike by Effect's logger (installed in the node's runtime) and by plain callbacks (the
 * gateway's request lines). Every line passes one redaction first: fields named like a secret and
 * strings shaped like a token are replaced, whatever a caller hands in.
 */
import { Cause, Effect, FiberRef, HashSet, Logger, LogLevel, Option, ParseResult } from "effect"

export type LogLevelName = "trace" | "debug" | "info" | "warn" | "error" | "fatal"
export type LogFormat = "json" | "pretty"

export interface LoggingSettings {
  /** The least severe level written; `none` writes nothing. */
  readonly level: LogLevelName | "none"
  readonly format: LogFormat
}

export type LogFields = Readonly<Record<string, unknown>>

/** What a line says of an error: its tag and message, a defect's stack; never the input it failed on. */
export interface LoggedError {
  readonly tag: string
  readonly message?: string
  readonly stack?: string
}

export interface NodeLog {
  /** The least severe level it writes. */
  readonly level: LogLevel.LogLevel
  /** `time`: when it happened, if not now. */
  readonly write: (level: LogLevel.LogLevel, message: string, fields?: LogFields, time?: Date) => void
  readonly info: (message: string, fields?: LogFields) => void
  readonly warn: (message: string, fields?: LogFields) => void
  readonly error: (message: string, fields?: LogFields) => void
}

const LEVELS: Readonly<Record<LoggingSettings["level"], LogLevel.LogLevel>> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

export const logLevelNames: ReadonlyArray<LoggingSettings["level"]> = Object.keys(LEVELS) as Array<LoggingSettings["level"]>

const NAMES: Readonly<Record<LogLevel.Literal, string>> = {
  All: "trace",
  Trace: "trace",
  Debug: "debug",
  Info: "info",
  Warning: "warn",
  Error: "error",
  Fatal: "fatal",
  None: "none"
}

// --- redaction --------------------------------------------------------------------------------

const REDACTED = "[redacted]"
// the platform's secret tokens (API keys, session cookies, device codes: src/identity/ApiKeyToken.ts); short
// names with the prefix (`svc_session`, the purpose `svc_host_v1`) stay readable
const TOKEN = /(?<![A-Za-z0-9_-])(svc|ses|dvc)_[A-Za-z0-9_-]{16,}/g
// RFC 6750's b64token (and Basic's base64): `Bearer <API key>` in a message stays readable
const CREDENTIAL_SCHEME = /\b(bearer|basic)\s+[A-Za-z0-9._~+/-]+=*/gi
// on the name lower-cased with anything but letters dropped: `rawKey`, `client_secret`, `Set-Cookie`
const SECRET_NAME = /secret|password|passwd|passphrase|token|authorization|cookie|credential|devicecode|usercode|totp|verifier|key$/
const MAX_DEPTH = 6

const SCHEME_NAME = /bearer|basic/i

// cheap tests first: a request line's strings are mostly ids and routes, with neither a token nor a scheme
export const redactText = (text: string): string => {
  let out = text
  if (out.includes("svc_") || out.includes("ses_") || out.includes("dvc_")) out = out.replace(TOKEN, `$1_${REDACTED}`)
  if (SCHEME_NAME.test(out)) out = out.replace(CREDENTIAL_SCHEME, `$1 ${REDACTED}`)
  return out
}

const isSecretName = (name: string): boolean => SECRET_NAME.test(name.toLowerCase().replace(/[^a-z]/g, ""))

/** The value with secrets replaced: under a secret's name anything but a number or boolean (a count of tokens stays), and every token-shaped string. */
export const redact = (value: unknown, depth = 0): unknown => {
  if (typeof value === "string") return redactText(value)
  if (value === null || typeof value !== "object") return typeof value === "bigint" ? String(value) : value
  if (depth >= MAX_DEPTH) return "[nested]"
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1))
  if (value instanceof Error) return errorFields(value)
  if (value instanceof Date) return value.toISOString()
  const out: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(value)) out[name] = redactField(name, field, depth + 1)
  return out
}

const redactField = (name: string, value: unknown, depth: number): unknown =>
  isSecretName(name) && value !== null && value !== undefined && typeof value !== "number" && typeof value !== "boolean" ? REDACTED : redact(value, depth)

// --- errors -----------------------------------------------------------------------------------

const tagOf = (value: object): string | undefined => ("_tag" in value && typeof value._tag === "string" ? value._tag : undefined)

/**
 * An error as a line states it. A schema's parse error names where and what kind of issue, not the
 * values (its message quotes them); an untagged error is a defect, and its stack says where.
 */
export const errorFields = (error: unknown): LoggedError => {
  if (ParseResult.isParseError(error)) {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => `${issue._tag} at [${issue.path.join(".")}]`)
    return { tag: "ParseError", message: issues.join("; ") }
  }
  if (error instanceof Error) {
    const tag = tagOf(error)
    return tag === undefined ? { tag: error.name, message: error.message, stack: error.stack } : { tag, message: error.message }
  }
  if (typeof error === "object" && error !== null) {
    const message = "message" in error && typeof error.message === "string" ? error.message : undefined
    return { tag: tagOf(error) ?? "object", ...(message === undefined ? {} : { message }) }
  }
  return { tag: typeof error, message: String(error) }
}

/** The failure a cause holds (its first, or the defect), as a line states it. */
export const causeFields = (cause: Cause.Cause<unknown>): LoggedError =>
  Cause.isInterruptedOnly(cause) ? { tag: "Interrupted" } : errorFields(Cause.squash(cause))

// --- lines ------------------------------------------------------------------------------------

const RESERVED = new Set(["time", "level", "message", "node"])

interface Line {
  readonly time: Date
  readonly level: LogLevel.LogLevel
  readonly message: string
  readonly node: string | undefined
  readonly fields: LogFields | undefined
}

const jsonLine = ({ time, level, message, node, fields }: Line): string => {
  const out: Record<string, unknown> = { time: time.toISOString(), level: NAMES[level._tag], message: redactText(message) }
  if (node !== undefined) out.node = node
  if (fields !== undefined) for (const name in fields) if (!RESERVED.has(name) && fields[name] !== undefined) out[name] = redactField(name, fields[name], 0)
  return JSON.stringify(out)
}

const prettyValue = (value: unknown): string => (typeof value === "string" && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value))

const prettyLine = (line: Line): string => {
  const { time, level, message, node, ...fields } = JSON.parse(jsonLine(line)) as Record<string, unknown>
  let out = `${time} ${String(level).toUpperCase().padEnd(5)} ${message}`
  if (node !== undefined) out += ` node=${prettyValue(node)}`
  for (const name in fields) out += ` ${name}=${prettyValue(fields[name])}`
  return out
}

export interface NodeLogOptions extends LoggingSettings {
  /** Named on every line: which node of a cluster wrote it. */
  readonly node?: string
  /** Where lines go; stdout by default (tests collect them). */
  readonly sink?: (line: string) => void
}

const stdout = (line: string): void => {
  process.stdout.write(`${line}\n`)
}

export const makeNodeLog = (options: NodeLogOptions): NodeLog => {
  const minimum = LEVELS[options.level]
  const format = options.format === "pretty" ? prettyLine : jsonLine
  const sink = options.sink ?? stdout
  const node = options.node
  const write = (level: LogLevel.LogLevel, message: string, fields?: LogFields, time = new Date()): void => {
    if (minimum === LogLevel.None || LogLevel.lessThan(level, minimum)) return
    sink(format({ time, level, message, node, fields }))
  }
  return {
    level: minimum,
    write,
    info: (message, fields) => write(LogLevel.Info, message, fields),
    warn: (message, fields) => write(LogLevel.Warning, message, fields),
    error: (message, fields) => write(LogLevel.Error, message, fields)
  }
}

/**
 * Effect's logger over a node log. The message's strings make the line's message; an error among
 * them (or the log's cause) becomes `error`, anything else `detail`; annotations are fields.
 */
const effectLogger = (log: NodeLog) =>
  Logger.make<unknown, void>(({ annotations, cause, date, logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    const texts: Array<string> = []
    const fields: Record<string, unknown> = {}
    for (const part of parts) {
      if (typeof part === "string" || typeof part === "number" || typeof part === "boolean") texts.push(String(part))
      else if (part instanceof Error || ParseResult.isParseError(part)) fields.error = errorFields(part)
      else if (part !== undefined) fields.detail = part
    }
    for (const [name, value] of annotations) fields[name] = value
    if (!Cause.isEmpty(cause)) fields.error = causeFields(cause)
    log.write(logLevel, texts.join(" "), fields, date)
  })

/**
 * Runs `effect` (and every fiber it starts, and any runtime it captures) with the node log as its
 * logger, in place of Effect's default, at the log's level. A run that ends in failure is not
 * logged by Effect itself: the gateway runs each request that way, and its line tells the outcome.
 */
export const withNodeLog =
  (log: NodeLog) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(
      Effect.locally(FiberRef.currentMinimumLogLevel, log.level),
      Effect.locally(FiberRef.unhandledErrorLogLevel, Option.none()),
      Effect.locallyWith(FiberRef.currentLoggers, (loggers) => HashSet.add(HashSet.remove(loggers, Logger.defaultLogger), effectLogger(log)))
    )
