/** What the integration suites run against: real Postgres and (when named) a real Kafka broker. */
import { randomBytes } from "node:crypto"

export const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

export const kafkaBrokers = (process.env.KAFKA_BROKERS ?? "").split(",").filter((b) => b !== "")

/** A fresh, valid schema or topic-prefix name, so suites never see each other's data. */
export const uniqueName = (prefix: string) => `${prefix}_${randomBytes(5).toString("hex")}`
