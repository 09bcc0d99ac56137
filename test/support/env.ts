/** What the integration suites run against: real Postgres and (when named) a real Kafka broker. */
import { randomBytes, randomUUID } from "node:crypto"

export const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/**
 * The broker the Kafka suites run against. A plain `vitest run` without KAFKA_BROKERS skips them;
 * under `npm test`, which asked for them (scripts/test.sh), a missing broker fails every suite that
 * reads this, rather than letting them skip unseen.
 */
const brokersAskedFor = (): Array<string> => {
  const brokers = (process.env.KAFKA_BROKERS ?? "").split(",").filter((b) => b !== "")
  const missing = process.env.KAFKA_SUITES_MISSING
  if (brokers.length === 0 && missing !== undefined) throw new Error(`npm test asked for the Kafka suites and no broker came up: ${missing}`)
  return brokers
}

export const kafkaBrokers = brokersAskedFor()

/** A fresh, valid schema or topic-prefix name, so suites never see each other's data. */
export const uniqueName = (prefix: string) => `${prefix}_${randomBytes(5).toString("hex")}`

/** 32 fresh lowercase hex digits, the body of a prefixed id (`wsp_…`, `a2a_…`, `cnv_…`). */
export const hex = () => randomUUID().replace(/-/g, "")
