/**
 * `npm run bench:crud`: what an API caller's create costs through the checkpoint, beside a
 * conventional CRUD route on the same Postgres. `POST /v1/{org}/{workspace}/node/create` with the
 * bootstrap workspace key as Bearer and the body `{"label":"Ticket","properties":{"title":...,
 * "priority":"high"}}` (the label defined first with `schema/define_label`): authenticate, scope,
 * role, validate against the label, the node actor's command and events on the log, its projection,
 * the audit record; answered with the node.
 *
 * The CRUD route gets the same requests, byte for byte, in a child process (this file again,
 * argument `crud`): a plain `node:http` server that looks up the SHA-256 of the bearer in a table
 * of keys, validates the body with zod (the label's two properties), and in one postgres.js
 * transaction inserts the node's row and an audit row, answering with the node in the platform's
 * shape. Its tables live in a schema of their own in the same database (a pool of 10 connections,
 * as the node's), created before the loads and dropped after.
 *
 * Each route runs for BENCH_SECONDS with BENCH_CONCURRENCY requests in flight (each sends its next
 * as soon as its answer is in; none is sent after the window), after BENCH_WARMUP_SECONDS of
 * warm-up; figures as in bench/a2a.ts, the same load generator (argument `load`). Before each of the
 * platform's windows its projection catches up with the log. The node runs in this process on the
 * embedded log unless KAFKA_BROKERS is set. Needs DATABASE_URL (a real Postgres): without it, says
 * so and measures nothing. Writes Markdown tables to stdout.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto"
import http from "node:http"
import postgres from "postgres"
import { z } from "zod"
import {
  announce,
  ask,
  type Bench,
  brokers,
  databaseUrl,
  kindIs,
  listenHttp,
  loadWindow,
  machine,
  measured,
  platformLabel,
  portOf,
  postForText,
  progressOf,
  ratio,
  ratios,
  row,
  runBench,
  settle,
  startNode,
  table,
  type Usage,
  usageNow,
  usageOf,
  usageReply,
  type Window,
  WINDOW_ALIGN,
  WINDOW_COLUMNS,
  WINDOW_LEGEND,
  windowCells,
  windowSettings
} from "./harness.ts"
import { countWork, LABEL, NODE as BODY, nodeCreate, workTable } from "./counting.ts"
/** Operations whose work is counted, one at a time, before the windows. */
const WORK_OPERATIONS = Number(process.env.BENCH_WORK_OPERATIONS ?? 30)

const { seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, concurrency: CONCURRENCY, requestTimeoutMs: REQUEST_TIMEOUT_MS } = windowSettings(16)
const POOL_SIZE = 10


const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest()

// ---------------------------------------------------------------------------------------------
// The CRUD route (child process): node:http, a key lookup, zod, one transaction.

const NodeInput = z.strictObject({
  label: z.literal("Ticket"),
  properties: z.strictObject({ title: z.string().min(1), priority: z.enum(["low", "high"]).optional() })
})

const BEARER = /^Bearer (\S+)$/

const startCrud = () => {
  let sql: postgres.Sql | undefined
  let schema = ""
  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body)
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    res.end(text)
  }
  const create = async (db: postgres.Sql, authorization: string | undefined, text: string): Promise<[number, unknown]> => {
    const token = BEARER.exec(authorization ?? "")?.[1]
    if (token === undefined) return [401, { error: "unauthenticated" }]
    const [key] = await db`select key_id, workspace_id from ${db(`${schema}.api_keys`)} where hash = ${sha256(token)} and revoked_at is null`
    if (key === undefined) return [401, { error: "unauthenticated" }]
    let raw: unknown
    try {
      raw = JSON.parse(text)
    } catch {
      return [400, { error: "invalid_json" }]
    }
    const input = NodeInput.safeParse(raw)
    if (!input.success) return [400, { error: "invalid_input", issues: input.error.issues }]
    const nodeId = `nod_${randomUUID()}`
    const node = await db.begin(async (tx) => {
      const [row] = await tx`
        insert into ${tx(`${schema}.nodes`)} (node_id, workspace_id, label, properties)
        values (${nodeId}, ${key.workspace_id}, ${input.data.label}, ${tx.json(input.data.properties)})
        returning node_id, label, properties, version, created_at, updated_at`
      await tx`
        insert into ${tx(`${schema}.audit`)} (audit_id, workspace_id, key_id, action, target_id)
        values (${`aud_${randomUUID()}`}, ${key.workspace_id}, ${key.key_id}, 'node.create', ${nodeId})`
      return row
    })
    return [
      200,
      {
        nodeId: node.node_id,
        label: node.label,
        properties: node.properties,
        version: node.version,
        createdAt: node.created_at.toISOString(),
        updatedAt: node.updated_at.toISOString()
      }
    ]
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      if (sql === undefined) return answer(res, 503, { error: "not_open" })
      if (req.method !== "POST" || !req.url?.endsWith("/node/create")) return answer(res, 404, { error: "not_found" })
      create(sql, req.headers.authorization, Buffer.concat(chunks).toString("utf8")).then(
        ([status, body]) => answer(res, status, body),
        (error: Error) => answer(res, 500, { error: "internal", message: error.message })
      )
    })
  })
  void announce(listenHttp(server), async (message: { kind: "usage" } | { kind: "open"; schema: string }) => {
    if (message.kind === "usage") return usageReply()
    schema = message.schema
    sql = postgres(databaseUrl!, { max: POOL_SIZE, onnotice: () => {} })
    return { kind: "opened" }
  })
}

/** The CRUD route's tables, in `schema`, and the bench key's hash among its keys. */
const createTables = async (sql: postgres.Sql, schema: string, key: string) => {
  await sql.unsafe(`
    create schema ${schema};
    create table ${schema}.api_keys (
      key_id text primary key, hash bytea not null unique, workspace_id text not null, revoked_at timestamptz
    );
    create table ${schema}.nodes (
      node_id text primary key, workspace_id text not null, label text not null, properties jsonb not null,
      version integer not null default 1, created_at timestamptz not null default now(), updated_at timestamptz not null default now()
    );
    create index on ${schema}.nodes (workspace_id, label, created_at);
    create table ${schema}.audit (
      audit_id text primary key, workspace_id text not null, key_id text not null, action text not null,
      target_id text not null, at timestamptz not null default now()
    );
    create index on ${schema}.audit (workspace_id, at);
  `)
  await sql`insert into ${sql(`${schema}.api_keys`)} (key_id, hash, workspace_id) values ('key_bench', ${sha256(key)}, 'ws_bench')`
}

// ---------------------------------------------------------------------------------------------
// The load generator (child process).

interface Load {
  readonly kind: "load"
  readonly port: number
  readonly path: string
  readonly key: string
  readonly concurrency: number
  readonly seconds: number
}

/** The failure in an answer to a create, if any: it must be 200 with the node. */
const failureOf = (status: number, text: string) => {
  if (status !== 200) return `${status} ${text.slice(0, 160)}`
  try {
    return typeof (JSON.parse(text) as { nodeId?: unknown }).nodeId === "string" ? undefined : `no node: ${text.slice(0, 160)}`
  } catch {
    return `not JSON: ${text.slice(0, 160)}`
  }
}

const generateLoad = ({ port, path, key, concurrency, seconds }: Load) =>
  loadWindow(concurrency, seconds, () => postForText({ port, path, key }, BODY, REQUEST_TIMEOUT_MS, failureOf))

// ---------------------------------------------------------------------------------------------
// The bench (this process): a node, the CRUD route, the measurements, the table.

const progress = progressOf("bench:crud")

const ROUTES = ["crud", "platform"] as const
type Which = (typeof ROUTES)[number]

const bench = async (context: Bench) => {
  if (databaseUrl === undefined) {
    console.log("bench:crud compares with a route on a real Postgres: set DATABASE_URL. Nothing measured.")
    return
  }
  progress(`starting a node (Postgres, ${brokers.length === 0 ? "embedded" : "Kafka"} log)`)
  const node = await startNode(context)
  const { orgSlug, workspaceSlug, workspaceKey: key } = node.bootstrap
  const place = `/v1/${encodeURIComponent(orgSlug)}/${encodeURIComponent(workspaceSlug)}`
  const path = `${place}/node/create`
  const defined = await fetch(`http://127.0.0.1:${node.port}${place}/schema/define_label`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(LABEL)
  })
  if (defined.status !== 200) throw new Error(`schema/define_label answered ${defined.status} ${await defined.text()}`)

  const schema = `bench_crud_${randomBytes(4).toString("hex")}`
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    await createTables(sql, schema, key)
    const crud = context.fork("crud")
    const ports: Record<Which, number> = { crud: await portOf(crud), platform: node.port }
    await ask(crud, { kind: "open", schema }, kindIs("opened"))
    const load = context.fork("load")
    const labels: Record<Which, string> = {
      crud: "CRUD route (node:http, key lookup, zod, one postgres.js transaction: row and audit row)",
      platform: `${platformLabel(node.log.mode)}, through the checkpoint`
    }
    const usage = (which: Which): Promise<Usage> => (which === "platform" ? Promise.resolve(usageNow()) : usageOf(crud))

    const measure = async (which: Which, seconds: number) => {
      progress(`${which}: ${CONCURRENCY} in flight, ${seconds} s`)
      if (which === "platform") await settle(node)
      const before = await usage(which)
      const window = await ask<Window>(load, { kind: "load", port: ports[which], path, key, concurrency: CONCURRENCY, seconds } satisfies Load, kindIs("window"))
      return measured(which, window, before, await usage(which))
    }
    for (const which of ROUTES) await measure(which, WARMUP_SECONDS)
    progress("platform: the work per create, counted")
    const work = await countWork(node, "`node.create`", await nodeCreate(node), WORK_OPERATIONS)
    const crudWindow = await measure("crud", SECONDS)
    const platformWindow = await measure("platform", SECONDS)
    const [rows] = await sql`select (select count(*) from ${sql(`${schema}.nodes`)})::int as nodes, (select count(*) from ${sql(`${schema}.audit`)})::int as audit`

    console.log([
      `${machine(node.log.mode)}; ${CONCURRENCY} in flight, ${SECONDS} s per window.`,
      "",
      `\`POST ${path}\` (${WINDOW_LEGEND}; Postgres's own work is in neither's CPU):`,
      "",
      ...table(["route", ...WINDOW_COLUMNS], `l${WINDOW_ALIGN}`, [row([labels.crud, ...windowCells(crudWindow)]), row([labels.platform, ...windowCells(platformWindow)])]),
      "",
      `The CRUD route wrote ${rows.nodes} node rows and ${rows.audit} audit rows.`,
      "",
      "The work one create costs the platform, one at a time:",
      "",
      ...workTable([work]),
      "",
      `Ratios, platform ÷ CRUD route: ${ratios(platformWindow, crudWindow)}.`,
      "",
      `Target (issues 10 and 24): creates at least 0.5 × the CRUD route's: ${platformWindow.rate >= 0.5 * crudWindow.rate ? "met" : "not met"} ` +
        `(${ratio(platformWindow.rate, crudWindow.rate)} ×).`
    ].join("\n"))
  } finally {
    await sql.unsafe(`drop schema if exists ${schema} cascade`)
    await sql.end()
  }
}

runBench(import.meta.url, { bench, load: generateLoad, servers: { crud: startCrud } })
