import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/Config.ts"

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
