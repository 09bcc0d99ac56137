/**
 * `npx tsx bench/personal-data.ts`: the CPU a person's sealed words cost (docs/audit.md, "Erasure
 * by crypto-shredding"), in this process, without a database: sealing and opening one value of the
 * sizes a turn records (a streamed chat event, a message, a long reply), and the master key's unwrap
 * of a data key, which a turn pays once and a read once per person it opens. BENCH_OPS (20,000)
 * operations per measure after 2,000 of warm-up; the best of BENCH_ROUNDS (3) rounds.
 */
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { openerFor, sealerFor } from "../src/audit/PersonalData.ts"
import { localKeyManagement } from "../src/marketplace/Envelope.ts"

const OPS = Number(process.env.BENCH_OPS ?? 20_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)

const keyRef = `pk_${randomBytes(16).toString("hex")}`
const dataKey = randomBytes(32)
const sealer = sealerFor(keyRef, dataKey)
const opener = openerFor(new Map([[keyRef, dataKey]]))
const kms = localKeyManagement(randomBytes(32))
const wrapped = Effect.runSync(kms.wrap(dataKey, kms.currentKeyId))

/** Microseconds of CPU (user + system) per call of `op`, the best of the rounds. */
const cpuPerOp = (op: () => unknown) => {
  for (let i = 0; i < 2_000; i++) op()
  let best = Infinity
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage()
    for (let i = 0; i < OPS; i++) op()
    const used = process.cpuUsage(start)
    best = Math.min(best, (used.user + used.system) / OPS)
  }
  return best
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ")
const values = {
  "streamed event (text delta, ~40 B of JSON)": { type: "text", text: "three words here" },
  "message (200 B)": words(200 / 7),
  "reply (4 KB)": words(4096 / 7)
} as const

console.log(`| value | sealed size | seal µs CPU | open µs CPU |`)
console.log(`|---|---|---|---|`)
for (const [name, value] of Object.entries(values)) {
  const seal = typeof value === "string" ? () => sealer.seal(value) : () => sealer.sealJson(value)
  const sealed = seal() as string
  const open = typeof value === "string" ? () => opener.text(sealed) : () => opener.json(sealed)
  const plainSize = typeof value === "string" ? value.length : JSON.stringify(value).length
  console.log(`| ${name} | ${sealed.length} B (clear: ${plainSize} B) | ${cpuPerOp(seal).toFixed(2)} | ${cpuPerOp(open).toFixed(2)} |`)
}
console.log(`\nunwrapping a data key under the master key (local adapter): ${cpuPerOp(() => Effect.runSync(kms.unwrap(wrapped, kms.currentKeyId))).toFixed(2)} µs CPU`)
