/**
 * Starts a real node of the platform in this process (the same path as `npm start`), on a free
 * port, against real Postgres in a schema of its own and, when brokers are given, real Kafka.
 */
import { Effect, Exit, Scope } from "effect"
import { mkdtemp } from "node:fs/promises"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { type AppConfig, loadConfig } from "../../src/platform/Config.ts"
import type { DbService } from "../../streams/Db.ts"
import { type NodeOptions, startNode } from "../../bin/node.ts"
import { databaseUrl, uniqueName } from "./env.ts"

export type TestNode = Effect.Effect.Success<ReturnType<typeof startNode>> & {
  readonly baseUrl: string
  readonly config: AppConfig
  readonly stop: () => Promise<void>
}

/**
 * The node's database as tests read it: a query waits until the read models hold every write the
 * node has acknowledged, as any read through the node's own API does (the projection runs behind
 * the answers).
 */
const settledReads = (node: Effect.Effect.Success<ReturnType<typeof startNode>>): DbService => {
  const settled = () => node.host.awaitProjected(node.host.unprojected(), 10_000)
  // postgres.js queries run when awaited: a query (not a fragment nested in another) waits first
  const sql = new Proxy(node.db.sql, {
    apply: (target, self, args: Array<unknown>) => {
      const query = Reflect.apply(target, self, args)
      if (!(Array.isArray(args[0]) && "raw" in (args[0] as object))) return query
      const then = query.then.bind(query)
      query.then = (onFulfilled?: (value: unknown) => unknown, onRejected?: (reason: unknown) => unknown) =>
        settled().then(() => then(onFulfilled, onRejected))
      return query
    },
    get: (target, name, receiver) =>
      name === "unsafe"
        ? (...args: Parameters<typeof target.unsafe>) => settled().then(() => target.unsafe(...args))
        : Reflect.get(target, name, receiver)
  })
  return { ...node.db, sql }
}

export const startTestNode = async (overrides: Partial<AppConfig> = {}, options: NodeOptions = {}): Promise<TestNode> => {
  const base = loadConfig({})
  const config: AppConfig = {
    ...base,
    port: 0,
    host: "127.0.0.1",
    dataDir: await mkdtemp(path.join(tmpdir(), "svc-test-")),
    databaseUrl,
    dbSchema: uniqueName("t"),
    partitions: 4,
    // a line per request would bury the test run's output; a test that reads the lines asks for them
    logging: { level: "warn", format: "json" },
    // no scheduled catalog sync (of the official registry, over the internet) unless a test asks
    marketplace: { ...base.marketplace, syncIntervalSeconds: 0 },
    ...overrides
  }
  const scope = Effect.runSync(Scope.make())
  const node = await Effect.runPromise(Scope.extend(startNode(config, options), scope))
  return {
    ...node,
    db: settledReads(node),
    config,
    baseUrl: `http://127.0.0.1:${node.port}`,
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/**
 * A port free right now, for a node that must know its own URL before it starts (`baseUrl`: the
 * redirect URI an OpenID or OAuth server sends a browser back to).
 */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
