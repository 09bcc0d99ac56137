/**
 * `svc`, the operator's command line (`npm run svc -- <command>`).
 *
 *   replay [--into <schema>] [--compare]
 *     Rebuilds every read model from the log into a fresh schema (default
 *     `<DB_SCHEMA>_replay_<time>`); --compare then checks it table by table against the live
 *     schema. With embedded Postgres, stop the server first: PGlite has one owner.
 */
import { Effect, Exit, Layer } from "effect"
import { parseArgs } from "node:util"
import { compareSchemas, replay } from "../streams/Replay.ts"
import { actorKinds, logLayer } from "./App.ts"
import { loadConfig } from "./Config.ts"
import { connect, Db, service } from "./Db.ts"
import { startEmbeddedPostgres } from "./EmbeddedPostgres.ts"

const usage = "usage: svc replay [--into <schema>] [--compare]"

const replayCommand = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { values } = parseArgs({ args: [...args], options: { into: { type: "string" }, compare: { type: "boolean" } } })
    const config = loadConfig()
    const url = config.databaseUrl ?? (yield* startEmbeddedPostgres(config.dataDir)).url
    const pool = (schema: string) =>
      Effect.acquireRelease(
        Effect.sync(() => service(connect({ url, schema, max: config.databaseUrl ? 4 : 1 }), schema)),
        (db) => Effect.promise(() => db.sql.end({ timeout: 5 }))
      )
    const live = yield* pool(config.dbSchema)
    const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14)
    const target = yield* pool(values.into ?? `${config.dbSchema}_replay_${stamp}`)
    const stats = yield* replay(target, actorKinds).pipe(
      Effect.provide(logLayer(config).pipe(Layer.provide(Layer.succeed(Db, live))))
    )
    const rate = stats.millis === 0 ? stats.events : Math.round((stats.events * 1000) / stats.millis)
    console.log(`replayed ${stats.events} events in ${stats.millis} ms (${rate} events/s) into schema ${target.schema}`)
    if (values.compare) {
      const tables = yield* compareSchemas(live, target)
      for (const t of tables) console.log(`${t.equal ? "same" : "DIFFERENT"}  ${t.table} (${t.rows} rows)`)
      if (tables.some((t) => !t.equal)) return yield* Effect.fail(new Error("the replayed read models differ from the live ones"))
    }
  })

const [command, ...args] = process.argv.slice(2)
const program = command === "replay" ? replayCommand(args) : Effect.fail(new Error(usage))

Effect.runPromiseExit(Effect.scoped(program)).then((exit) => {
  if (Exit.isFailure(exit)) {
    console.error(String(exit.cause).split("\n")[0])
    process.exit(1)
  }
  process.exit(0)
})
