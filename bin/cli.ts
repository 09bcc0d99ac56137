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
 *   turn replay <runId> | turn replay --all --since <RFC 3339 time>
 *     Re-runs a recorded turn under this build's code against its tape (docs/audit.md, "Replaying a
 *     turn"), calling no model and no tool, and prints "identical" or the first divergence (the
 *     step, the tool call, the field); with --all --since, every ended turn started since then,
 *     one line each and a summary. Exits 1 on a divergence or a run it cannot replay.
 *
 *   audit verify [--partition <P>] [--from <OFFSET>] [--key <public key file>]
 *     Reads the log (Kafka or embedded; no read model) and recomputes every partition's hash chain
 *     (docs/audit.md), and checks every signed checkpoint against the public key: the PEM or JSON
 *     document `GET /.well-known/svc-audit-key` serves, else the operator's own key
 *     (AUDIT_SIGNING_KEY, or the data directory's audit-signing.key). Prints one line per
 *     partition and the first break of each, with its partition and offset; exits non-zero on any
 *     break.
 *
 *   audit verify of a repartitioned log goes across the boundary: each generation's chains, oldest
 *     first, then that every genesis record of the next one names exactly their final heads.
 *     --generation <G> verifies that generation alone (after the log before it was removed).
 *
 *   log repartition --partitions <N>
 *     Offline: stop every node first. Rewrites the log into a new generation of N partitions (more
 *     than it has), each key's events in order with their seq on the key's new partition, each
 *     partition's chain starting from a genesis record signed with the operator's audit key that
 *     names the old chains' final heads (docs/audit.md); moves the read models' checkpoints to the
 *     new log, and makes it the one nodes use. Then start every node with LOG_PARTITIONS=N (a node
 *     with another count refuses to start). The old log is kept, not written; the command prints
 *     how to remove it.
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
import { Cause, Context, Effect, Exit, Layer, Option } from "effect"
import { parseArgs } from "node:util"
import { compareSchemas, parseUntil, projectToEnd, replay } from "../streams/Replay.ts"
import { finalHead, type PartitionReport, verifyLog } from "../streams/LogVerify.ts"
import { beginGeneration, type Generation, generationName, generations, resolveLayout } from "../streams/Layout.ts"
import { repartition } from "../streams/Repartition.ts"
import { EventLog } from "../streams/EventLog.ts"
import { runningNodes } from "../streams/KafkaLog.ts"
import { makeSigner, privateKeyFromSeed } from "../streams/Checkpoints.ts"
import { createPublicKey, type KeyObject } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as path from "node:path"
import * as AccessCache from "../src/checkpoint/AccessCache.ts"
import { actorKinds, generationLogLayer, layoutPlace, logLayer, operatorHost, registry } from "./App.ts"
import { loadConfig } from "../src/platform/Config.ts"
import * as Envelope from "../src/marketplace/Envelope.ts"
import { Capabilities } from "../src/checkpoint/Capability.ts"
import { describeVerdict, loadRecordedTurn, replayTurn, type Unreplayable } from "../src/assistant/TurnReplay.ts"
import { endedTurnsSince } from "../src/assistant/Queries.ts"
import { connect, Db, service } from "../streams/Db.ts"
import { startEmbeddedPostgres } from "../src/platform/EmbeddedPostgres.ts"
import { grantCredits, setBillingSuspended } from "../src/billing/BillingOperator.ts"
import { ISSUABLE_PURPOSES, issueCredential } from "../src/identity/IssueCredential.ts"

const usage = [
  "usage: svc replay [--into <schema>] [--compare] [--until <RFC 3339 time | partition:offset,...>]",
  "       svc turn replay <runId> | turn replay --all --since <RFC 3339 time>",
  "       svc audit verify [--partition <P>] [--from <OFFSET>] [--key <public key file>] [--generation <G>]",
  "       svc log repartition --partitions <N>   (offline: stop every node first)",
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

const turnCommand = ([action, ...args]: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    if (action !== "replay") return yield* Effect.fail(new Error(usage))
    const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: { all: { type: "boolean" }, since: { type: "string" } } })
    const since = values.since === undefined ? undefined : new Date(values.since)
    const one = positionals.length === 1 && !values.all && since === undefined
    const window = positionals.length === 0 && values.all === true && since !== undefined && !Number.isNaN(since.getTime()) && /[zZ]|[+-]\d\d:\d\d$/.test(values.since!)
    if (!one && !window) return yield* Effect.fail(new Error(`turn replay takes one run id, or --all --since <RFC 3339 time with its offset>\n${usage}`))
    const { config, schema } = yield* database
    const live = schema(config.dbSchema)
    const replayOne = (runId: string) =>
      Effect.gen(function* () {
        const recorded = yield* loadRecordedTurn(runId)
        if ("_tag" in recorded) return { line: unreplayable(runId, recorded), replayed: false, identical: false }
        const verdict = yield* replayTurn(recorded)
        return { line: describeVerdict(runId, verdict), replayed: true, identical: verdict.identical }
      })
    const results = yield* (one ? replayOne(positionals[0]).pipe(Effect.map((r) => [r])) : Effect.flatMap(endedTurnsSince(since!), (runIds) => Effect.forEach(runIds, replayOne))).pipe(
      // a sealed tape is opened with its person's key (actors/personal.ts)
      // ... and replayed under this build's capabilities
      Effect.provide(Layer.mergeAll(logLayer(config), Envelope.layer(config.authTokenEncryptionKey), Layer.succeed(Capabilities, registry)).pipe(Layer.provideMerge(Layer.succeed(Db, live))))
    )
    if (one && !results[0].replayed) return yield* Effect.fail(new Error(results[0].line))
    for (const result of results) console.log(result.line)
    const diverged = results.filter((r) => !r.identical).length
    if (window) console.log(`${results.length} turns replayed since ${values.since}: ${results.length - diverged} identical, ${diverged} diverged or not replayable`)
    if (diverged > 0) return yield* Effect.fail(new Error(one ? `run ${positionals[0]}: the replay diverges from the recorded turn` : `${diverged} of ${results.length} turns did not replay identical`))
  })

const unreplayable = (runId: string, why: Unreplayable): string =>
  why._tag === "RunNotFound" ? `no turn ${runId}`
  : why._tag === "RunNotEnded" ? `run ${runId} has not ended: only an ended turn is replayed`
  : why._tag === "Erased" ? `run ${runId} belongs to an erased person: its tape cannot be opened`
  : `run ${runId} was recorded without a tape (before turns were taped)`

const wholeNumber = (name: string, text: string | undefined) =>
  text === undefined ? Effect.succeed(undefined)
  : /^\d+$/.test(text) ? Effect.succeed(Number(text))
  : Effect.fail(new Error(`--${name} takes a whole number\n${usage}`))

const printReports = (reports: ReadonlyArray<PartitionReport>) => {
  for (const r of reports) {
    const unchained = r.unchained > 0 ? `, ${r.unchained} from before the chain` : ""
    console.log(`partition ${r.partition}: ${r.events} events${unchained}, ${r.checkpoints} checkpoints, ${r.break === undefined ? `intact, head ${r.head ?? "none"}` : `BROKEN at offset ${r.break.offset} (${r.break.reason})`}`)
  }
}

const auditCommand = ([action, ...args]: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    if (action !== "verify") return yield* Effect.fail(new Error(usage))
    const { values } = yield* Effect.try({
      try: () => parseArgs({ args: [...args], options: { partition: { type: "string" }, from: { type: "string" }, key: { type: "string" }, generation: { type: "string" } } }),
      catch: (e) => new Error(`${(e as Error).message}\n${usage}`)
    })
    const partition = yield* wholeNumber("partition", values.partition)
    const from = yield* wholeNumber("from", values.from)
    const only = yield* wholeNumber("generation", values.generation)
    const { config, schema } = yield* database
    const db = schema(config.dbSchema)
    const recorded = (yield* generations(layoutPlace(config, db.sql))).filter((g) => g.state !== "building")
    const current = recorded.find((g) => g.state === "current") ?? { generation: 1, partitions: config.partitions, name: layoutPlace(config, db.sql).baseName, state: "current" as const }
    // from a partition or an offset, or one generation asked for: that one alone; else every generation kept, oldest first
    const chosen = only !== undefined ? recorded.filter((g) => g.generation === only)
      : partition !== undefined || from !== undefined || recorded.length === 0 ? [current]
      : recorded
    if (chosen.length === 0) return yield* Effect.fail(new Error(`the log has no generation ${only} (generations ${recorded.map((g) => g.generation).join(", ") || "1"})`))
    if (partition !== undefined && partition >= chosen[0].partitions) {
      return yield* Effect.fail(new Error(`the log has partitions 0-${chosen[0].partitions - 1}`))
    }
    const publicKey = yield* Effect.tryPromise({
      try: () => auditPublicKey(values.key, config.audit.signingKey, config.dataDir),
      catch: (e) => new Error(`no usable public key: ${(e as Error).message}`)
    })
    if (publicKey === undefined) console.log("no public key (--key, AUDIT_SIGNING_KEY or the data directory's): checkpoints' signatures are not checked")
    const started = Date.now()
    const broken: Array<string> = []
    let events = 0
    let previous: { readonly generation: Generation; readonly reports: ReadonlyArray<PartitionReport> } | undefined
    for (const generation of chosen) {
      if (chosen.length > 1 || generation.generation > 1) {
        console.log(`log generation ${generation.generation} (${generation.partitions} partitions, ${generation.name}, ${generation.state}):`)
      }
      const genesis = previous === undefined ? undefined : {
        generation: generation.generation,
        partitions: generation.partitions,
        previousGeneration: previous.generation.generation,
        heads: previous.reports.map(finalHead)
      }
      const reports = yield* verifyLog({ partitions: partition === undefined ? undefined : [partition], from, publicKey, genesis }).pipe(
        Effect.provide(generationLogLayer(config, generation).pipe(Layer.provide(Layer.succeed(Db, db))))
      )
      printReports(reports)
      if (genesis !== undefined && reports.every((r) => r.break === undefined)) {
        console.log(`every partition's genesis record names the ${genesis.heads.length} final heads of generation ${genesis.previousGeneration}, signed`)
      }
      events += reports.reduce((n, r) => n + r.events, 0)
      broken.push(...reports.flatMap((r) => (r.break === undefined ? [] : [r.break.message])))
      previous = { generation, reports }
    }
    const millis = Date.now() - started
    console.log(`verified ${events} events in ${millis} ms (${millis === 0 ? events : Math.round((events * 1000) / millis)} events/s)`)
    if (broken.length > 0) return yield* Effect.fail(new Error(`the log was altered: ${broken.join("; ")}`))
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

/** The operator's signing key (AUDIT_SIGNING_KEY, else the data directory's), never made here: a new one would sign what no node's key document names. */
const operatorSigningKey = async (configured: string | undefined, dataDir: string): Promise<KeyObject | undefined> => {
  if (configured !== undefined) return privateKeyFromSeed(configured)
  const stored = await readFile(path.join(dataDir, "audit-signing.key"), "utf8").catch(() => undefined)
  return stored === undefined ? undefined : privateKeyFromSeed(stored.trim())
}

/** What to run to remove a generation's log once it is no longer wanted (`svc audit verify --generation` then skips it). */
const removalOf = (kafka: boolean, generation: Generation) =>
  kafka
    ? `delete the topics ${generation.name}.events and ${generation.name}.commands (kafka-topics.sh --bootstrap-server <broker> --delete --topic ${generation.name}.events, then .commands)`
    : generation.generation === 1
      ? `drop table ${generation.name}.log_events, ${generation.name}.log_heads (keep ${generation.name}.log_layout)`
      : `drop schema ${generation.name} cascade`

const logCommand = ([action, ...args]: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    if (action !== "repartition") return yield* Effect.fail(new Error(usage))
    const { values } = yield* Effect.try({
      try: () => parseArgs({ args: [...args], options: { partitions: { type: "string" } } }),
      catch: (e) => new Error(`${(e as Error).message}\n${usage}`)
    })
    const partitions = yield* wholeNumber("partitions", values.partitions)
    if (partitions === undefined) return yield* Effect.fail(new Error(`--partitions is required\n${usage}`))
    const { config, schema } = yield* database
    const live = schema(config.dbSchema)
    const place = layoutPlace(config, live.sql)
    const kafka = config.kafkaBrokers.length > 0
    const from = yield* resolveLayout(place, config.partitions)
    if (partitions <= from.partitions) return yield* Effect.fail(new Error(`the log has ${from.partitions} partitions: --partitions must be more`))
    if (kafka) {
      const running = yield* runningNodes(config.kafkaBrokers, from.name)
      if (running > 0) return yield* Effect.fail(new Error(`${running} node(s) of this cluster are running (group ${from.name}.hosts): stop every node first`))
    }
    const privateKey = yield* Effect.promise(() => operatorSigningKey(config.audit.signingKey, config.dataDir))
    if (privateKey === undefined) {
      return yield* Effect.fail(new Error(`the genesis records are signed with the operator's audit key: set AUDIT_SIGNING_KEY, or SVC_DATA_DIR to the nodes' data directory (audit-signing.key)`))
    }
    const signer = makeSigner(privateKey, { events: config.audit.checkpointEvents, seconds: config.audit.checkpointSeconds })
    const next = yield* beginGeneration(place, from, partitions)
    const to: Generation = { generation: next, partitions, name: generationName(place, next), state: "building" }
    console.log(`rewriting log generation ${from.generation} (${from.partitions} partitions, ${from.name}) into generation ${next} (${partitions} partitions, ${to.name})`)
    const logOf = (generation: Generation) =>
      Layer.build(generationLogLayer(config, generation).pipe(Layer.provide(Layer.succeed(Db, live)))).pipe(Effect.map((context) => Context.get(context, EventLog)))
    const stats = yield* repartition({ place, from, to, oldLog: yield* logOf(from), newLog: yield* logOf(to), signer, live, kinds: actorKinds })
    const rate = stats.copyMillis === 0 ? stats.events : Math.round((stats.events * 1000) / stats.copyMillis)
    console.log(`copied ${stats.events} events in ${stats.copyMillis} ms (${rate} events/s); ${stats.millis} ms in all`)
    console.log(`the log is now generation ${next}, ${partitions} partitions: start every node with LOG_PARTITIONS=${partitions}`)
    console.log(`the old log (generation ${from.generation}) is kept as it was; once audited (svc audit verify), remove it: ${removalOf(kafka, from)}`)
  })

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
  : command === "turn" ? turnCommand(args)
  : command === "audit" ? auditCommand(args)
  : command === "issue-key" ? issueKeyCommand(args)
  : command === "billing" ? billingCommand(args)
  : command === "log" ? logCommand(args)
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
