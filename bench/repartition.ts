/**
 * How fast `svc log repartition` rewrites a log (real Postgres; Kafka too when KAFKA_BROKERS is
 * set): a fresh log of 12 partitions is filled with `BENCH_EVENTS` (20,000) chained events of
 * `BENCH_KEYS` (2,000) keys, through the partitions' writers in appends of 50, then rewritten into
 * 48 partitions by the CLI, whose line `copied N events in M ms (R events/s)` is printed.
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { generateKeyPairSync } from "node:crypto"
import * as path from "node:path"
import * as EmbeddedLog from "../streams/EmbeddedLog.ts"
import * as KafkaLog from "../streams/KafkaLog.ts"
import { connect, migrate } from "../streams/Db.ts"
import type { EventLogService, EventRecord } from "../streams/EventLog.ts"
import { partitionFor } from "../streams/partitioner.ts"

const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined) throw new Error("bench/repartition.ts rewrites a log on real Postgres: set DATABASE_URL")
const brokers = (process.env.KAFKA_BROKERS ?? "").split(",").filter((b) => b !== "")
const events = Number(process.env.BENCH_EVENTS ?? 20_000)
const keys = Number(process.env.BENCH_KEYS ?? 2_000)
const root = path.resolve(import.meta.dirname, "..")
const seed = Buffer.from(generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }).d!, "base64url").toString("base64")

/** `bench:<n>` keys: no actor kind has them, so the read models' catch-up skips them. */
const fill = (log: EventLogService) =>
  Effect.gen(function* () {
    const byPartition = new Map<number, Array<EventRecord>>()
    const seqs = new Map<string, number>()
    for (let i = 0; i < events; i++) {
      const key = `bench:${i % keys}`
      const seq = (seqs.get(key) ?? 0) + 1
      seqs.set(key, seq)
      const partition = partitionFor(key, log.partitions)
      const record = { key, seq, firstSeq: seq, type: "bench.event", payload: { i, text: "x".repeat(200) }, at: new Date().toISOString(), commandId: `c${i}`, actor: "system" }
      byPartition.set(partition, [...(byPartition.get(partition) ?? []), record])
    }
    yield* Effect.forEach(byPartition, ([partition, records]) =>
      Effect.gen(function* () {
        const writer = yield* log.openWriter(partition)
        for (let i = 0; i < records.length; i += 50) yield* writer.append(records.slice(i, i + 50))
      }), { concurrency: 12, discard: true })
  })

const run = async (mode: "embedded" | "kafka") => {
  const schema = `bench_rp_${Date.now().toString(36)}`
  const prefix = schema
  const sql = connect({ url: databaseUrl, schema, max: 8 })
  await Effect.runPromise(migrate(sql, schema))
  await Effect.runPromise(Effect.scoped(Effect.flatMap(
    mode === "kafka"
      ? KafkaLog.make({ brokers, prefix, partitions: 12, clientId: "bench-repartition" })
      : EmbeddedLog.make(sql, { logSchema: `${schema}_log`, partitions: 12 }),
    fill
  )))
  await sql.end()
  const out = execFileSync(path.join(root, "node_modules/.bin/tsx"), ["bin/cli.ts", "log", "repartition", "--partitions", "48"], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, DB_SCHEMA: schema, LOG_PARTITIONS: "12", KAFKA_BROKERS: mode === "kafka" ? brokers.join(",") : "", KAFKA_TOPIC_PREFIX: prefix, AUDIT_SIGNING_KEY: seed }
  })
  console.log(`${mode}: ${out.split("\n").find((line) => line.startsWith("copied"))}`)
}

await run("embedded")
if (brokers.length > 0) await run("kafka")
