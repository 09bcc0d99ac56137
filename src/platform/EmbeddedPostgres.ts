/**
 * The embedded default: PGlite with its files under the data directory, served on a loopback
 * port by pglite-socket so that the same postgres.js code runs with nothing installed.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect } from "effect"
import { mkdir } from "node:fs/promises"
import * as path from "node:path"
import { DbError } from "../../streams/Db.ts"
import { freePort } from "./ports.ts"

/** Starts PGlite on `<dataDir>/pgdata` and returns its connection URL; stops with the scope. */
export const startEmbeddedPostgres = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const dir = path.join(dataDir, "pgdata")
        await mkdir(dir, { recursive: true })
        const db = await PGlite.create(dir)
        const port = await freePort()
        const server = new PGLiteSocketServer({ db, port, host: "127.0.0.1", maxConnections: 4 })
        await server.start()
        return { db, server, url: `postgres://postgres@127.0.0.1:${port}/postgres` }
      },
      catch: (cause) => new DbError({ message: `embedded Postgres failed to start: ${String(cause)}`, cause })
    }),
    ({ db, server }) => Effect.promise(async () => {
      await server.stop()
      await db.close()
    })
  )
