/** Runs the operator CLI `svc` (bin/cli.ts) as its own process against a test node's database and
 * embedded log, as an operator would: while the node runs on Postgres, or after it stopped when it
 * runs embedded PGlite in its data directory (PGlite has one owner). */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestNode } from "./platform.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

export const runCli = (node: TestNode, args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      path.join(root, "node_modules/.bin/tsx"),
      ["bin/cli.ts", ...args],
      {
        cwd: root,
        timeout: 60_000,
        env: {
          ...process.env,
          SVC_DATA_DIR: node.config.dataDir,
          DATABASE_URL: node.config.databaseUrl ?? "",
          DB_SCHEMA: node.config.dbSchema,
          LOG_PARTITIONS: String(node.config.partitions),
          KAFKA_BROKERS: ""
        }
      },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })
