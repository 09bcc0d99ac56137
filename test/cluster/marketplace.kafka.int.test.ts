/**
 * Catalog sync on two real processes (`bin/main.ts`) on one Kafka cluster (issue 13): both keep the
 * schedule, only the owner of the registry actor's partition syncs, and no two syncs of the
 * registry ever hold it at once. After the first full sync, 350 servers change upstream and the
 * registry answers slowly; the owner is killed with `kill -9` in the middle of that incremental
 * pass, and once its lease runs out the survivor, now the owner, takes the sync over and resumes
 * the pass from its checkpoint (the same `updated_since`, a cursor) rather than from the first page.
 */
import { afterAll, describe, expect, it } from "vitest"
import { connect, type DbService, service } from "../../streams/Db.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { DEFAULT_SEED_REGISTRY_ID } from "../../src/marketplace/RegistrySettings.ts"
import { type ClusterProcess, health, startTwoProcessCluster, type TwoProcessCluster, until } from "../support/cluster.ts"
import { databaseUrl, kafkaBrokers } from "../support/env.ts"
import { type RegistryServer, startRegistryServer } from "../support/registryServer.ts"

const PARTITIONS = 6
const KEY = `registry:${DEFAULT_SEED_REGISTRY_ID}`

describe.skipIf(kafkaBrokers.length === 0)("catalog sync on two processes on one Kafka cluster", () => {
  let cluster: TwoProcessCluster | undefined
  let db: DbService | undefined
  let upstream: RegistryServer | undefined
  afterAll(async () => {
    cluster?.stop()
    await db?.sql.end()
    await upstream?.close()
  })

  it("syncs on the owner only, one sync at a time, and the survivor resumes a killed owner's pass from its checkpoint", async () => {
    upstream = await startRegistryServer()
    cluster = await startTwoProcessCluster({
      partitions: PARTITIONS,
      dirPrefix: "svc-marketplace-cluster-",
      env: { OUTBOUND_ALLOW: "127.0.0.1", MCP_REGISTRY_URL: upstream.url, CATALOG_SYNC_INTERVAL_SECONDS: "1", CATALOG_SYNC_LEASE_SECONDS: "4" }
    })
    db = service(connect({ url: databaseUrl, schema: cluster.schema, max: 2 }), cluster.schema)
    const syncs = () => db!.sql`select sync_id, mode, status, started_at, ended_at, counts from ${db!.table("registry_syncs")}
      where registry_id = ${DEFAULT_SEED_REGISTRY_ID} order by started_at`
    await until("the first full sync", async () => ((await syncs()).some((r) => r.mode === "full" && r.status === "succeeded") ? true : undefined), 60_000)
    // whatever a process started before the partitions split has ended by now
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    const partition = partitionFor(KEY, PARTITIONS)
    const owns = async (p: ClusterProcess) => (await health(p)).partitions.ready.includes(partition)
    const [owner, survivor] = (await owns(cluster.a)) ? [cluster.a, cluster.b] : [cluster.b, cluster.a]
    expect(await owns(survivor)).toBe(false)

    // 350 servers change: the next incremental pass is four pages, each answered after 700 ms
    const lists = () => upstream!.requests.filter((r) => r.path === "/v0.1/servers")
    const before = lists().length
    upstream.setDelay(700)
    for (const e of upstream.entries().filter((e) => e.server.name).slice(0, 350)) upstream.change(e.server.name, { title: `changed ${e.server.name}` })
    await until("two pages of the pass asked for", async () => (lists().slice(before).filter((r) => r.query.cursor !== undefined).length >= 1 ? true : undefined), 30_000)
    owner.child.kill("SIGKILL")
    const beforeKill = lists().length

    const resumed = await until(
      "the survivor's pass completed",
      async () => {
        const rows = await syncs()
        const last = rows[rows.length - 1]
        return last.status === "succeeded" && last.counts.fetched > 0 && last.counts.fetched < 350 ? last : undefined
      },
      90_000
    )
    expect(resumed.mode).toBe("incremental")
    const ownersPass = lists().slice(before, beforeKill)
    const survivorsPass = lists().slice(beforeKill)
    // the survivor asks what the pass asked (the same updated_since), from where it stood: not from the first page
    expect(survivorsPass[0].query.updated_since).toBe(ownersPass[0].query.updated_since)
    expect(survivorsPass[0].query.cursor).toBeDefined()
    expect(survivorsPass.every((r) => r.query.updated_since === ownersPass[0].query.updated_since)).toBe(true)
    // between them, the pass saw every change once or twice (a page cut short is asked again), never from scratch
    expect(resumed.counts.fetched + ownersPass.filter((r) => r.status === 200).length * 100).toBeGreaterThanOrEqual(350)
    const titles = await db.sql`select count(*)::int as n from ${db.table("catalog_servers")} where title like 'changed %'`
    expect(titles[0].n).toBe(350)

    // never two syncs holding the registry at once
    const all = await syncs()
    for (let i = 1; i < all.length; i++) expect(all[i].started_at.getTime()).toBeGreaterThanOrEqual(all[i - 1].started_at.getTime())
    const overlapping = all.filter((r, i) => i > 0 && r.started_at < all[i - 1].ended_at && all[i - 1].status === "succeeded")
    expect(overlapping).toEqual([])
  }, 180_000)
})
