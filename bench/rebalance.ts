/**
 * What a join and a leave cost the partitions that do not move (issue 25, item 2), on Kafka
 * (`KAFKA_BROKERS`), 12 partitions (`BENCH_PARTITIONS`).
 *
 * Each node is what a platform node is to the group and to the log: a member of the cluster
 * (`KafkaCluster`, the group `<prefix>.hosts` on `<prefix>.commands`) and, per partition the group
 * gives it, the partition's fenced transactional writer (`KafkaLog.openWriter`), opened on
 * `onAssigned` and closed on `onRevoked`, as `host/Ownership.ts` does. Every node appends one
 * record through each writer it holds, one after another, 20 ms apart: a partition serves while
 * these appends commit. (A real node also catches its read models up before it decides again on a
 * partition it regains; that comes on top of the figures here.)
 *
 * Nodes a and b start and share the partitions; then, `BENCH_ROUNDS` (3) times, node c joins and,
 * once every partition serves again, leaves (its scope closes: it leaves the group cleanly, as a
 * drained node does). For each change, per partition whose owner is the same before and after,
 * the pause is the longest time without a committed append from the change's start until every
 * partition serves again (and 2 s more). The partitions that moved are reported apart. The
 * pause has a floor: the longest gap between two appends of a partition when nothing changes
 * (reported as `quiet`), a transaction's round trips on a busy machine. Beside it, the longest
 * time no node held the partition's open writer, which has no such floor.
 */
import { Cause, Context, Effect, ExecutionStrategy, Exit, Layer, Option, Scope } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { Cluster } from "../streams/Cluster.ts"
import { EventLog, type PartitionWriter } from "../streams/EventLog.ts"
import * as KafkaCluster from "../streams/KafkaCluster.ts"
import * as KafkaLog from "../streams/KafkaLog.ts"

const brokers = (process.env.KAFKA_BROKERS ?? "").split(",").filter((b) => b !== "")
const partitions = Number(process.env.BENCH_PARTITIONS ?? 12)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const sessionTimeoutMs = Number(process.env.KAFKA_SESSION_TIMEOUT_MS ?? 10_000)
const PROBE_SPACING_MS = 20
const SETTLE_MS = 2_000

if (brokers.length === 0) throw new Error("bench/rebalance.ts measures Kafka's group: set KAFKA_BROKERS (scripts/kafka.sh start prints it)")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Per partition, when each append committed and on which node. */
const served = Array.from({ length: partitions }, () => [] as Array<{ readonly at: number; readonly node: string }>)

/** Per partition, when a node's writer became open (`held`) and when the node gave the partition up. */
const holds = Array.from({ length: partitions }, () => [] as Array<{ readonly at: number; readonly node: string; readonly held: boolean }>)

interface Held {
  writer: PartitionWriter | undefined
  readonly scope: Scope.CloseableScope
}

interface Node {
  readonly id: string
  readonly scope: Scope.CloseableScope
  /** The writers this node holds, by partition. */
  readonly writers: Map<number, Held>
  /** Closes the partition's writer, if this node holds it, and opens it again. */
  reopen: (partition: number) => void
  stopped: boolean
}

/** How long a fenced writer waits to be revoked before it is opened again (as `host/Ownership.ts` does). */
const FENCED_GRACE_MS = 5_000
const APPEND_TIMEOUT_MS = 5_000

const record = (partition: number) => ({
  key: `bench:${partition}:${randomUUID()}`,
  seq: 1,
  firstSeq: 1,
  type: "Probed",
  payload: {},
  at: new Date().toISOString(),
  commandId: randomUUID(),
  actor: "system"
})

/** Appends through each writer this node holds, one append at a time per partition, until the node stops. */
const probe = (node: Node, partition: number) => {
  const loop = async () => {
    while (!node.stopped) {
      const held = node.writers.get(partition)
      if (held?.writer !== undefined) {
        const writer = held.writer
        // an append under way when its writer closes may never end: given up after a while
        const appended = await Effect.runPromiseExit(writer.append([record(partition)]).pipe(Effect.timeout(APPEND_TIMEOUT_MS)))
        if (Exit.isSuccess(appended)) served[partition].push({ at: performance.now(), node: node.id })
        else {
          // a writer whose append failed cannot go on: opened again, as the host does (a fenced
          // one only if the partition is still this node's after the grace)
          const fenced = Cause.failureOption(appended.cause).pipe(Option.exists((e) => e._tag === "LogFenced"))
          if (fenced) await sleep(FENCED_GRACE_MS)
          if (node.writers.get(partition) === held && held.writer === writer) node.reopen(partition)
        }
      }
      await sleep(PROBE_SPACING_MS)
    }
  }
  void loop()
}

const startNode = async (prefix: string, id: string): Promise<Node> => {
  const scope = Effect.runSync(Scope.make())
  const layer = Layer.merge(
    KafkaCluster.layer({ brokers, prefix, partitions, nodeId: id, sessionTimeoutMs }),
    KafkaLog.layer({ brokers, prefix, partitions, clientId: `${prefix}.${id}.log` })
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const cluster = Context.get(context, Cluster)
  const log = Context.get(context, EventLog)
  const node: Node = { id, scope, writers: new Map(), reopen: () => undefined, stopped: false }
  const open = (partition: number) => {
    const writerScope = Effect.runSync(Scope.fork(scope, ExecutionStrategy.sequential))
    const held: Held = { writer: undefined, scope: writerScope }
    node.writers.set(partition, held)
    // a partition revoked while its writer opens interrupts the opening
    void Effect.runPromiseExit(
      Scope.extend(log.openWriter(partition), writerScope).pipe(
        Effect.tap((writer) => Effect.sync(() => {
          if (node.writers.get(partition) !== held) return
          held.writer = writer
          holds[partition].push({ at: performance.now(), node: id, held: true })
        })),
        // tried again a second later while the partition is this node's, as the host does
        Effect.catchAll((error) =>
          Effect.logWarning(`node ${id}: partition ${partition} did not open; retrying`, error).pipe(
            Effect.zipRight(Effect.sleep("1 second")),
            Effect.zipRight(Effect.sync(() => node.writers.get(partition) === held && !node.stopped && node.reopen(partition)))
          )
        )
      )
    )
  }
  const close = (partition: number) => {
    const held = node.writers.get(partition)
    node.writers.delete(partition)
    if (held?.writer !== undefined) holds[partition].push({ at: performance.now(), node: id, held: false })
    if (held) void Effect.runPromiseExit(Scope.close(held.scope, Exit.void))
  }
  node.reopen = (partition) => {
    close(partition)
    open(partition)
  }
  await Effect.runPromise(
    cluster.join({
      onAssigned: (ps) => ps.forEach(open),
      onRevoked: (ps) => ps.forEach(close),
      onCommand: async () => ({})
    }).pipe(Scope.extend(scope))
  )
  for (let p = 0; p < partitions; p++) probe(node, p)
  return node
}

const stopNode = async (node: Node) => {
  node.stopped = true
  await Effect.runPromise(Scope.close(node.scope, Exit.void))
}

/** Who served each partition last, if it served within the last second. */
const owners = (now: number) =>
  served.map((s) => {
    const last = s.at(-1)
    return last !== undefined && now - last.at < 1_000 ? last.node : undefined
  })

const untilServing = async (expectedNodes: number, what: string) => {
  const deadline = performance.now() + 120_000
  for (;;) {
    const now = performance.now()
    const current = owners(now)
    if (current.every((o) => o !== undefined) && new Set(current).size === expectedNodes) return now
    if (now > deadline) throw new Error(`timed out waiting until ${what}: ${JSON.stringify(current)}`)
    await sleep(50)
  }
}

interface Change {
  readonly kind: "join" | "leave"
  readonly stayed: ReadonlyArray<number>
  readonly moved: ReadonlyArray<number>
  /** The same partitions, the longest time no node held the partition's open writer. */
  readonly stayedUnheld: ReadonlyArray<number>
  readonly movedUnheld: ReadonlyArray<number>
  readonly settledMs: number
}

/** The longest time without a committed append on `partition` between `from` and `to`. */
const longestGap = (partition: number, from: number, to: number) => {
  const times = served[partition].map((s) => s.at)
  const before = times.filter((t) => t <= from).at(-1) ?? from
  const inside = times.filter((t) => t > from && t <= to)
  let longest = 0
  let previous = before
  for (const t of [...inside, to]) {
    longest = Math.max(longest, t - previous)
    previous = t
  }
  return longest
}

/** The longest time between `from` and `to` during which no node held an open writer of `partition`. */
const longestUnheld = (partition: number, from: number, to: number) => {
  const holders = new Set<string>()
  for (const h of holds[partition]) if (h.at <= from) h.held ? holders.add(h.node) : holders.delete(h.node)
  let longest = 0
  let emptySince = holders.size === 0 ? from : undefined
  for (const h of holds[partition].filter((h) => h.at > from && h.at <= to)) {
    if (h.held) holders.add(h.node)
    else holders.delete(h.node)
    if (holders.size === 0 && emptySince === undefined) emptySince = h.at
    if (holders.size > 0 && emptySince !== undefined) {
      longest = Math.max(longest, h.at - emptySince)
      emptySince = undefined
    }
  }
  return emptySince === undefined ? longest : Math.max(longest, to - emptySince)
}

const measure = async (kind: Change["kind"], change: () => Promise<void>, expectedNodes: number): Promise<Change> => {
  const before = owners(performance.now())
  const began = performance.now()
  await change()
  const settled = await untilServing(expectedNodes, `every partition serves after the ${kind}`)
  await sleep(SETTLE_MS)
  const end = performance.now()
  const after = owners(end)
  const stayed: number[] = []
  const moved: number[] = []
  const stayedUnheld: number[] = []
  const movedUnheld: number[] = []
  for (let p = 0; p < partitions; p++) {
    const same = before[p] === after[p]
    ;(same ? stayed : moved).push(longestGap(p, began, end))
    ;(same ? stayedUnheld : movedUnheld).push(longestUnheld(p, began, end))
  }
  return { kind, stayed, moved, stayedUnheld, movedUnheld, settledMs: settled - began }
}

const quantiles = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((x, y) => x - y)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  return sorted.length === 0 ? "none" : `n=${sorted.length} min ${sorted[0].toFixed(0)} p50 ${at(0.5).toFixed(0)} max ${sorted.at(-1)!.toFixed(0)} ms`
}

const main = async () => {
  const prefix = `bench_rebalance_${randomBytes(4).toString("hex")}`
  console.log(`rebalance bench: ${partitions} partitions, session timeout ${sessionTimeoutMs} ms, ${rounds} rounds, prefix ${prefix}`)
  const a = await startNode(prefix, "a")
  const b = await startNode(prefix, "b")
  await untilServing(2, "a and b share the partitions")
  await sleep(SETTLE_MS)
  // the noise floor: the longest gap of a quiet partition over the same kind of window
  const quietFrom = performance.now()
  await sleep(3_000)
  const quiet = Array.from({ length: partitions }, (_, p) => longestGap(p, quietFrom, performance.now()))
  const changes: Change[] = []
  for (let round = 0; round < rounds; round++) {
    let c: Node | undefined
    changes.push(await measure("join", async () => void (c = await startNode(prefix, `c${round}`)), 3))
    changes.push(await measure("leave", () => stopNode(c!), 2))
    const [join, leave] = changes.slice(-2)
    console.log(`round ${round + 1}: join: stayed ${quantiles(join.stayed)}; moved ${quantiles(join.moved)}; all serving after ${join.settledMs.toFixed(0)} ms`)
    console.log(`round ${round + 1}: leave: stayed ${quantiles(leave.stayed)}; moved ${quantiles(leave.moved)}; all serving after ${leave.settledMs.toFixed(0)} ms`)
  }
  console.log(`quiet (no change, 3 s): longest gap ${quantiles(quiet)}`)
  for (const kind of ["join", "leave"] as const) {
    const of = changes.filter((c) => c.kind === kind)
    console.log(`${kind}, partitions that stayed: pause ${quantiles(of.flatMap((c) => c.stayed))}`)
    console.log(`${kind}, partitions that moved: pause ${quantiles(of.flatMap((c) => c.moved))}`)
    console.log(`${kind}, partitions that stayed: no writer held ${quantiles(of.flatMap((c) => c.stayedUnheld))}`)
    console.log(`${kind}, partitions that moved: no writer held ${quantiles(of.flatMap((c) => c.movedUnheld))}`)
  }
  await Promise.all([stopNode(a), stopNode(b)])
}

await main()
process.exit(0)
