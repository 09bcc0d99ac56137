import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"

describe("CORS_ORIGINS", () => {
  it("is none by default", () => {
    expect(loadConfig({}).corsOrigins).toEqual([])
  })

  it("holds origins as a browser sends them, and `*`", () => {
    const config = loadConfig({ CORS_ORIGINS: " https://Inspector.Example:443/ , http://localhost:6274,*," })
    expect(config.corsOrigins).toEqual(["https://inspector.example", "http://localhost:6274", "*"])
  })

  it("refuses what no browser sends as an Origin", () => {
    for (const entry of ["inspector.example", "https://app.example/path", "https://app.example?x=1", "https://user@app.example", "null", "file:///tmp"]) {
      expect(() => loadConfig({ CORS_ORIGINS: entry }), entry).toThrow(/CORS_ORIGINS/)
    }
  })
})

describe("AUTH_TOKEN_ENCRYPTION_KEY", () => {
  it("is unset by default: no master key", () => {
    expect(loadConfig({}).authTokenEncryptionKey).toBeUndefined()
    expect(loadConfig({ AUTH_TOKEN_ENCRYPTION_KEY: "" }).authTokenEncryptionKey).toBeUndefined()
  })

  it("is the 32 bytes its base64 names", () => {
    const key = Buffer.alloc(32, 7)
    expect(loadConfig({ AUTH_TOKEN_ENCRYPTION_KEY: key.toString("base64") }).authTokenEncryptionKey).toEqual(key)
    expect(loadConfig({ AUTH_TOKEN_ENCRYPTION_KEY: key.toString("base64url") }).authTokenEncryptionKey).toEqual(key)
  })

  it("refuses anything but 256 bits of base64, without echoing it", () => {
    for (const value of [Buffer.alloc(16, 1).toString("base64"), Buffer.alloc(33, 1).toString("base64"), "not base64 at all!"]) {
      expect(() => loadConfig({ AUTH_TOKEN_ENCRYPTION_KEY: value }), value).toThrow(/AUTH_TOKEN_ENCRYPTION_KEY must be the base64 of 32 bytes/)
      try {
        loadConfig({ AUTH_TOKEN_ENCRYPTION_KEY: value })
      } catch (error) {
        expect(String(error)).not.toContain(value)
      }
    }
  })
})

describe("SMTP_URL and MAIL_FROM", () => {
  it("send no email by default", () => {
    expect(loadConfig({}).mail.smtpUrl).toBeUndefined()
  })

  it("take an smtp or smtps URL and a sender", () => {
    const config = loadConfig({ SMTP_URL: "smtp://user:pass@127.0.0.1:2525", MAIL_FROM: "Alerts <alerts@example.com>" })
    expect(config.mail).toEqual({ smtpUrl: "smtp://user:pass@127.0.0.1:2525", from: "Alerts <alerts@example.com>" })
  })

  it("refuse another scheme without echoing the URL (it may hold a password)", () => {
    expect(() => loadConfig({ SMTP_URL: "http://user:secret@mail" })).toThrow(/SMTP_URL must be an smtp/)
    expect(() => loadConfig({ SMTP_URL: "http://user:secret@mail" })).not.toThrow(/secret/)
  })
})

describe("KEY_RATE_LIMIT_PER_MINUTE and KEY_RATE_LIMIT_SLICE", () => {
  it("let a key start 6,000 turns a minute by default, taken a second's worth at a time", () => {
    const { assistant } = loadConfig({})
    expect([assistant.keyRateLimitPerMinute, assistant.keyRateLimitSlice]).toEqual([6000, 100])
  })

  it("take the slice from the minute unless it is named", () => {
    expect(loadConfig({ KEY_RATE_LIMIT_PER_MINUTE: "90" }).assistant.keyRateLimitSlice).toBe(2)
    expect(loadConfig({ KEY_RATE_LIMIT_PER_MINUTE: "90", KEY_RATE_LIMIT_SLICE: "30" }).assistant.keyRateLimitSlice).toBe(30)
  })

  it("refuse what is not a positive integer", () => {
    expect(() => loadConfig({ KEY_RATE_LIMIT_PER_MINUTE: "0" })).toThrow(/KEY_RATE_LIMIT_PER_MINUTE/)
    expect(() => loadConfig({ KEY_RATE_LIMIT_SLICE: "1.5" })).toThrow(/KEY_RATE_LIMIT_SLICE/)
  })
})

describe("ADMISSION_*", () => {
  it("bounds what a node holds by default, and each bound is set apart", () => {
    expect(loadConfig({}).admission).toEqual({ maxTurnsStarting: 200, maxTurnsRunning: 2_000, maxOpenStreams: 3_000, maxQueuedCommands: 8_192 })
    expect(loadConfig({ ADMISSION_MAX_TURNS_STARTING: "7", ADMISSION_MAX_TURNS_RUNNING: "8", ADMISSION_MAX_OPEN_STREAMS: "9", ADMISSION_MAX_QUEUED_COMMANDS: "10" }).admission)
      .toEqual({ maxTurnsStarting: 7, maxTurnsRunning: 8, maxOpenStreams: 9, maxQueuedCommands: 10 })
  })

  it("refuses a bound that is not a positive integer", () => {
    for (const name of ["ADMISSION_MAX_TURNS_STARTING", "ADMISSION_MAX_TURNS_RUNNING", "ADMISSION_MAX_OPEN_STREAMS", "ADMISSION_MAX_QUEUED_COMMANDS"]) {
      for (const value of ["0", "-3", "1.5", "many"]) expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(name))
    }
  })
})

describe("KAFKA_APPEND_LINGER_MS", () => {
  it("lets a partition's transaction wait 2 ms for company by default, or none at 0", () => {
    expect(loadConfig({}).kafkaAppendLingerMs).toBe(2)
    expect(loadConfig({ KAFKA_APPEND_LINGER_MS: "0" }).kafkaAppendLingerMs).toBe(0)
    expect(loadConfig({ KAFKA_APPEND_LINGER_MS: "5" }).kafkaAppendLingerMs).toBe(5)
  })

  it("refuses what is not a whole number of milliseconds", () => {
    for (const value of ["-1", "0.5", "soon"]) expect(() => loadConfig({ KAFKA_APPEND_LINGER_MS: value }), value).toThrow(/KAFKA_APPEND_LINGER_MS/)
  })
})
