/**
 * Where a secret shows in clear: every read-model table of a node's schema (each row as text), every
 * record of its embedded log (key, type and payload), the log lines it wrote, and any other text
 * the caller got from it (an export, by name). A secret is looked
 * for as is and in base64 and base64url, the encodings a careless store would use.
 */
import type { TestNode } from "./platform.ts"

export interface Sighting {
  readonly secret: string
  /** `table <name>`, `log event <key> <type>`, `log line <n>`, or the name of another text. */
  readonly where: string
}

const formsOf = (secret: string) => [secret, Buffer.from(secret).toString("base64"), Buffer.from(secret).toString("base64url")]

export const findPlaintext = async (
  node: TestNode,
  secrets: ReadonlyArray<string>,
  logLines: ReadonlyArray<string>,
  texts: Readonly<Record<string, string>> = {}
): Promise<ReadonlyArray<Sighting>> => {
  const sightings: Array<Sighting> = []
  const look = (text: string, where: string) => {
    for (const secret of secrets) if (formsOf(secret).some((form) => text.includes(form))) sightings.push({ secret, where })
  }
  const sql = node.db.sql
  const tables = await sql`select table_name from information_schema.tables where table_schema = ${node.config.dbSchema} and table_type = 'BASE TABLE'`
  for (const { table_name } of tables) {
    const rows = await sql`select t::text as row from ${sql(node.config.dbSchema)}.${sql(table_name as string)} t`
    for (const { row } of rows) look(row as string, `table ${table_name}`)
  }
  const records = await sql`select key, type, payload::text as payload from ${sql(`${node.config.dbSchema}_log`)}.log_events`
  for (const { key, type, payload } of records) look(`${key} ${type} ${payload}`, `log event ${key} ${type}`)
  logLines.forEach((line, index) => look(line, `log line ${index + 1}`))
  for (const [where, text] of Object.entries(texts)) look(text, where)
  return sightings
}
