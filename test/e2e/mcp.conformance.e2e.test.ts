/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode) against a
 * real node's /mcp, every server scenario. The suite's client sends no credential, so a loopback
 * proxy adds the workspace key and passes everything else (Host and Origin included) unchanged.
 *
 * The scenarios of what the endpoint offers pass. The others are listed with why they fail, and
 * the list is exact: a scenario that starts passing, or a new one, fails this test until the list
 * is brought up to date (docs/decisions.md, "MCP conformance").
 */
import { execFile } from "node:child_process"
import { mkdtemp, readdir, readFile } from "node:fs/promises"
import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mcpInitialize } from "../support/mcp.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

const ROOT = path.resolve(import.meta.dirname, "../..")
const SUITE = path.join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js")
const NODE20 = path.join(ROOT, "scripts/mcp-conformance/node20.mjs")

let node: TestNode
let proxy: Server

beforeAll(async () => {
  node = await startTestNode()
  const target = new URL(node.baseUrl)
  proxy = createServer((req, res) => {
    const upstream = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${node.bootstrap.workspaceKey}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      }
    )
    upstream.on("error", () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
})

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve))
  await node?.stop()
})

interface Check {
  readonly id: string
  readonly status: string
  readonly errorMessage?: string
}

const runSuite = async () => {
  const out = await mkdtemp(path.join(tmpdir(), "svc-mcp-conformance-"))
  const url = `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`
  const printed = await new Promise<string>((resolve) =>
    execFile(process.execPath, ["--import", NODE20, SUITE, "server", "--url", url, "--suite", "all", "-o", out], { timeout: 240_000, maxBuffer: 16 << 20 }, (_error, stdout, stderr) =>
      resolve(stdout + stderr)
    )
  )
  const results = new Map<string, ReadonlyArray<Check>>()
  for (const entry of await readdir(out, { recursive: true })) {
    if (!entry.endsWith("checks.json")) continue
    results.set(path.dirname(entry), JSON.parse(await readFile(path.join(out, entry), "utf8")))
  }
  return { printed, results }
}

/** Scenarios that need the suite's own fixture tools (`test_simple_text`, ...), which only its reference server has. */
const FIXTURE_TOOLS = [
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-error",
  "tools-call-with-progress",
  "tools-call-sampling",
  "tools-call-elicitation",
  "json-schema-2020-12",
  "elicitation-sep1034-defaults",
  "elicitation-sep1330-enums"
]
/** Scenarios of capabilities the endpoint does not offer (its `initialize` names tools only): -32601 Method not found. */
const NOT_OFFERED = [
  "logging-set-level",
  "tools-call-with-logging",
  "completion-complete",
  "resources-list",
  "resources-read-text",
  "resources-read-binary",
  "resources-templates-read",
  "resources-subscribe",
  "resources-unsubscribe",
  "prompts-list",
  "prompts-get-simple",
  "prompts-get-with-args",
  "prompts-get-embedded-resource",
  "prompts-get-with-image"
]
/** Scenarios that warn only: the endpoint is stateless and gives no Mcp-Session-Id. */
const STATELESS = ["server-sse-polling", "server-sse-multiple-streams"]
/** What the endpoint offers, every check passing. */
const OFFERED = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"]

/** A scenario's checks by scenario name (the suite writes `server-<scenario>-<time>/checks.json`). */
const byScenario = (results: ReadonlyMap<string, ReadonlyArray<Check>>) =>
  new Map([...results].map(([dir, checks]) => [dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, ""), checks]))

describe("the MCP conformance suite, every server scenario", () => {
  it("passes every scenario of what /mcp offers; fails only the listed ones, each for its listed reason", { timeout: 300_000 }, async () => {
    const { printed, results } = await runSuite()
    const scenarios = byScenario(results)
    const outcome = (name: string) => scenarios.get(name)?.map((c) => c.status) ?? []
    expect([...scenarios.keys()].sort(), printed).toEqual([...OFFERED, ...FIXTURE_TOOLS, ...NOT_OFFERED, ...STATELESS].sort())

    for (const name of OFFERED) expect(outcome(name).length, name).toBeGreaterThan(0)
    for (const name of OFFERED) expect(outcome(name).every((s) => s === "SUCCESS"), `${name}: ${JSON.stringify(scenarios.get(name))}`).toBe(true)
    const rebinding = Object.fromEntries(scenarios.get("dns-rebinding-protection")!.map((c) => [c.id, c.status]))
    expect(rebinding).toEqual({ "localhost-host-rebinding-rejected": "SUCCESS", "localhost-host-valid-accepted": "SUCCESS" })

    const failure = (name: string) => scenarios.get(name)!.find((c) => c.status === "FAILURE")?.errorMessage ?? ""
    for (const name of FIXTURE_TOOLS) expect(failure(name), name).toMatch(/Unknown tool: test_|Tool 'json_schema_2020_12_tool' not found/)
    for (const name of NOT_OFFERED) expect(failure(name), name).toContain("Method not found")
    for (const name of STATELESS) {
      expect(outcome(name), name).not.toContain("FAILURE")
      expect(scenarios.get(name)!.find((c) => c.status === "WARNING")?.id, name).toMatch(/-session$/)
    }
  })

  it("advertises tools only, so the scenarios of other capabilities are not the endpoint's", async () => {
    const answer = await mcpInitialize(node.baseUrl, { authorization: `Bearer ${node.bootstrap.workspaceKey}` })
    expect(answer.status).toBe(200)
    const text = await answer.text()
    const body = JSON.parse(text.startsWith("{") ? text : text.slice(text.indexOf("data:") + 5))
    expect(Object.keys(body.result.capabilities).sort()).toEqual(["tools"])
  })
})
