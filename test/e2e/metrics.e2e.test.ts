/**
 * `GET /metrics` as Prometheus scrapes it: on the node's metrics port (apart from the API, no
 * credential), in the text exposition format (read with a parser of that format), counting what
 * the node did: requests by route pattern and status, commands by actor kind, appends, batches,
 * projection lag per owned partition, open streams and turns. The API port does not serve it. Two
 * nodes in one process (the second on Kafka when brokers are given) answer each for itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postJson, streamChat, waitForEvent } from "../support/chat.ts"
import { kafkaBrokers, uniqueName } from "../support/env.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type Family, histogramSeries, type MetricType, parseExposition } from "../support/prometheus.ts"
import { call } from "./client.ts"

const METRICS = { host: "127.0.0.1", port: 0 }
const WORKSPACE_ROUTE = "/v1/:orgSlug/:workspaceSlug"

let node: TestNode
let other: TestNode

beforeAll(async () => {
  node = await startTestNode({ metrics: METRICS, dbStatementCounts: true })
  other = await startTestNode({ metrics: METRICS, kafkaBrokers, topicPrefix: uniqueName("t"), kafkaSessionTimeoutMs: 3_000 })
})
afterAll(async () => {
  await node?.stop()
  await other?.stop()
})

const scrape = async (of: TestNode) => {
  const response = await fetch(`http://127.0.0.1:${of.metricsPort}/metrics`)
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return parseExposition(await response.text())
}

type Families = ReadonlyMap<string, Family>

const familyOf = (families: Families, name: string, type: MetricType) => {
  const family = families.get(name)
  expect(family, name).toBeDefined()
  expect(family!.type).toBe(type)
  return family!
}

const matching = (labels: Record<string, string>) => (series: { readonly labels: Readonly<Record<string, string>> }) =>
  Object.entries(labels).every(([label, value]) => series.labels[label] === value)

/** The histogram's series with these labels (among others they may have). */
const seriesOf = (families: Families, name: string, labels: Record<string, string> = {}) =>
  histogramSeries(familyOf(families, name, "histogram")).filter(matching(labels))

/** How many observations the one series with these labels holds; it has buckets. */
const observed = (families: Families, name: string, labels: Record<string, string> = {}) => {
  const series = seriesOf(families, name, labels)
  expect(series, `${name} ${JSON.stringify(labels)}`).toHaveLength(1)
  expect(series[0].buckets.length).toBeGreaterThan(1)
  return series[0].count
}

/** The value of the one gauge sample with these labels. */
const gauge = (families: Families, name: string, labels: Record<string, string> = {}) => {
  const samples = familyOf(families, name, "gauge").samples.filter(matching(labels))
  expect(samples, `${name} ${JSON.stringify(labels)}`).toHaveLength(1)
  return samples[0].value
}

const eventually = async <T>(read: () => Promise<T>, until: (value: T) => boolean, timeoutMs = 10_000): Promise<T> => {
  const started = Date.now()
  for (;;) {
    const value = await read()
    if (until(value) || Date.now() - started > timeoutMs) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("GET /metrics", () => {
  it("is served on the metrics port only: the API port answers it as an unknown route, with or without a credential", async () => {
    const credentials: ReadonlyArray<Record<string, string>> = [{}, { authorization: `Bearer ${node.bootstrap.workspaceKey}` }]
    for (const headers of credentials) {
      const response = await fetch(`${node.baseUrl}/metrics`, { headers })
      expect(response.status).toBe(404)
      expect(await response.json()).toMatchObject({ error: { code: "not_found", reason: "route_not_found" } })
    }
    expect(node.metricsPort).not.toBe(node.port)
  })

  it("counts requests by route pattern and status, commands by actor kind, appends and batches", async () => {
    const before = await scrape(node)
    expect(seriesOf(before, "svc_http_request_duration_seconds", { route: `${WORKSPACE_ROUTE}/node/create` })).toHaveLength(0)

    expect((await call(node, "schema.define_label", { label: "Ticket", properties: { title: { type: "string", required: true } } })).status).toBe(200)
    for (const title of ["one", "two"]) expect((await call(node, "node.create", { label: "Ticket", properties: { title } })).status).toBe(200)
    expect((await call(node, "node.create", { label: "Ticket", properties: {} })).status).toBe(400)
    expect((await call(node, "no.such.capability", {})).status).toBe(404)
    const turn = await streamChat(node, { content: "hello" })
    expect(turn.status).toBe(200)
    expect(turn.done.reply).toBeTruthy()

    const after = await scrape(node)
    const requests = (labels: Record<string, string>) => observed(after, "svc_http_request_duration_seconds", { method: "POST", ...labels })
    expect(requests({ route: `${WORKSPACE_ROUTE}/node/create`, status: "200" })).toBe(2)
    expect(requests({ route: `${WORKSPACE_ROUTE}/node/create`, status: "400" })).toBe(1)
    expect(requests({ route: `${WORKSPACE_ROUTE}/schema/define_label`, status: "200" })).toBe(1)
    expect(requests({ route: `${WORKSPACE_ROUTE}/chat/stream`, status: "200" })).toBe(1)
    // an unknown capability is counted under the pattern it matched, not its URL
    expect(requests({ route: "/v1/*", status: "404" })).toBe(1)
    // no label carries a slug or an id: every route is a pattern
    const { orgSlug, workspaceSlug } = node.bootstrap
    for (const { labels } of seriesOf(after, "svc_http_request_duration_seconds")) {
      expect(labels.route).not.toContain(`/${orgSlug}/`)
      expect(labels.route).not.toContain(`/${workspaceSlug}/`)
    }

    expect(observed(after, "svc_command_duration_seconds", { kind: "node" })).toBeGreaterThanOrEqual(2)
    expect(observed(after, "svc_command_duration_seconds", { kind: "conversation" })).toBeGreaterThanOrEqual(1)
    const appends = observed(after, "svc_log_append_duration_seconds")
    expect(appends).toBeGreaterThan(observed(before, "svc_log_append_duration_seconds"))
    expect(observed(after, "svc_log_append_events")).toBe(appends)
    expect(seriesOf(after, "svc_log_append_events")[0].sum).toBeGreaterThanOrEqual(appends)
    expect(observed(after, "svc_command_batch_size")).toBeGreaterThanOrEqual(appends)
    expect(observed(after, "svc_audit_batch_records")).toBeGreaterThan(observed(before, "svc_audit_batch_records"))

    // the process's own metrics come with the node's
    familyOf(after, "process_cpu_user_seconds_total", "counter")
    familyOf(after, "nodejs_eventloop_lag_seconds", "gauge")
  })

  it("reports each owned partition's projection lag, the owned and ready partitions, on either log", async () => {
    for (const of of [node, other]) {
      expect((await call(of, "schema.define_label", { label: "Lag", properties: { title: { type: "string" } } })).status).toBe(200)
      expect((await call(of, "node.create", { label: "Lag", properties: { title: "lagging?" } })).status).toBe(200)
      const families = await scrape(of)
      const { owned, ready } = of.host.ownership()
      expect(owned.length).toBeGreaterThan(0)
      expect(gauge(families, "svc_partitions_owned")).toBe(owned.length)
      expect(gauge(families, "svc_partitions_ready")).toBe(ready.length)
      const lag = familyOf(families, "svc_projection_lag_offsets", "gauge").samples
      expect(lag.map((sample) => Number(sample.labels.partition)).sort((a, b) => a - b)).toEqual(owned)
      for (const sample of lag) expect(sample.value).toBeGreaterThanOrEqual(0)
      // once the read models hold the log (audit records included, which no answer waits for), no
      // partition is behind: on Kafka too, whose transaction markers take offsets
      const lagging = (scraped: Families) => familyOf(scraped, "svc_projection_lag_offsets", "gauge").samples.filter((sample) => sample.value !== 0)
      expect(lagging(await eventually(() => scrape(of), (scraped) => lagging(scraped).length === 0))).toEqual([])
    }
  })

  it("counts a stream and its turn while they are open, and neither once the turn has ended", async () => {
    const events: Array<any> = []
    const streaming = streamChat(node, { content: "/ask Which one? | a | b" }, { onEvent: (event) => events.push(event) })
    const question = await waitForEvent(events, (event) => event.type === "question")
    const open = await scrape(node)
    expect(gauge(open, "svc_sse_streams_open", { route: `${WORKSPACE_ROUTE}/chat/stream` })).toBe(1)
    expect(gauge(open, "svc_turns_in_flight")).toBe(1)
    expect((await postJson(node, "assistant/question/answer", { questionId: question.id, answer: "a" })).body).toEqual({ found: true })
    await streaming
    const ended = await scrape(node)
    expect(gauge(ended, "svc_sse_streams_open", { route: `${WORKSPACE_ROUTE}/chat/stream` })).toBe(0)
    expect(gauge(ended, "svc_turns_in_flight")).toBe(0)
    expect(gauge(ended, "svc_a2a_tasks_in_flight")).toBe(0)
  })

  it("answers for its own node: another node in the same process counts only its own requests", async () => {
    expect(other.metricsPort).not.toBe(node.metricsPort)
    const created = { method: "POST", route: `${WORKSPACE_ROUTE}/node/create`, status: "200" }
    // two creates in the second test and one in the third through `node`, one in the third through `other`
    expect(observed(await scrape(node), "svc_http_request_duration_seconds", created)).toBe(3)
    const families = await scrape(other)
    expect(observed(families, "svc_http_request_duration_seconds", created)).toBe(1)
    expect(gauge(families, "svc_partitions_owned")).toBe(other.host.ownership().owned.length)
  })

  it("counts the statements each Postgres pool sends, when asked to: the requests' pool, and the projection's where it has its own", async () => {
    // counting costs the driver a stack trace a statement: a node counts only when configured to
    expect((await scrape(other)).has("svc_db_statements_total")).toBe(false)
    const counter = (families: Families, pool: string) =>
      familyOf(families, "svc_db_statements_total", "counter").samples.find((sample) => sample.labels.pool === pool)?.value
    const before = await scrape(node)
    expect((await call(node, "node.create", { label: "Ticket", properties: { title: "counted" } })).status).toBe(200)
    const after = await eventually(() => scrape(node), (families) => (counter(families, "projection") ?? 0) > (counter(before, "projection") ?? 0))
    // the create reads the bearer's key and the label (unless cached) and appends: at least the append
    expect(counter(after, "requests")!).toBeGreaterThan(counter(before, "requests")!)
    if (node.config.databaseUrl === undefined) {
      // embedded PGlite has one connection: one pool counts everything
      expect(counter(after, "projection")).toBeUndefined()
    } else {
      // the projection's pool tailed the log and folded the create
      expect(counter(after, "projection")!).toBeGreaterThan(counter(before, "projection")!)
    }
  })
})
