/** What the integration suites run against: real Postgres and (when named) a real Kafka broker. */
import { randomBytes, randomUUID } from "node:crypto"

export const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

export const kafkaBrokers = (process.env.KAFKA_BROKERS ?? "").split(",").filter((b) => b !== "")

/** A fresh, valid schema or topic-prefix name, so suites never see each other's data. */
export const uniqueName = (prefix: string) => `${prefix}_${randomBytes(5).toString("hex")}`

/** 32 fresh lowercase hex digits, the body of a prefixed id (`wsp_…`, `a2a_…`, `cnv_…`). */
export const hex = () => randomUUID().replace(/-/g, "")
