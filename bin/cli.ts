/**
 * `svc`, the operator's command line (`npm run svc -- <command>`).
 *
 *   replay [--into <schema>] [--compare] [--until <RFC 3339 time | partition:offset,...>]
 *     Rebuilds every read model from the log into a fresh schema (default
 *     `<DB_SCHEMA>_replay_<time>`); --compare first brings the live read models up to the log's
 *     end (what a node stopped before folding it left behind; the projection's own code, safe
 *     beside running nodes), replays up to that same end, then checks every table against the
 *     live schema, saying how far behind the live read models were. With --until, the read models as they stood then (each partition up to its first
 *     event recorded later than the time, or through the offsets named; a partition not named
 *     contributes nothing), into `<DB_SCHEMA>_at_<time>` unless --into; the live schema is not
 *     touched. With embedded Postgres, stop the server first: PGlite has one owner.
 *
 *   audit verify [--partition <P>] [--from <OFFSET>] [--key <public key file>]
 *     Reads the log (Kafka or embedded; no read model) and recomputes every partition's hash chain
 *     (docs/audit.md), and checks every signed checkpoint against the public key: the PEM or JSON
 *     document `GET /.well-known/svc-audit-key` serves, else the operator's own key
 *     (AUDIT_SIGNING_KEY, or the data directory's audit-signing.key). Prints one line per
 *     partition and the first break of each, with its partition and offset; exits non-zero on any
 *     break.
 *
 *   issue-key --purpose <svc_host_v1|svc_gateway_v1|svc_telemetry_v1> --org <slug>
 *             [--workspace <slug>] [--machine <id>] [--name <text>]
 *     Issues a machine credential (spec 5 rules 8 and 9): a host key for one machine (needs
 *     --workspace and --machine, and enrols the machine), a gateway key, or a telemetry key;
 *     without --workspace, an organization-level key. Prints the key id and the raw key, which is
 *     shown this once and never stored. It appends to the log the running nodes read (same
 *     DATABASE_URL, DB_SCHEMA, KAFKA_BROKERS, LOG_PARTITIONS), through each partition's writer:
 *     with Kafka, the running node that owns it (so a node must be running); without Kafka, stop
 *     the server first. CLI logins (cli_session_v1) come only from the device login.
 *
 *   billing grant <orgSlug> <credits> | billing suspend <orgSlug> | billing resume <orgSlug>
 *     Grants credits (one per model token; the first grant turns metering on) or suspends and
 *     resumes the organization's billing. The command goes to the organization's billing actor:
 *     with Kafka, to its owner among the running nodes; without Kafka, this command decides it
 *     itself, so stop the server first (a running node would answer some requests with a
 *     retryable 503 meanwhile).
 */
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { parseArgs } from "node:util"
import { compareSchemas, parseUntil, projectToEnd, replay } from "../streams/Replay.ts"
import { verifyLog } from "../streams/LogVerify.ts"
import { privateKeyFromSeed } from "../streams/Checkpoints.ts"
import { createPublicKey, type KeyObject } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as path from "node:path"
import * as AccessCache from "../src/checkpoint/AccessCache.ts"
import { actorKinds, logLayer, operatorHost } from "./App.ts"
import { loadConfig } from "../src/platform/Config.ts"
import { connect, Db, service } from "../streams/Db.ts"
import { startEmbeddedPostgres } from "../src/platform/EmbeddedPostgres.ts"
import { grantCredits, setBillingSuspended } from "../src/billing/BillingOperator.ts"
import { ISSUABLE_PURPOSES, issueCredential } from "../src/identity/IssueCredential.ts"

const usage = [
  "usage: svc replay [--into <schema>] [--compare] [--until <RFC 3339 time | partition:offset,...>]",
  "       svc audit verify [--partition <P>] [--from <OFFSET>] [--key <public key file>]",
  `       svc issue-key --purpose <${ISSUABLE_PURPOSES.join("|")}> --org <slug> [--workspace <slug>] [--machine <id>] [--name <text>]`,
  "       svc billing grant <orgSlug> <credits> | billing suspend <orgSlug> | billing resume <orgSlug>"
].join("\n")

/**
 * The configured Postgres (embedded when no URL is set), closed with the scope: one pool for every
 * schema the command touches, since queries name their schema. Embedded, the pool is one
 * connection: pglite-socket interleaves its connections message by message, so a second one
 * would break the first one's statements (a replay failed on `portal "" does not exist`).
 */
const database = Effect.gen(function* () {
  const config = loadConfig()
  const url = config.databaseUrl ?? (yield* startEmbeddedPostgres(config.dataDir)).url
  const sql = yield* Effect.acquireRelease(
    Effect.sync(() => connect({ url, schema: config.dbSchema, max: config.databaseUrl ? 8 : 1 })),
    (sql) => Effect.promise(() => sql.end({ timeout: 5 }))
  )
  return { config, schema: (name: string) => service(sql, name) }
})

const replayCommand = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { values } = parseArgs({ args: [...args], options: { into: { type: "string" }, compare: { type: "boolean" }, until: { type: "string" } } })
    const until = values.until === undefined ? undefined : parseUntil(values.until)
    if (values.until !== undefined && until === undefined) {
      return yield* Effect.fail(new Error(`--until takes an RFC 3339 time with its offset (2026-11-24T10:00:00Z) or partition:offset pairs (0:120,3:77)\n${usage}`))
    }
    if (until !== undefined && values.compare) return yield* Effect.fail(new Error(`--compare compares with the live read models, which are not as they stood then\n${usage}`))
    const { config, schema } = yield* database
    const live = schema(config.dbSchema)
    const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14)
    const target = schema(values.into ?? `${config.dbSchema}_${until === undefined ? "replay" : "at"}_${stamp}`)
    if (target.schema === live.schema) return yield* Effect.fail(new Error("a replay never writes into the live schema"))
    const logOfLive = logLayer(config).pipe(Layer.provide(Layer.succeed(Db, live)))
    // compared at one position: the live read models brought up to the log's end, the replay up to the same end
    let through = until
    if (values.compare) {
      const { ends, behind } = yield* projectToEnd(live, actorKinds).pipe(Effect.provide(logOfLive))
      console.log(behind === 0
        ? "the live read models hold the whole log"
        : `the live read models were ${behind} log positions behind the log's end; brought them up to it first`)
      through = { _tag: "positions", through: new Map([...ends].map(([p, end]) => [p, end - 1])) }
    }
    const stats = yield* replay(target, actorKinds, through).pipe(Effect.provide(logOfLive))
    const rate = stats.millis === 0 ? stats.events : Math.round((stats.events * 1000) / stats.millis)
    console.log(`replayed ${stats.events} events in ${stats.millis} ms (${rate} events/s) into schema ${target.schema}`)
    if (values.compare) {
      const tables = yield* compareSchemas(live, target)
      for (const t of tables) console.log(`${t.equal ? "same" : "DIFFERENT"}  ${t.table} (${t.rows} rows)`)
      if (tables.some((t) => !t.equal)) return yield* Effect.fail(new Error("the replayed read models differ from the live ones"))
    }
  })

const auditCommand = ([action, ...args]: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    if (action !== "verify") return yield* Effect.fail(new Error(usage))
    const { values } = yield* Effect.try({
      try: () => parseArgs({ args: [...args], options: { partition: { type: "string" }, from: { type: "string" }, key: { type: "string" } } }),
      catch: (e) => new Error(`${(e as Error).message}\n${usage}`)
    })
    const wholeNumber = (name: string, text: string | undefined) =>
      text === undefined ? Effect.succeed(undefined)
      : /^\d+$/.test(text) ? Effect.succeed(Number(text))
      : Effect.fail(new Error(`--${name} takes a whole number\n${usage}`))
    const partition = yield* wholeNumber("partition", values.partition)
    const from = yield* wholeNumber("from", values.from)
    const { config, schema } = yield* database
    if (partition !== undefined && partition >= config.partitions) {
      return yield* Effect.fail(new Error(`the log has partitions 0-${config.partitions - 1}`))
    }
    const publicKey = yield* Effect.tryPromise({
      try: () => auditPublicKey(values.key, config.audit.signingKey, config.dataDir),
      catch: (e) => new Error(`no usable public key: ${(e as Error).message}`)
    })
    if (publicKey === undefined) console.log("no public key (--key, AUDIT_SIGNING_KEY or the data directory's): checkpoints' signatures are not checked")
    const started = Date.now()
    const reports = yield* verifyLog({ partitions: partition === undefined ? undefined : [partition], from, publicKey }).pipe(
      Effect.provide(logLayer(config).pipe(Layer.provide(Layer.succeed(Db, schema(config.dbSchema)))))
    )
    const millis = Date.now() - started
    const events = reports.reduce((n, r) => n + r.events, 0)
    for (const r of reports) {
      const unchained = r.unchained > 0 ? `, ${r.unchained} from before the chain` : ""
      console.log(`partition ${r.partition}: ${r.events} events${unchained}, ${r.checkpoints} checkpoints, ${r.break === undefined ? `intact, head ${r.head ?? "none"}` : `BROKEN at offset ${r.break.offset} (${r.break.reason})`}`)
    }
    console.log(`verified ${events} events in ${millis} ms (${millis === 0 ? events : Math.round((events * 1000) / millis)} events/s)`)
    const broken = reports.flatMap((r) => (r.break === undefined ? [] : [r.break]))
    if (broken.length > 0) return yield* Effect.fail(new Error(`the log was altered: ${broken.map((b) => b.message).join("; ")}`))
  })

/** The key to check checkpoints with: a file given (PEM, or the key document's JSON), else the operator's own, if any. */
const auditPublicKey = async (file: string | undefined, configured: string | undefined, dataDir: string): Promise<KeyObject | undefined> => {
  if (file !== undefined) {
    const text = await readFile(file, "utf8")
    if (!text.trimStart().startsWith("{")) return createPublicKey(text)
    const document = JSON.parse(text) as { publicKey?: string }
    return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: String(document.publicKey) }, format: "jwk" })
  }
  if (configured !== undefined) return createPublicKey(privateKeyFromSeed(configured))
  const stored = await readFile(path.join(dataDir, "audit-signing.key"), "utf8").catch(() => undefined)
  return stored === undefined ? undefined : createPublicKey(privateKeyFromSeed(stored.trim()))
}

const issueKeyCommand = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { values } = yield* Effect.try({
      try: () =>
        parseArgs({
          args: [...args],
          options: {
            purpose: { type: "string" },
            org: { type: "string" },
            workspace: { type: "string" },
            machine: { type: "string" },
            name: { type: "string" }
          }
        }),
      catch: (e) => new Error(`${(e as Error).message}\n${usage}`)
    })
    if (values.purpose === undefined || values.org === undefined) return yield* Effect.fail(new Error(`--purpose and --org are required\n${usage}`))
    const { config, schema } = yield* database
    const db = schema(config.dbSchema)
    const issued = yield* issueCredential({
      orgSlug: values.org,
      workspaceSlug: values.workspace,
      purpose: values.purpose,
      name: values.name,
      machineId: values.machine
    }).pipe(
      // appended through the partitions' writers (the hash chain's): with Kafka, their owners'
      Effect.provide(Layer.mergeAll(logLayer(config), operatorHost(config), AccessCache.layer).pipe(Layer.provideMerge(Layer.succeed(Db, db)))),
      Effect.mapError((e) => new Error(`issue-key refused: ${e.message}`))
    )
    const place = issued.workspaceId === null ? `organization ${values.org}` : `workspace ${values.org}/${values.workspace}`
    console.log(`issued a ${issued.purpose} key in ${place}${issued.machineId === null ? "" : ` for machine ${issued.machineId}`}`)
    console.log(`keyId:  ${issued.keyId}`)
    console.log(`rawKey: ${issued.rawKey}`)
    console.log("the raw key is shown only this once and is not stored; keep it now")
  })

const billingCommand = ([action, orgSlug, credits, ...rest]: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const operation =
      orgSlug === undefined || rest.length > 0 ? undefined
      : action === "grant" && credits !== undefined && /^\d+$/.test(credits) ? grantCredits(orgSlug, Number(credits))
      : (action === "suspend" || action === "resume") && credits === undefined ? setBillingSuspended(orgSlug, action === "suspend")
      : undefined
    if (operation === undefined) return yield* Effect.fail(new Error(usage))
    const { config, schema } = yield* database
    const db = schema(config.dbSchema)
    const billing = yield* operation.pipe(
      Effect.provide(operatorHost(config).pipe(Layer.provideMerge(Layer.succeed(Db, db)))),
      Effect.mapError((e) => new Error(`billing ${action} refused: ${e.message}`))
    )
    console.log(`organization ${orgSlug}: credits ${billing.credits ?? "unmetered"}, ${billing.suspended ? "suspended" : "active"}`)
  })

const [command, ...args] = process.argv.slice(2)
const program =
  command === "replay" ? replayCommand(args)
  : command === "audit" ? auditCommand(args)
  : command === "issue-key" ? issueKeyCommand(args)
  : command === "billing" ? billingCommand(args)
  : Effect.fail(new Error(usage))

Effect.runPromiseExit(Effect.scoped(program)).then((exit) => {
  if (Exit.isFailure(exit)) {
    // an operator's error says all it means (usage spans lines); anything else, its first line
    const failure = Cause.failureOption(exit.cause)
    console.error(Option.isSome(failure) && failure.value instanceof Error ? `svc: ${failure.value.message}` : String(exit.cause).split("\n")[0])
    process.exit(1)
  }
  process.exit(0)
})
