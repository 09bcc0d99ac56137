/**
 * `npm run bench`: events appended and projected per second on the embedded log and on Kafka, one
 * event per append and batched, and replay events per second. Real Postgres (DATABASE_URL) and,
 * when KAFKA_BROKERS is set, a real broker. Writes a Markdown table to stdout.
 *
 * The events are `node.created` of distinct nodes: each one costs the projection an actor_state
 * row and a nodes row, as in production.
 *
 * The hash chain's cost (docs/audit.md): the same appends through partition writers on a chained
 * and an unchained log, in turns (`BENCH_CHAIN_ROUNDS` rounds, each on fresh logs), and
 * `svc audit verify` of the whole chained log in events per second.
 *
 * `BENCH_LOGS=kafka` (or `embedded`) measures one log only; `BENCH_LINGER_MS` sets the Kafka
 * partition writers' linger (KafkaLog's default otherwise); `BENCH_CHAIN_ROUNDS=0` leaves out the
 * chain's cost. `BENCH_LINGER_SWEEP=0,1,2,5` adds, on Kafka, one event per append through
 * partition writers at each of those lingers, `BENCH_LINGER_ROUNDS` rounds (2) in turns, each on
 * a fresh log: on a shared machine only figures taken in turns compare.
 */
import { Effect, Fiber, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { cpus, totalmem } from "node:os"
import { encodeEvent, keyOf } from "../actors/kernel.ts"
import { NodeActor } from "../actors/node/actor.ts"
import { NodeCreated } from "../actors/node/events.ts"
import { actorKinds } from "../bin/App.ts"
import { connect, type DbService, migrate, service } from "../streams/Db.ts"
import * as EmbeddedLog from "../streams/EmbeddedLog.ts"
import { allPartitions, EventLog, type EventRecord } from "../streams/EventLog.ts"
import * as KafkaLog from "../streams/KafkaLog.ts"
import { partitionFor } from "../streams/partitioner.ts"
import { project, readCheckpoints } from "../streams/Projector.ts"
import { verifyLog } from "../streams/LogVerify.ts"
import { replay } from "../streams/Replay.ts"

const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const brokers = (process.env.KAFKA_BROKERS ?? "").split(",").filter((b) => b !== "")
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000)
const PARTITIONS = 12
const CONCURRENCY = 64
const BATCH = 100
const CHAIN_ROUNDS = Number(process.env.BENCH_CHAIN_ROUNDS ?? 2)
const LOGS = (process.env.BENCH_LOGS ?? "embedded,kafka").split(",")
const LINGER_MS = process.env.BENCH_LINGER_MS === undefined ? KafkaLog.DEFAULT_APPEND_LINGER_MS : Number(process.env.BENCH_LINGER_MS)
const LINGER_SWEEP = (process.env.BENCH_LINGER_SWEEP ?? "").split(",").filter((ms) => ms !== "").map(Number)
const LINGER_ROUNDS = Number(process.env.BENCH_LINGER_ROUNDS ?? 2)

const name = () => `bench_${randomBytes(4).toString("hex")}`

const nodeCreated = (i: number, run: string): EventRecord => {
  const nodeId = `nod_${run}_${i}`
  const { type, payload } = encodeEvent(
    NodeActor,
    new NodeCreated({ nodeId, workspaceId: "wsp_bench", label: "Task", properties: { title: `task ${i}`, points: i % 13, done: i % 2 === 0 }, at: "2026-11-22T12:00:00.000Z" })
  )
  return { key: keyOf(NodeActor, nodeId), seq: 1, firstSeq: 1, type, payload, at: "2026-11-22T12:00:00.000Z", commandId: `cmd_${run}_${i}`, actor: "system" }
}

const pool = (schema: string) => service(connect({ url: databaseUrl, schema, max: 8 }), schema)

/**
 * Appends EVENTS events (`perAppend` per call, CONCURRENCY calls in flight) while projecting them;
 * events/s until all are projected. `through`: the log's shared append, or each partition's
 * fenced writer (Kafka: one transaction per group of appends), as the actor host appends.
 */
const appendAndProject = (db: DbService, perAppend: number, through: "log" | "writers") =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const run = randomBytes(3).toString("hex")
    const partitions = allPartitions(log.partitions)
    const writers = through === "writers" ? yield* Effect.forEach(partitions, (p) => log.openWriter(p)) : []
    const appendTo = (key: string, records: ReadonlyArray<EventRecord>) =>
      through === "writers" ? writers[partitionFor(key, log.partitions)].append(records) : log.append(key, records)
    const projector = yield* Effect.fork(project(db, actorKinds, partitions, () => {}))
    const started = performance.now()
    const calls = Array.from({ length: Math.ceil(EVENTS / perAppend) }, (_, c) => c)
    // a batched append carries events of one key's partition: use one key per batch
    yield* Effect.forEach(
      calls,
      (c) => {
        const records = Array.from({ length: perAppend }, (_, j) => nodeCreated(c * perAppend + j, run))
        const batchKey = records[0].key
        return appendTo(batchKey, perAppend === 1 ? records : records.map((r, j) => ({ ...r, key: `${batchKey}:${j}` })))
      },
      { concurrency: CONCURRENCY, discard: true }
    )
    const appended = performance.now()
    const ends = yield* log.endOffsets(partitions)
    for (;;) {
      const applied = yield* readCheckpoints(db, partitions)
      if (partitions.every((p) => applied.get(p)! >= ends.get(p)!)) break
      yield* Effect.sleep("20 millis")
    }
    const projected = performance.now()
    yield* Fiber.interrupt(projector)
    const total = calls.length * perAppend
    return { appendRate: total / ((appended - started) / 1000), projectedRate: total / ((projected - started) / 1000) }
  }).pipe(Effect.scoped)

const measure = (mode: string, logLayer: Layer.Layer<EventLog, unknown>, db: DbService) =>
  Effect.gen(function* () {
    const single = yield* appendAndProject(db, 1, "log")
    const batched = yield* appendAndProject(db, BATCH, "log")
    const singleFenced = yield* appendAndProject(db, 1, "writers")
    const batchedFenced = yield* appendAndProject(db, BATCH, "writers")
    const target = pool(name())
    const replayed = yield* replay(target, actorKinds)
    yield* Effect.promise(() => target.sql.end())
    const verifyStarted = performance.now()
    const reports = yield* verifyLog()
    const verifySeconds = (performance.now() - verifyStarted) / 1000
    const verified = reports.reduce((n, r) => n + r.events, 0)
    if (reports.some((r) => r.break !== undefined)) throw new Error(`the bench's log does not verify: ${JSON.stringify(reports.find((r) => r.break))}`)
    return [
      `| ${mode} | 1 per append, ${CONCURRENCY} in flight | ${Math.round(single.appendRate)} | ${Math.round(single.projectedRate)} |`,
      `| ${mode} | ${BATCH} per append, ${CONCURRENCY} in flight | ${Math.round(batched.appendRate)} | ${Math.round(batched.projectedRate)} |`,
      `| ${mode} | 1 per append, partition writers, ${CONCURRENCY} in flight | ${Math.round(singleFenced.appendRate)} | ${Math.round(singleFenced.projectedRate)} |`,
      `| ${mode} | ${BATCH} per append, partition writers, ${CONCURRENCY} in flight | ${Math.round(batchedFenced.appendRate)} | ${Math.round(batchedFenced.projectedRate)} |`,
      `| ${mode} | replay of ${replayed.events} events | | ${Math.round((replayed.events * 1000) / replayed.millis)} |`,
      `| ${mode} | svc audit verify of ${verified} events (read and checked) | | ${Math.round(verified / verifySeconds)} |`
    ]
  }).pipe(Effect.provide(logLayer))

type MakeLog = (schema: string, db: DbService, chained: boolean) => Layer.Layer<EventLog, unknown>

/** Appended events/s through partition writers, unchained and chained in turns, each on a fresh log and read model. */
const chainCost = (mode: string, makeLog: MakeLog) =>
  Effect.gen(function* () {
    const rates = { plain: [[], []] as Array<Array<number>>, chained: [[], []] as Array<Array<number>> }
    for (let round = 0; round < CHAIN_ROUNDS; round++) {
      for (const chained of [false, true]) {
        const schema = name()
        const db = pool(schema)
        yield* migrate(db.sql, schema)
        const [single, batched] = yield* Effect.all([appendAndProject(db, 1, "writers"), appendAndProject(db, BATCH, "writers")]).pipe(
          Effect.provide(makeLog(schema, db, chained))
        )
        rates[chained ? "chained" : "plain"][0].push(single.appendRate)
        rates[chained ? "chained" : "plain"][1].push(batched.appendRate)
        yield* Effect.promise(() => db.sql.end())
      }
    }
    return [0, 1].map((w) =>
      `| ${mode} | ${w === 0 ? 1 : BATCH} per append, partition writers | ${range(rates.plain[w])} | ${range(rates.chained[w])} | ${(median(rates.chained[w]) / median(rates.plain[w])).toFixed(3)} |`
    )
  })

const range = (xs: ReadonlyArray<number>) => `${Math.round(Math.min(...xs))} – ${Math.round(Math.max(...xs))}`
const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

const kafkaLog = (schema: string, chained: boolean, lingerMs: number) =>
  KafkaLog.layer({ brokers, prefix: schema, partitions: PARTITIONS, clientId: schema, chained, lingerMs })

/** One event per append through Kafka's partition writers at each linger of the sweep, in turns, each on a fresh log and read model. */
const lingerSweep = Effect.gen(function* () {
  const rates = LINGER_SWEEP.map(() => ({ appended: [] as Array<number>, projected: [] as Array<number> }))
  for (let round = 0; round < LINGER_ROUNDS; round++) {
    for (const [i, lingerMs] of LINGER_SWEEP.entries()) {
      const schema = name()
      const db = pool(schema)
      yield* migrate(db.sql, schema)
      const single = yield* appendAndProject(db, 1, "writers").pipe(Effect.provide(kafkaLog(schema, true, lingerMs)))
      rates[i].appended.push(single.appendRate)
      rates[i].projected.push(single.projectedRate)
      yield* Effect.promise(() => db.sql.end())
    }
  }
  return [
    "",
    `Kafka partition writers' linger: 1 event per append, ${CONCURRENCY} in flight, ${LINGER_ROUNDS} rounds in turns, ${EVENTS} events each.`,
    "",
    "| linger | appended events/s | appended and projected events/s | appended ÷ linger 0 (medians) |",
    "|---:|---:|---:|---:|",
    ...LINGER_SWEEP.map(
      (lingerMs, i) =>
        `| ${lingerMs} ms | ${range(rates[i].appended)} | ${range(rates[i].projected)} | ${LINGER_SWEEP[0] === 0 ? (median(rates[i].appended) / median(rates[0].appended)).toFixed(2) : ""} |`
    )
  ]
})

/** One fresh schema per log mode, so each projection starts from an empty read model. */
const main = Effect.gen(function* () {
  const header = [
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}; Postgres at ${new URL(databaseUrl).host}; ${EVENTS} events per run, ${PARTITIONS} partitions; Kafka partition writers' linger ${LINGER_MS} ms.`,
    "",
    "| log | workload | appended events/s | appended and projected events/s |",
    "|---|---|---:|---:|"
  ]
  const rows: string[] = []
  const chainRows: string[] = []
  const modes: Array<[string, MakeLog]> = [
    ["embedded", (schema, db, chained) => Layer.scoped(EventLog, EmbeddedLog.make(db.sql, { logSchema: `${schema}_log`, partitions: PARTITIONS, chained }))],
    ...(brokers.length > 0
      ? [
          ["kafka", (schema: string, _db: DbService, chained: boolean) => kafkaLog(schema, chained, LINGER_MS)] as [string, MakeLog]
        ]
      : [])
  ]
  for (const [mode, makeLog] of modes.filter(([mode]) => LOGS.includes(mode))) {
    const schema = name()
    const db = pool(schema)
    yield* migrate(db.sql, schema)
    rows.push(...(yield* measure(mode, makeLog(schema, db, true), db)))
    yield* Effect.promise(() => db.sql.end())
    if (CHAIN_ROUNDS > 0) chainRows.push(...(yield* chainCost(mode, makeLog)))
  }
  if (brokers.length === 0 && LOGS.includes("kafka")) rows.push("| kafka | not measured: KAFKA_BROKERS unset | | |")
  const chainTable = [
    "",
    `The hash chain's cost: appended events/s, ${CHAIN_ROUNDS} rounds in turns (unchained, chained), ${EVENTS} events each.`,
    "",
    "| log | workload | unchained | chained | chained ÷ unchained (medians) |",
    "|---|---|---:|---:|---:|",
    ...chainRows
  ]
  const lingerTable = brokers.length > 0 && LINGER_SWEEP.length > 0 ? yield* lingerSweep : []
  console.log([...(rows.length === 0 ? [header[0]] : [...header, ...rows]), ...(chainRows.length === 0 ? [] : chainTable), ...lingerTable].join("\n"))
})

Effect.runPromise(Effect.scoped(main)).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)

