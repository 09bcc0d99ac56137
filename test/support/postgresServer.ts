/**
 * A Postgres server of a test's own (initdb into a temp folder, on a free loopback port), which
 * the test may stop, start and restart under load without disturbing the shared one other
 * suites use. As root (CI), the server runs as the `postgres` user, which initdb requires.
 */
import { execFileSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { freePort } from "../../src/platform/ports.ts"

export interface PostgresServer {
  readonly url: string
  readonly port: number
  /** `pg_ctl stop -m fast`: open connections are closed, as `pg_ctlcluster … stop` does. */
  readonly stop: () => void
  readonly start: () => void
  /** `pg_ctl restart -m fast`, as `pg_ctlcluster … restart` does. */
  readonly restart: () => void
  /** Stops the server and removes its folder. */
  readonly remove: () => void
}

const binDir = () => {
  if (process.env.PG_BIN_DIR) return process.env.PG_BIN_DIR
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  if (versions.length === 0) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql), and no PG_BIN_DIR")
  return path.join(root, versions[0], "bin")
}

export const startPostgresServer = async (): Promise<PostgresServer> => {
  const bin = binDir()
  const dir = mkdtempSync(path.join(tmpdir(), "svc-pg-"))
  const port = await freePort()
  const asRoot = process.getuid?.() === 0
  if (asRoot) chownSync(dir, ...postgresIds())
  const run = (tool: string, args: ReadonlyArray<string>) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", path.join(bin, tool), ...args], { stdio: "pipe", cwd: dir })
      : execFileSync(path.join(bin, tool), [...args], { stdio: "pipe", cwd: dir })
  const data = path.join(dir, "data")
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
  // fsync off: the server's durability is not what these tests check, its going away and coming back is
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`
  const ctl = (...args: ReadonlyArray<string>) => run("pg_ctl", ["-D", data, "-l", path.join(dir, "server.log"), "-o", options, "-w", "-t", "60", ...args])
  ctl("start")
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => ctl("stop", "-m", "fast"),
    start: () => ctl("start"),
    restart: () => ctl("restart", "-m", "fast"),
    remove: () => {
      try {
        ctl("stop", "-m", "immediate")
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

const postgresIds = (): [number, number] => [Number(execFileSync("id", ["-u", "postgres"])), Number(execFileSync("id", ["-g", "postgres"]))]
