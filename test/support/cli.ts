/** Runs the operator CLI `svc` (bin/cli.ts) as its own process, as an operator or an auditor would:
 * against a test node's database and log while the node runs on Postgres, or after it stopped when
 * it runs embedded PGlite in its data directory (PGlite has one owner), or against a Kafka
 * cluster's log. */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { databaseUrl, kafkaBrokers } from "./env.ts"
import type { TestNode } from "./platform.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

export type CliResult = { readonly code: number; readonly stdout: string; readonly stderr: string }

const svc = (args: ReadonlyArray<string>, env: Record<string, string>, timeoutMs: number) =>
  new Promise<CliResult>((resolve) => {
    execFile(
      path.join(root, "node_modules/.bin/tsx"),
      ["bin/cli.ts", ...args],
      { cwd: root, timeout: timeoutMs, env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

/** `svc` on the node's database and log; `partitions` stands for LOG_PARTITIONS where a test
 * runs it with another count than the node's (around a repartition). */
export const runCli = (
  node: TestNode,
  args: ReadonlyArray<string>,
  options: { readonly partitions?: number; readonly timeoutMs?: number } = {}
) =>
  svc(args, {
    SVC_DATA_DIR: node.config.dataDir,
    DATABASE_URL: node.config.databaseUrl ?? "",
    DB_SCHEMA: node.config.dbSchema,
    LOG_PARTITIONS: String(options.partitions ?? node.config.partitions),
    KAFKA_BROKERS: node.config.kafkaBrokers.join(","),
    KAFKA_TOPIC_PREFIX: node.config.topicPrefix,
    // the node's master key, which opens what is sealed under a person's key (a turn's tape)
    AUTH_TOKEN_ENCRYPTION_KEY: node.config.authTokenEncryptionKey?.toString("base64") ?? ""
  }, options.timeoutMs ?? 60_000)

/** `svc audit verify` against a Kafka cluster's log. */
export const auditVerify = (log: { readonly schema: string; readonly prefix: string; readonly partitions: number }) =>
  svc(["audit", "verify"], {
    DATABASE_URL: databaseUrl,
    DB_SCHEMA: log.schema,
    KAFKA_BROKERS: kafkaBrokers.join(","),
    KAFKA_TOPIC_PREFIX: log.prefix,
    LOG_PARTITIONS: String(log.partitions)
  }, 120_000)

/** The `same`/`DIFFERENT` lines `svc replay --compare` prints, one per table. */
export const comparedTables = (stdout: string) => stdout.split("\n").filter((line) => /^(same|DIFFERENT) {2}\w+ \(\d+ rows\)$/.test(line))
