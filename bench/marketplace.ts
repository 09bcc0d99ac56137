/**
 * `npm run bench:marketplace`: the catalog at scale. A local registry (a child process, the test
 * registry of test/support/registryServer.ts) serves BENCH_SERVERS (10,000) synthetic servers with
 * BENCH_VERSIONS (5) versions each, 50,000 server versions; the node's default seed points at it.
 *
 * 1. Full sync: `plugin.registry.sync` (the bootstrap Owner, signed in) with `wait`, pages of 100,
 *    until the answer and the projection has folded every page into the catalog: server versions
 *    per second.
 * 2. Browse: `plugin.catalog.browse` with a search term (one word of the synthetic descriptions;
 *    a page of 20 of the ~3,000 latest versions it matches) from a load generator (a child
 *    process), BENCH_CONCURRENCY (64) in flight for BENCH_SECONDS (10): requests/s, p50, p99.
 *
 * The node runs in this process on the embedded log unless KAFKA_BROKERS is set, on PGlite unless
 * DATABASE_URL is set. Targets on this machine: full sync ≤ 60 s; browse ≥ 1,000/s, p99 ≤ 100 ms.
 */
import http from "node:http"
import { parseOutboundAllow } from "../src/platform/Outbound.ts"
import { DEFAULT_SEED_REGISTRY_ID } from "../src/marketplace/RegistrySettings.ts"
import { startRegistryServer } from "../test/support/registryServer.ts"
import {
  announce,
  ask,
  type Bench,
  brokers,
  kindIs,
  loadWindow,
  machine,
  measured,
  portOf,
  progressOf,
  row,
  runBench,
  settle,
  startNode,
  table,
  usageNow,
  type Window,
  WINDOW_ALIGN,
  WINDOW_COLUMNS,
  WINDOW_LEGEND,
  windowCells,
  windowSettings
} from "./harness.ts"

const SERVERS = Number(process.env.BENCH_SERVERS ?? 10_000)
const VERSIONS = Number(process.env.BENCH_VERSIONS ?? 5)
const SEARCH = process.env.BENCH_SEARCH ?? "weather"
const { seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, concurrency: CONCURRENCY, requestTimeoutMs: REQUEST_TIMEOUT_MS } = windowSettings(64)

// ---------------------------------------------------------------------------------------------
// The registry (child process).

const serveRegistry = () =>
  announce(
    startRegistryServer({ synthetic: { servers: SERVERS, versions: VERSIONS } }).then((registry) => Number(new URL(registry.url).port)),
    async () => undefined
  )

// ---------------------------------------------------------------------------------------------
// The load generator (child process): POSTs with the Owner's session cookie.

interface Load {
  readonly kind: "load"
  readonly port: number
  readonly path: string
  readonly cookie: string
  readonly body: string
  /** Each request asks from a random position (a cursor of its own): no two ask for the same page. */
  readonly randomCursor: boolean
  readonly concurrency: number
  readonly seconds: number
}

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4096 })

/** A cursor as browse returns them (base64url of the last name and id), at a random name. */
const randomCursor = () =>
  Buffer.from(JSON.stringify([`io.example.bench/${SEARCH}-server-${String(Math.floor(Math.random() * SERVERS)).padStart(6, "0")}`, `mcat_${"0".repeat(32)}`])).toString("base64url")

const postWithCookie = (load: Load) =>
  new Promise<string | undefined>((resolve) => {
    const body = load.randomCursor ? JSON.stringify({ ...JSON.parse(load.body), cursor: randomCursor() }) : load.body
    const timer = setTimeout(() => {
      resolve(`no answer within ${REQUEST_TIMEOUT_MS} ms`)
      request.destroy()
    }, REQUEST_TIMEOUT_MS)
    const request = http.request(
      { host: "127.0.0.1", port: load.port, path: load.path, method: "POST", agent, headers: { cookie: load.cookie, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => {
          clearTimeout(timer)
          const text = Buffer.concat(chunks).toString("utf8")
          if (response.statusCode !== 200) return resolve(`${response.statusCode} ${text.slice(0, 160)}`)
          const answer = JSON.parse(text) as { servers?: Array<unknown>; registries?: Array<unknown> }
          const whole = answer.registries !== undefined || answer.servers?.length === 20 || (load.randomCursor && answer.servers !== undefined)
          resolve(whole ? undefined : `not a full page: ${text.slice(0, 160)}`)
        })
      }
    )
    request.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resolve(error.code ?? error.message)
    })
    request.end(body)
  })

const generateLoad = (load: Load) => loadWindow(load.concurrency, load.seconds, () => postWithCookie(load))

// ---------------------------------------------------------------------------------------------
// The bench (this process).

const progress = progressOf("bench:marketplace")

const bench = async (context: Bench) => {
  const registry = context.fork("registry")
  const registryPort = await portOf(registry)
  progress(`registry of ${SERVERS * VERSIONS} server versions on port ${registryPort}; starting a node`)
  const node = await startNode(context, {
    overrides: {
      outboundAllow: parseOutboundAllow("127.0.0.1"),
      marketplace: { defaultRegistryUrl: `http://127.0.0.1:${registryPort}`, githubRawBaseUrl: `http://127.0.0.1:${registryPort}/raw`, syncIntervalSeconds: 0, pageSize: 100, leaseMs: 120_000 }
    }
  })
  const { orgSlug, workspaceSlug, ownerEmail, ownerPassword } = node.bootstrap
  const place = `/v1/${encodeURIComponent(orgSlug)}/${encodeURIComponent(workspaceSlug)}`
  const base = `http://127.0.0.1:${node.port}`
  const signedIn = await fetch(`${base}/v1/auth/sign-in`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: ownerEmail, password: ownerPassword }) })
  const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0]
  if (signedIn.status !== 200 || cookie === "") throw new Error(`sign-in answered ${signedIn.status}`)
  const post = async (capability: string, input: unknown) => {
    const reply = await fetch(`${base}${place}/${capability.replaceAll(".", "/")}`, { method: "POST", headers: { cookie, "content-type": "application/json" }, body: JSON.stringify(input) })
    const body = await reply.json()
    if (reply.status !== 200) throw new Error(`${capability}: ${reply.status} ${JSON.stringify(body)}`)
    return body as any
  }

  // the seed is added as the node starts; wait until it is there
  for (let tries = 0; !(await post("plugin.registry.list", {})).registries.some((r: any) => r.registryId === DEFAULT_SEED_REGISTRY_ID); tries++) {
    if (tries > 100) throw new Error("the default seed registry was never added")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  progress("full sync")
  const started = performance.now()
  const sync = await post("plugin.registry.sync", { registryId: DEFAULT_SEED_REGISTRY_ID, wait: true })
  const answered = performance.now()
  await settle(node)
  const synced = performance.now()
  if (sync.status !== "succeeded") throw new Error(`the sync ${sync.status}: ${sync.reason}`)
  const syncSeconds = (synced - started) / 1000
  const first = await post("plugin.catalog.browse", { search: SEARCH, limit: 20 })
  if (first.servers.length !== 20) throw new Error(`browse found ${first.servers.length} servers for '${SEARCH}'`)

  const load = context.fork("load")
  const body = JSON.stringify({ search: SEARCH, limit: 20 })
  const measure = async (capability: string, input: string, seconds: number, randomCursor = false) => {
    progress(`${capability}: ${CONCURRENCY} in flight, ${seconds} s`)
    const before = usageNow()
    const window = await ask<Window>(
      load,
      { kind: "load", port: node.port, path: `${place}/${capability.replaceAll(".", "/")}`, cookie, body: input, randomCursor, concurrency: CONCURRENCY, seconds } satisfies Load,
      kindIs("window")
    )
    return measured(capability, window, before, usageNow())
  }
  await measure("plugin.catalog.browse", body, WARMUP_SECONDS)
  const browse = await measure("plugin.catalog.browse", body, SECONDS)
  // a page nobody asked for before: no cached page answers
  const uncached = await measure("plugin.catalog.browse", body, SECONDS, true)
  // the same checkpoint around a read of one row: what the platform's per-request cost is at this hour
  const baseline = await measure("plugin.registry.list", "{}", SECONDS)
  const p99 = browse.sorted[Math.min(browse.sorted.length - 1, Math.floor(0.99 * browse.sorted.length))]

  console.log([
    `# Marketplace: catalog sync and browse`,
    "",
    `${machine(brokers.length > 0 ? "Kafka" : "embedded")}; ${SERVERS.toLocaleString("en-US")} servers × ${VERSIONS} versions`,
    "",
    ...table(["full sync", "server versions", "pages", "answered (s)", "projected (s)", "server versions/s"], "lrrrrr", [
      row(["plugin.registry.sync (wait), pages of 100", sync.counts.upserted, sync.counts.pages, ((answered - started) / 1000).toFixed(1), syncSeconds.toFixed(1), Math.round(sync.counts.upserted / syncSeconds)])
    ]),
    "",
    `\`POST ${place}/plugin/...\` with the Owner's session, ${CONCURRENCY} in flight (${WINDOW_LEGEND}):`,
    "",
    ...table(["route", ...WINDOW_COLUMNS], `l${WINDOW_ALIGN}`, [
      row([`plugin.catalog.browse ${body}`, ...windowCells(browse)]),
      row([`plugin.catalog.browse ${body} from a random cursor (uncached pages)`, ...windowCells(uncached)]),
      row(["plugin.registry.list {} (baseline: the checkpoint and a one-row read)", ...windowCells(baseline)])
    ]),
    "",
    `Targets: full sync ≤ 60 s: ${syncSeconds <= 60 ? "met" : "not met"}; browse ≥ 1,000/s: ${browse.rate >= 1000 ? "met" : "not met"}; p99 ≤ 100 ms: ${p99 <= 100 ? "met" : "not met"}.`
  ].join("\n"))
}

runBench(import.meta.url, { bench, load: generateLoad, servers: { registry: serveRegistry } })
