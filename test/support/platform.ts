/**
 * Starts a real node of the platform in this process (the same path as `npm start`), on a free
 * port, against real Postgres in a schema of its own and, when brokers are given, real Kafka.
 */
import { Effect, Exit, Scope } from "effect"
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { type AppConfig, loadConfig } from "../../src/Config.ts"
import { type NodeOptions, startNode } from "../../src/Node.ts"
import { databaseUrl, uniqueName } from "./env.ts"

export type TestNode = Effect.Effect.Success<ReturnType<typeof startNode>> & {
  readonly baseUrl: string
  readonly config: AppConfig
  readonly stop: () => Promise<void>
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
    ...overrides
  }
  const scope = Effect.runSync(Scope.make())
  const node = await Effect.runPromise(Scope.extend(startNode(config, options), scope))
  return {
    ...node,
    config,
    baseUrl: `http://127.0.0.1:${node.port}`,
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
