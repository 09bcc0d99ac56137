/**
 * A key rotation is two appends to two keys (the old key into grace, then its successor), and a
 * crash between them must not leave the old key in grace with no successor. A real process of the
 * platform (`bin/main.ts`, embedded log) is stopped between the two: the test holds the log's head
 * rows of every partition but the old key's, so the rotation's first append goes through and the
 * successor's waits; the process is killed with SIGKILL there, and its waiting append is cut off in
 * Postgres so that it never lands. A new process on the same database completes the rotation from
 * the intent the first append recorded.
 */
import { mkdtemp, readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import postgres from "postgres"
import { afterAll, describe, expect, it } from "vitest"
import { logSchemaOf } from "../../bin/App.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { type ClusterProcess, killClusterProcesses, startClusterProcess, until } from "../support/cluster.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"
import { callWithCookie, signIn } from "../support/people.ts"

const PARTITIONS = 4

interface LoggedEvent {
  readonly type: string
  readonly payload: any
}

describe("key rotation across a crash", () => {
  const procs: Array<ClusterProcess> = []
  const sql = postgres(databaseUrl, { max: 3, onnotice: () => {} })
  afterAll(async () => {
    killClusterProcesses(procs)
    await sql.end()
  })

  it("a process killed between the rotation and its successor's issue leaves a rotation the next process completes", { timeout: 180_000 }, async () => {
    const schema = uniqueName("t")
    const dataDir = await mkdtemp(path.join(tmpdir(), "svc-rotation-"))
    const start = async () => {
      const proc = await startClusterProcess({ name: "node", dataDir, schema, prefix: schema, partitions: PARTITIONS, env: { KAFKA_BROKERS: "" } })
      procs.push(proc)
      return proc
    }
    const log = sql(`${logSchemaOf(schema)}.log_events`)
    const heads = sql(`${logSchemaOf(schema)}.log_heads`)
    const eventsOf = (keyId: string) =>
      sql<Array<LoggedEvent>>`select type, payload from ${log} where key = ${`apikey:${keyId}`} order by seq`

    const first = await start()
    const bootstrap = JSON.parse(await readFile(path.join(dataDir, "bootstrap.json"), "utf8"))
    const signedIn = await signIn(first.baseUrl, { email: bootstrap.ownerEmail, password: bootstrap.ownerPassword })
    expect(signedIn.status).toBe(200)
    const as = (p: ClusterProcess, route: string, input: unknown) =>
      callWithCookie(p.baseUrl, signedIn.cookie, `/v1/${bootstrap.orgSlug}/${bootstrap.workspaceSlug}/${route}`, input)

    // rotate a fresh key while every partition but its own refuses appends, until the successor
    // falls on one of those (it may share the old key's partition, then the rotation just completes)
    const stuck = await (async () => {
      for (;;) {
        const created = await as(first, "create_api_key", { name: "deploy bot" })
        expect(created.status).toBe(200)
        const oldKeyId: string = created.body.publicId
        const own = partitionFor(`apikey:${oldKeyId}`, PARTITIONS)
        const holder = await sql.reserve()
        await holder`begin`
        await holder`select partition from ${heads} where partition <> ${own} for update`
        const [{ pid }] = await holder<Array<{ pid: number }>>`select pg_backend_pid() as pid`
        const answer = as(first, "api-keys/rotate", { keyPublicId: oldKeyId }).catch((error: unknown) => error)
        const rotated = await until("the rotation's append", async () => (await eventsOf(oldKeyId)).find((e) => e.type === "api_key.rotated"))
        const newKeyId: string = rotated.payload.supersededBy
        if (partitionFor(`apikey:${newKeyId}`, PARTITIONS) !== own) {
          // the successor's append waits on the held head row: the process is between the two steps
          await until("the successor's append to wait", async () => {
            const waiting = await sql`select 1 from pg_stat_activity where ${pid}::int = any(pg_blocking_pids(pid))`
            return waiting.length > 0 ? true : undefined
          })
          return { oldKeyId, newKeyId, rotated, holder, pid, answer }
        }
        // the answer waits for the call's audit record, which may fall on a held partition: release first
        await holder`rollback`
        holder.release()
        expect((await answer as { status: number }).status).toBe(200)
      }
    })()

    first.child.kill("SIGKILL")
    // the dead process's statements still waiting on the held rows must not land when they are released
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where ${stuck.pid}::int = any(pg_blocking_pids(pid))`
    await until("the dead process's appends to end", async () => {
      const left = await sql`select 1 from pg_stat_activity where ${stuck.pid}::int = any(pg_blocking_pids(pid))`
      return left.length === 0 ? true : undefined
    })
    await stuck.holder`rollback`
    stuck.holder.release()
    expect(await stuck.answer).toBeInstanceOf(Error)

    // the crash left the old key in grace and no successor, but the rotation recorded its intent
    expect((await eventsOf(stuck.oldKeyId)).map((e) => e.type)).toEqual(["api_key.created", "api_key.rotated"])
    expect(await eventsOf(stuck.newKeyId)).toEqual([])
    const intent = stuck.rotated.payload.successor
    expect(intent).toMatchObject({ lookupId: expect.any(String), secretHash: expect.any(String) })

    // the next process issues the successor, once, with the secret and creator the rotation recorded
    const second = await start()
    const issued = await until("the successor's issue", async () => {
      const events = await eventsOf(stuck.newKeyId)
      return events.length > 0 ? events : undefined
    })
    expect(issued.map((e) => e.type)).toEqual(["api_key.created"])
    expect(issued[0].payload).toMatchObject({
      keyId: stuck.newKeyId,
      name: "deploy bot",
      supersedes: stuck.oldKeyId,
      lookupId: intent.lookupId,
      secretHash: intent.secretHash,
      createdBy: intent.createdBy
    })

    // as the owner sees it: the old key in grace, superseded by an active successor
    const listed = await until("the successor to be listed", async () => {
      const reply = await as(second, "api_key/list", {})
      const keys = reply.body?.keys as Array<any> | undefined
      return keys?.some((k) => k.publicId === stuck.newKeyId) ? keys : undefined
    })
    expect(listed.find((k) => k.publicId === stuck.oldKeyId)).toMatchObject({ status: "grace", supersededBy: stuck.newKeyId })
    expect(listed.find((k) => k.publicId === stuck.newKeyId)).toMatchObject({ status: "active", supersedes: stuck.oldKeyId })
    // the rotation is whole: acknowledging it with the successor's id stops the old key
    const acknowledged = await as(second, "api-keys/rotate/acknowledge", { keyPublicId: stuck.newKeyId })
    expect(acknowledged.body).toEqual({ acknowledged: true, keyPublicId: stuck.newKeyId, revokedKeyPublicId: stuck.oldKeyId })
    expect((await eventsOf(stuck.newKeyId)).map((e) => e.type)).toEqual(["api_key.created"])
  })
})
