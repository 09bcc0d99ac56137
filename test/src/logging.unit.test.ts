import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { mintApiKey, mintToken } from "../../src/identity/ApiKeyToken.ts"
import { loadConfig } from "../../src/platform/Config.ts"
import { makeNodeLog, type LoggingSettings, withNodeLog } from "../../src/platform/Logging.ts"

const collect = (settings: LoggingSettings = { level: "info", format: "json" }) => {
  const lines: Array<string> = []
  const log = makeNodeLog({ ...settings, node: "node-a", sink: (line) => lines.push(line) })
  return { log, lines, parsed: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) }
}

class Refused extends Schema.TaggedError<Refused>()("Refused", { message: Schema.String }) {}

describe("node log lines", () => {
  it("are one JSON object each: time, level, message, node, then the fields", () => {
    const { log, lines, parsed } = collect()
    log.info("request", { requestId: "r1", status: 200, durationMs: 1.5 })
    expect(lines).toHaveLength(1)
    expect(Object.keys(parsed()[0])).toEqual(["time", "level", "message", "node", "requestId", "status", "durationMs"])
    expect(parsed()[0]).toMatchObject({ level: "info", message: "request", node: "node-a", requestId: "r1", status: 200 })
    expect(Date.parse(parsed()[0].time as string)).not.toBeNaN()
  })

  it("below the level are not written; `none` writes nothing", () => {
    const warn = collect({ level: "warn", format: "json" })
    warn.log.info("quiet")
    warn.log.warn("loud")
    expect(warn.parsed().map((l) => l.message)).toEqual(["loud"])
    const none = collect({ level: "none", format: "json" })
    none.log.error("nothing")
    expect(none.lines).toEqual([])
  })

  it("pretty: one readable line", () => {
    const { log, lines } = collect({ level: "info", format: "pretty" })
    log.warn("slow", { route: "/v1/auth/whoami", note: "two words" })
    expect(lines[0]).toMatch(/^\S+ WARN  slow node=node-a route=\/v1\/auth\/whoami note="two words"$/)
  })
})

describe("redaction", () => {
  it("replaces fields named like a secret, token-shaped strings anywhere, and credentials after an auth scheme", () => {
    const { log, lines } = collect()
    const key = mintApiKey().raw
    const session = mintToken("ses_").raw
    const device = mintToken("dvc_").raw
    log.error(`presented ${key}`, {
      password: "hunter2",
      rawKey: "whatever",
      clientSecret: "shh",
      authorization: "Bearer abc.def",
      cookie: `svc_session=${session}`,
      nested: { deep: [{ totpSecret: "JBSWY3DP", note: `device ${device}` }] },
      header: "Basic dXNlcjpwYXNz",
      hint: "send Authorization: Bearer <API key>",
      inputTokens: 12,
      keyId: "aky_1",
      purpose: "svc_host_v1"
    })
    const printed = lines.join("\n")
    for (const secret of [key, session, device, "hunter2", "whatever", "shh", "abc.def", "JBSWY3DP", "dXNlcjpwYXNz"]) expect(printed).not.toContain(secret)
    expect(JSON.parse(lines[0])).toMatchObject({
      message: "presented svc_[redacted]",
      password: "[redacted]",
      nested: { deep: [{ totpSecret: "[redacted]", note: "device dvc_[redacted]" }] },
      header: "Basic [redacted]",
      hint: "send Authorization: Bearer <API key>",
      inputTokens: 12,
      keyId: "aky_1",
      purpose: "svc_host_v1"
    })
  })
})

describe("Effect's logger, replaced by the node log", () => {
  it("writes Effect's logs as lines: strings the message, an error its tag and message, annotations as fields, at the log's level", () => {
    const { log, parsed } = collect({ level: "debug", format: "json" })
    Effect.runSync(
      Effect.gen(function* () {
        yield* Effect.logDebug("catching up", 3)
        yield* Effect.logWarning("reply failed", new Refused({ message: "no owner" }))
        yield* Effect.logTrace("too fine")
        yield* Effect.logError("sweep failed").pipe(Effect.annotateLogs({ partition: 2 }))
      }).pipe(withNodeLog(log))
    )
    expect(parsed().map(({ time: _time, ...line }) => line)).toEqual([
      { level: "debug", message: "catching up 3", node: "node-a" },
      { level: "warn", message: "reply failed", node: "node-a", error: { tag: "Refused", message: "no owner" } },
      { level: "error", message: "sweep failed", node: "node-a", partition: 2 }
    ])
  })

  it("states a defect with its stack, a parse error without the values it quotes", () => {
    const { log, parsed } = collect()
    Effect.runSync(
      Effect.gen(function* () {
        yield* Effect.logError(new TypeError("boom"))
        const parsed = yield* Schema.decodeUnknown(Schema.Struct({ password: Schema.Number }))({ password: "hunter2" }).pipe(Effect.flip)
        yield* Effect.logError("decode failed", parsed)
      }).pipe(withNodeLog(log))
    )
    const [defect, parse] = parsed()
    expect(defect.error).toMatchObject({ tag: "TypeError", message: "boom", stack: expect.stringContaining("TypeError: boom") })
    expect(parse.error).toEqual({ tag: "ParseError", message: "Type at [password]" })
  })
})

describe("LOG_LEVEL and LOG_FORMAT", () => {
  it("default to info and json, and refuse anything else", () => {
    expect(loadConfig({}).logging).toEqual({ level: "info", format: "json" })
    expect(loadConfig({ LOG_LEVEL: "DEBUG", LOG_FORMAT: "pretty" }).logging).toEqual({ level: "debug", format: "pretty" })
    expect(() => loadConfig({ LOG_LEVEL: "verbose" })).toThrow(/LOG_LEVEL/)
    expect(() => loadConfig({ LOG_FORMAT: "logfmt" })).toThrow(/LOG_FORMAT/)
  })
})
