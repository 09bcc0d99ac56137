/** Runs `svc audit verify` (bin/cli.ts) as its own process against a Kafka cluster's log, as an auditor would. */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { databaseUrl, kafkaBrokers } from "./env.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

export const auditVerify = (log: { readonly schema: string; readonly prefix: string; readonly partitions: number }) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      path.join(root, "node_modules/.bin/tsx"),
      ["bin/cli.ts", "audit", "verify"],
      {
        cwd: root,
        timeout: 120_000,
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl,
          DB_SCHEMA: log.schema,
          KAFKA_BROKERS: kafkaBrokers.join(","),
          KAFKA_TOPIC_PREFIX: log.prefix,
          LOG_PARTITIONS: String(log.partitions)
        }
      },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })
