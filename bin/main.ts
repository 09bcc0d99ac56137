/**
 * `npm start`: one node of the platform. With no DATABASE_URL it runs embedded PGlite under the
 * data directory; with no KAFKA_BROKERS it runs the embedded log.
 */
import { Effect, Exit } from "effect"
import { loadConfig } from "../src/Config.ts"
import { startNode } from "./node.ts"

const config = loadConfig()

const program = Effect.gen(function* () {
  const node = yield* startNode(config)
  const { bootstrap: data } = node
  console.log(`svc listening on ${config.host}:${node.port} (node ${node.host.nodeId}, log ${node.log.mode}, ${config.databaseUrl ? "postgres" : "embedded postgres"})`)
  if (config.metrics !== undefined) console.log(`metrics at http://${config.metrics.host}:${node.metricsPort}/metrics`)
  console.log(`${node.bootstrapped ? "bootstrapped" : "reusing"} ${config.dataDir}/bootstrap.json: org ${data.orgSlug}, workspace ${data.workspaceSlug}, owner ${data.ownerEmail}`)
  // secrets are never logged: the keys and the Owner's first password are in the file (mode 0600)
  if (node.bootstrapped) console.log("  the Owner's password and the bootstrap keys are in that file")
  yield* Effect.async<void>((resume) => {
    const stop = () => resume(Effect.void)
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
  })
})

Effect.runPromiseExit(Effect.scoped(program)).then((exit) => {
  if (Exit.isFailure(exit)) {
    console.error("svc stopped:", exit.cause)
    process.exit(1)
  }
  process.exit(0)
})
