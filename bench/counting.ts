/**
 * The work one operation costs the node, counted (`countWork`): the actor commands the node decided
 * (by kind), the events appended to the log (by type) and their payloads' bytes as JSON, the audit
 * records among them, the Postgres statements each pool sent (the requests' pool and the
 * projection's), and the CPU of the bench process (the node, and the client's small share). The
 * counters are the node's own metrics (`svc_command_duration_seconds`, `svc_log_append_events`,
 * `svc_audit_batch_records`, `svc_db_statements_total`); the events are read back from the log.
 * The node's idle load (the embedded log's tail polls when no append wakes it; timers) is measured
 * apart (`idleLoad`): a busy node polls less, so it is not taken off.
 *
 * Also the four operations the throughput work counts, as a client sends them to a bench node:
 * `message/send` (an A2A send to the offline model, `hello`, a new task each time), `tasks/get`
 * (of one send's task), a chat turn (`POST …/chat/stream`, `hello`, a new conversation each time,
 * read to its end) and `node.create` (the CRUD bench's body).
 */
import { Effect, Stream } from "effect"
import { performance } from "node:perf_hooks"
import { randomUUID } from "node:crypto"
import { ascending, type BenchNode, int, ms, postForText, quantile, row, settle, table, type Target } from "./harness.ts"

/** `BENCH_WORK_STATEMENTS=1`: also print each operation's statements by text, on stderr. */
const STATEMENTS = process.env.BENCH_WORK_STATEMENTS === "1"

const shortened = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 140)
/** The node's pools are this process's: their statements are tapped where they are counted. */
const tapStatements = async (tap: ((text: string) => void) | undefined) => (await import("../streams/Db.ts")).tapStatements(tap)
const TIMEOUT_MS = 30_000

/** One operation as the client sends it: resolves with its failure, if any. */
export type Operation = () => Promise<string | undefined>

/** What the node's counters hold at one moment. */
interface Counters {
  readonly commands: ReadonlyMap<string, number>
  readonly events: number
  readonly audit: number
  readonly requestStatements: number
  readonly projectionStatements: number
  readonly cpuMs: number
  readonly ends: ReadonlyMap<number, number>
  readonly at: number
}

const sample = (text: string, name: string): ReadonlyArray<{ readonly labels: string; readonly value: number }> =>
  text
    .split("\n")
    .filter((line) => line.startsWith(name) && (line[name.length] === " " || line[name.length] === "{"))
    .map((line) => {
      const space = line.lastIndexOf(" ")
      return { labels: line.slice(name.length, space), value: Number(line.slice(space + 1)) }
    })

const total = (text: string, name: string) => sample(text, name).reduce((sum, s) => sum + s.value, 0)

const countersOf = async (node: BenchNode): Promise<Counters> => {
  const { allPartitions } = await import("../streams/EventLog.ts")
  const { text } = await node.metrics.scrape()
  const cpu = process.cpuUsage()
  const statements = (pool: string) => sample(text, "svc_db_statements_total").find((s) => s.labels.includes(`"${pool}"`))?.value ?? 0
  return {
    commands: new Map(sample(text, "svc_command_duration_seconds_count").map((s) => [/kind="([^"]*)"/.exec(s.labels)?.[1] ?? "?", s.value])),
    events: total(text, "svc_log_append_events_sum"),
    audit: total(text, "svc_audit_batch_records_sum"),
    requestStatements: statements("requests"),
    projectionStatements: statements("projection"),
    cpuMs: (cpu.user + cpu.system) / 1000,
    ends: await Effect.runPromise(node.log.endOffsets(allPartitions(node.log.partitions))),
    at: performance.now()
  }
}

/** The events appended between two moments, read back from the log: count and payload bytes by type. */
const eventsBetween = async (node: BenchNode, before: Counters, after: Counters) => {
  const from = new Map([...before.ends].filter(([partition, offset]) => after.ends.get(partition)! > offset))
  const expected = [...from].reduce((n, [partition, offset]) => n + after.ends.get(partition)! - offset, 0)
  const byType = new Map<string, { count: number; bytes: number }>()
  if (expected === 0) return byType
  const events = await Effect.runPromise(
    node.log.subscribe(from).pipe(
      Stream.mapConcat((chunk) => chunk.events.filter((event) => event.offset < after.ends.get(event.partition)!)),
      Stream.take(expected),
      Stream.runCollect
    )
  )
  for (const event of events) {
    const entry = byType.get(event.type) ?? { count: 0, bytes: 0 }
    entry.count++
    entry.bytes += Buffer.byteLength(JSON.stringify(event.payload))
    byType.set(event.type, entry)
  }
  return byType
}

const commandsBetween = (before: Counters, after: Counters) => {
  const kinds = new Map<string, number>()
  for (const [kind, n] of after.commands) {
    const delta = n - (before.commands.get(kind) ?? 0)
    if (delta > 0) kinds.set(kind, delta)
  }
  return kinds
}

export interface Work {
  readonly what: string
  readonly operations: number
  /** Per operation, as the rest. */
  readonly commands: ReadonlyMap<string, number>
  readonly events: ReadonlyMap<string, { readonly count: number; readonly bytes: number }>
  readonly audit: number
  readonly requestStatements: number
  readonly projectionStatements: number
  readonly sharedPool: boolean
  /** Whether the node counted its statements (`dbStatementCounts`, which costs it CPU). */
  readonly statementsCounted: boolean
  readonly cpuMs: number
  /** The operations' median time to their answer's end, in ms. */
  readonly p50Ms: number
}

const per = <K>(counts: ReadonlyMap<K, number>, n: number) => new Map([...counts].map(([k, v]) => [k, v / n] as const))

/**
 * Sends `operation` `n` times, `concurrency` at a time, and counts what the node did for them, less
 * what it does idle over as long.
 */
export const countWork = async (node: BenchNode, what: string, operation: Operation, n: number, concurrency = 1): Promise<Work> => {
  await settle(node)
  const before = await countersOf(node)
  const texts = new Map<string, number>()
  if (STATEMENTS) await tapStatements((text) => texts.set(shortened(text), (texts.get(shortened(text)) ?? 0) + 1))
  let issued = 0
  const latencies: number[] = []
  const worker = async () => {
    while (issued < n) {
      issued++
      const started = performance.now()
      const failure = await operation()
      if (failure !== undefined) throw new Error(`${what}: ${failure}`)
      latencies.push(performance.now() - started)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  await settle(node)
  const after = await countersOf(node)
  if (STATEMENTS) {
    await tapStatements(undefined)
    console.error(`${what}, statements per operation (both pools):`)
    for (const [text, count] of [...texts].sort((a, b) => b[1] - a[1])) console.error(`${(count / n).toFixed(2).padStart(7)}  ${text}`)
  }
  const events = await eventsBetween(node, before, after)
  return {
    what,
    operations: n,
    commands: per(commandsBetween(before, after), n),
    events: new Map([...events].map(([type, { count, bytes }]) => [type, { count: count / n, bytes: bytes / n }])),
    audit: (after.audit - before.audit) / n,
    requestStatements: (after.requestStatements - before.requestStatements) / n,
    projectionStatements: (after.projectionStatements - before.projectionStatements) / n,
    sharedPool: node.db.projection === node.db,
    statementsCounted: node.db.statements !== undefined,
    cpuMs: (after.cpuMs - before.cpuMs) / n,
    p50Ms: quantile(ascending(latencies), 0.5)
  }
}

/** What the node does with nothing to do, per second: the embedded log's tail polling (when no append wakes it), timers. */
export const idleLoad = async (node: BenchNode, ms = 2_000) => {
  await settle(node)
  const before = await countersOf(node)
  await new Promise((resolve) => setTimeout(resolve, ms))
  const after = await countersOf(node)
  const perSecond = (key: "requestStatements" | "projectionStatements" | "cpuMs") => ((after[key] - before[key]) * 1000) / (after.at - before.at)
  return `Idle, per second: ${perSecond("requestStatements").toFixed(1)} statements on the requests' pool, ${perSecond("projectionStatements").toFixed(1)} on the projection's, ${perSecond("cpuMs").toFixed(1)} CPU ms. The counts below include it.`
}

const figure = (n: number) => (Number.isInteger(n) ? int(n) : n.toFixed(n < 10 ? 2 : 1))
const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0)
const listed = <V>(entries: ReadonlyMap<string, V>, value: (v: V) => number) =>
  [...entries].sort(([a], [b]) => a.localeCompare(b)).map(([name, v]) => `${name} ${figure(value(v))}`).join(", ") || "none"

export const WORK_COLUMNS = ["operation", "actor commands", "events appended", "bytes appended", "audit records", "Postgres statements: requests' pool", "projection's pool", "node CPU ms", "p50 ms"]

/** The table's row of `work`: totals, then what they are made of. */
export const workRow = (work: Work) =>
  row([
    work.what,
    `${figure(sum(work.commands.values()))} (${listed(work.commands, (n) => n)})`,
    `${figure(sum([...work.events.values()].map((e) => e.count)))} (${listed(work.events, (e) => e.count)})`,
    int(sum([...work.events.values()].map((e) => e.bytes))),
    figure(work.audit),
    !work.statementsCounted ? "not counted" : work.sharedPool ? `${figure(work.requestStatements + work.projectionStatements)} (one pool)` : figure(work.requestStatements),
    !work.statementsCounted ? "(see bench:work)" : work.sharedPool ? "(shared)" : figure(work.projectionStatements),
    work.cpuMs.toFixed(2),
    ms(work.p50Ms)
  ])

export const workTable = (works: ReadonlyArray<Work>) => table(WORK_COLUMNS, "lllrrrrrr", works.map(workRow))

// ---------------------------------------------------------------------------------------------
// The four operations, against a bench node.

const ok = (accept: (text: string) => boolean) => (status: number, text: string) =>
  status === 200 && accept(text) ? undefined : `${status} ${text.slice(0, 160)}`

const place = (node: BenchNode) => `/v1/${encodeURIComponent(node.bootstrap.orgSlug)}/${encodeURIComponent(node.bootstrap.workspaceSlug)}`
const target = (node: BenchNode, path: string): Target => ({ port: node.port, path, key: node.bootstrap.workspaceKey })

const a2aBody = (method: string, params: object) => JSON.stringify({ jsonrpc: "2.0", id: randomUUID(), method, params })
const sendBody = () => a2aBody("message/send", { message: { kind: "message", role: "user", parts: [{ kind: "text", text: "hello" }], messageId: randomUUID() } })

export const a2aSend = (node: BenchNode): Operation => () =>
  postForText(target(node, "/a2a"), sendBody(), TIMEOUT_MS, ok((text) => text.includes('"state":"completed"')))

export const a2aGet = async (node: BenchNode): Promise<Operation> => {
  let taskId: string | undefined
  await postForText(target(node, "/a2a"), sendBody(), TIMEOUT_MS, (status, text) => {
    taskId = (JSON.parse(text) as { result?: { id?: string } }).result?.id
    return status === 200 && taskId !== undefined ? undefined : `${status} ${text}`
  })
  const body = a2aBody("tasks/get", { id: taskId })
  return () => postForText(target(node, "/a2a"), body, TIMEOUT_MS, ok((text) => text.includes(`"id":"${taskId}"`)))
}

export const chatTurn = (node: BenchNode): Operation => () =>
  postForText(target(node, `${place(node)}/chat/stream`), JSON.stringify({ content: "hello" }), TIMEOUT_MS, ok((text) => text.includes("event: done")))

/** The label the creates are of, and a create's body (the CRUD bench sends the same). */
export const LABEL = { label: "Ticket", properties: { title: { type: "string", required: true }, priority: { type: "enum", values: ["low", "high"] } } }
export const NODE = JSON.stringify({ label: "Ticket", properties: { title: "Printer on fire", priority: "high" } })

export const nodeCreate = async (node: BenchNode): Promise<Operation> => {
  const defined = await postForText(target(node, `${place(node)}/schema/define_label`), JSON.stringify(LABEL), TIMEOUT_MS, (status, text) =>
    status === 200 || text.includes("already") ? undefined : `${status} ${text}`
  )
  if (defined !== undefined) throw new Error(`schema/define_label: ${defined}`)
  return () => postForText(target(node, `${place(node)}/node/create`), NODE, TIMEOUT_MS, ok(() => true))
}
