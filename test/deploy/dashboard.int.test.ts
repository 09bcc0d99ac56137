/**
 * The Grafana dashboard (`deploy/grafana/svc.json`) against a real node's `GET /metrics`: every
 * metric a panel's query or a variable names is one the node exports, with the suffix its type
 * allows, so a renamed metric fails here rather than leaving a panel empty. Beside it, the metrics
 * only the dashboard reads yet: rebalances and their pause as the node starts, and a drain.
 */
import { readFile } from "node:fs/promises"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type Family, histogramSeries, parseExposition, SUFFIXES } from "../support/prometheus.ts"
import { call } from "../e2e/client.ts"

const DASHBOARD = new URL("../../deploy/grafana/svc.json", import.meta.url)
const PARTITIONS = 4

interface Target {
  readonly refId: string
  readonly expr: string
}

interface Panel {
  readonly type: string
  readonly title: string
  readonly targets?: ReadonlyArray<Target>
}

interface Dashboard {
  readonly uid: string
  readonly title: string
  readonly schemaVersion: number
  readonly panels: ReadonlyArray<Panel>
  readonly templating: { readonly list: ReadonlyArray<{ readonly name: string; readonly definition?: string }> }
}

const KEYWORDS = new Set(["group_left", "group_right", "and", "or", "unless", "bool", "offset"])

/**
 * The metric names a PromQL expression reads: the names left once strings, label matchers, ranges
 * and grouping clauses are taken out, but functions and aggregations (a name before a
 * parenthesis) and keywords.
 */
const metricNames = (expr: string): ReadonlyArray<string> => {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, "")
  return [...bare.matchAll(/(?<![\w.$:])([a-zA-Z_:][\w:]*)(?![\w:]|\s*\()/g)].map((m) => m[1]).filter((name) => !KEYWORDS.has(name))
}

/** Every sample name the scrape declares: its families' names with the suffixes their types allow. */
const exported = (families: ReadonlyMap<string, Family>): ReadonlySet<string> =>
  new Set([...families.values()].flatMap((family) => SUFFIXES[family.type].map((suffix) => family.name + suffix)))

let node: TestNode
let dashboard: Dashboard

const scrape = async () => {
  const response = await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`)
  expect(response.status).toBe(200)
  return parseExposition(await response.text())
}

const value = (families: ReadonlyMap<string, Family>, name: string, labels: Record<string, string> = {}) =>
  families.get(name)?.samples.find((s) => Object.entries(labels).every(([label, v]) => s.labels[label] === v))?.value

beforeAll(async () => {
  node = await startTestNode({ metrics: { host: "127.0.0.1", port: 0 }, partitions: PARTITIONS })
  dashboard = JSON.parse(await readFile(DASHBOARD, "utf8")) as Dashboard
})
afterAll(async () => {
  await node?.stop()
})

describe("deploy/grafana/svc.json", () => {
  it("is a Grafana dashboard: a uid, a schema version, panels each with a title and (but rows) queries", () => {
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/)
    expect(dashboard.title).toBeTruthy()
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36)
    expect(dashboard.panels.length).toBeGreaterThan(0)
    for (const panel of dashboard.panels) {
      expect(panel.title, JSON.stringify(panel)).toBeTruthy()
      if (panel.type === "row") continue
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0)
      for (const target of panel.targets!) expect(target.expr, `${panel.title} ${target.refId}`).toBeTruthy()
    }
  })

  it("names only metrics the node exports", async () => {
    // requests and commands, so that the histograms have series as well as declarations
    expect((await call(node, "schema.define_label", { label: "Ticket", properties: { title: { type: "string", required: true } } })).status).toBe(200)
    expect((await call(node, "node.create", { label: "Ticket", properties: { title: "one" } })).status).toBe(200)
    expect((await call(node, "no.such.capability", {})).status).toBe(404)
    const families = await scrape()
    const names = exported(families)
    const used = new Map<string, string>()
    for (const panel of dashboard.panels) {
      for (const target of panel.targets ?? []) for (const name of metricNames(target.expr)) used.set(name, `${panel.title} ${target.refId}`)
    }
    for (const variable of dashboard.templating.list) {
      for (const [, name] of (variable.definition ?? "").matchAll(/label_values\(\s*([a-zA-Z_:][\w:]*)/g)) used.set(name, `variable ${variable.name}`)
    }
    expect([...used.keys()].filter((name) => name.startsWith("svc_")).length).toBeGreaterThan(20)
    const missing = [...used].filter(([name]) => !names.has(name)).map(([name, where]) => `${name} (${where})`)
    expect(missing).toEqual([])
    for (const name of ["svc_http_request_duration_seconds", "svc_command_duration_seconds", "svc_log_append_duration_seconds", "svc_log_append_events"]) {
      expect(histogramSeries(families.get(name)!).length, name).toBeGreaterThan(0)
    }
  })

  it("finds a metric name wherever a query puts it", () => {
    expect(metricNames('histogram_quantile(0.99, sum by (le, route) (rate(svc_x_bucket{status=~"5..", route="/v1/svc_y"}[$__rate_interval])))')).toEqual(["svc_x_bucket"])
    expect(metricNames("sum by (instance) (svc_a) / on (instance) group_left svc_b offset 5m")).toEqual(["svc_a", "svc_b"])
  })
})

describe("the metrics of rebalances and drains", () => {
  it("counts the partitions' assignment as the node starts, and the pause of each until it decided there", async () => {
    const families = await scrape()
    expect(value(families, "svc_rebalances_total", { change: "assigned" })).toBe(1)
    expect(value(families, "svc_rebalances_total", { change: "revoked" })).toBeUndefined()
    const [pause] = histogramSeries(families.get("svc_rebalance_pause_seconds")!)
    expect(pause.count).toBe(PARTITIONS)
    expect(pause.sum).toBeGreaterThan(0)
  })

  it("counts a drain as it starts, is draining from then, and counts what it refuses", async () => {
    const before = await scrape()
    expect(value(before, "svc_draining")).toBe(0)
    expect(value(before, "svc_drains_total")).toBe(0)
    expect(value(before, "svc_drain_refusals_total")).toBe(0)
    const drained = node.drain(5_000)
    const refused = await call(node, "node.create", { label: "Ticket", properties: { title: "two" } })
    expect(refused.status).toBe(503)
    const during = await scrape()
    expect(value(during, "svc_draining")).toBe(1)
    expect(value(during, "svc_drains_total")).toBe(1)
    expect(value(during, "svc_drain_refusals_total")).toBe(1)
    expect(await drained).toBe(true)
  })
})
