/**
 * Two cluster nodes in one process, against a real broker (`KAFKA_BROKERS`): ownership follows
 * the consumer group, commands travel to the owner and replies come back, a leaving node's
 * partitions move to the one that stays.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import kafkajs from "kafkajs"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { createInterface } from "node:readline"
import { setTimeout as sleep } from "node:timers/promises"
import { Cluster, ClusterError, type ClusterService, type RemoteCommand } from "../../streams/Cluster.ts"
import { allPartitions } from "../../streams/EventLog.ts"
import * as KafkaCluster from "../../streams/KafkaCluster.ts"
import { kafkaBrokers, uniqueName } from "../support/env.ts"

const partitions = 6
const sessionTimeoutMs = 3_000

interface Node {
  readonly cluster: ClusterService
  readonly scope: Scope.CloseableScope
  readonly owned: Set<number>
  /** Every onAssigned call, in order. */
  readonly assigned: Array<ReadonlyArray<number>>
  readonly received: Array<readonly [number, RemoteCommand]>
}

/** Builds a node in a scope of its own (so the test can close it), and joins unless told not to. */
const startNode = (prefix: string, nodeId: string, options: { join: boolean } = { join: true }) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      KafkaCluster.layer({ brokers: kafkaBrokers, prefix, partitions, nodeId, sessionTimeoutMs }),
      scope
    )
    const node: Node = { cluster: Context.get(context, Cluster), scope, owned: new Set(), assigned: [], received: [] }
    if (options.join) {
      yield* node.cluster
        .join({
          onAssigned: (ps) => {
            node.assigned.push(ps)
            for (const p of ps) node.owned.add(p)
          },
          onRevoked: (ps) => {
            for (const p of ps) node.owned.delete(p)
          },
          onCommand: async (partition, command) => {
            node.received.push([partition, command])
            const { delayMs } = command.body as { delayMs?: number }
            if (delayMs) await sleep(delayMs)
            return { by: nodeId, commandId: command.commandId }
          }
        })
        .pipe(Scope.extend(scope))
    }
    return node
  })

const command = (body: unknown = {}): RemoteCommand => ({
  key: `counter:${randomUUID()}`,
  commandId: randomUUID(),
  body,
  at: "2026-11-22T12:00:00.000Z",
  actor: "system"
})

const eventually = (what: string, check: () => boolean) =>
  Effect.gen(function* () {
    while (!check()) yield* Effect.sleep("100 millis")
  }).pipe(Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error(`timed out waiting until ${what}`) }))

const withAdmin = <A>(use: (admin: kafkajs.Admin) => Promise<A>) =>
  Effect.promise(async () => {
    const admin = new kafkajs.Kafka({ brokers: kafkaBrokers, logLevel: kafkajs.logLevel.NOTHING }).admin()
    await admin.connect()
    try {
      return await use(admin)
    } finally {
      await admin.disconnect()
    }
  })

const topicNames = withAdmin((admin) => admin.listTopics())

/**
 * A node in a child process, so that it can be killed with SIGKILL. It never answers a command:
 * what it received dies with it. Reports on stdout, one JSON object a line.
 */
const childNode = (prefix: string, nodeId: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = new URL("../../", import.meta.url).pathname
      const code = `
        import { Effect } from "effect"
        import { Cluster } from "${root}streams/Cluster.ts"
        import * as KafkaCluster from "${root}streams/KafkaCluster.ts"
        const say = (line) => console.log(JSON.stringify(line))
        Effect.gen(function* () {
          const cluster = yield* Cluster
          yield* cluster.join({
            onAssigned: (partitions) => say({ assigned: partitions }),
            onRevoked: (partitions) => say({ revoked: partitions }),
            onCommand: (partition, command) => {
              say({ received: command.commandId, partition })
              return new Promise(() => {})
            }
          })
          yield* Effect.never
        }).pipe(
          Effect.scoped,
          Effect.provide(KafkaCluster.layer(${JSON.stringify({ brokers: kafkaBrokers, prefix, partitions, nodeId, sessionTimeoutMs })})),
          Effect.runFork
        )`
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", code], {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"]
      })
      const owned = new Set<number>()
      const received: string[] = []
      createInterface({ input: child.stdout }).on("line", (line) => {
        // the child's log lines go to stdout too
        if (!line.startsWith("{")) return
        const said = JSON.parse(line) as { assigned?: number[]; revoked?: number[]; received?: string }
        for (const p of said.assigned ?? []) owned.add(p)
        for (const p of said.revoked ?? []) owned.delete(p)
        if (said.received) received.push(said.received)
      })
      return { child, owned, received }
    }),
    ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
  )

describe.skipIf(kafkaBrokers.length === 0)(
  `Cluster on Kafka${kafkaBrokers.length === 0 ? ": KAFKA_BROKERS is unset (scripts/kafka.sh start prints it)" : ""}`,
  () => {
    it.live(
      "spreads partitions over two nodes, routes commands to the owner, and moves a leaving node's partitions",
      () =>
        Effect.gen(function* () {
          const prefix = uniqueName("t")
          const a = yield* startNode(prefix, "a")
          expect([...a.owned].sort()).toEqual(allPartitions(partitions))

          const b = yield* startNode(prefix, "b")
          yield* eventually("the two nodes split the partitions", () => {
            const both = [...a.owned, ...b.owned]
            return a.owned.size > 0 && b.owned.size > 0 && both.length === partitions && new Set(both).size === partitions
          })
          const [fromA, fromB] = [[...a.owned][0], [...b.owned][0]]
          // either node learns both from the group, with the partitions assigned to each
          const sorted = (ps: Iterable<number>) => [...ps].sort((x, y) => x - y)
          const members = yield* b.cluster.members()
          expect([...members].sort((x, y) => x.nodeId.localeCompare(y.nodeId))).toEqual([
            { nodeId: "a", partitions: sorted(a.owned) },
            { nodeId: "b", partitions: sorted(b.owned) }
          ])

          const toB = command({ hello: "b" })
          expect(yield* a.cluster.send(fromB, toB, 10_000)).toEqual({ by: "b", commandId: toB.commandId })
          expect(b.received).toContainEqual([fromB, toB])
          const toA = command()
          expect(yield* b.cluster.send(fromA, toA, 10_000)).toEqual({ by: "a", commandId: toA.commandId })

          const slow = yield* a.cluster.send(fromB, command({ delayMs: 1_500 }), 300).pipe(Effect.flip)
          expect(slow).toBeInstanceOf(ClusterError)
          expect(slow.reason).toBe("timeout")

          // a sender that leaves before its reply: the owner skips the reply and keeps serving
          const c = yield* startNode(prefix, "c", { join: false })
          expect(yield* topicNames).toContain(`${prefix}.replies.c`)
          const orphan = yield* c.cluster.send(fromB, command({ delayMs: 1_000 }), 200).pipe(Effect.flip)
          expect(orphan.reason).toBe("timeout")
          yield* Scope.close(c.scope, Exit.void)
          expect(yield* topicNames).not.toContain(`${prefix}.replies.c`)
          const after = command()
          expect(yield* a.cluster.send(fromB, after, 10_000)).toEqual({ by: "b", commandId: after.commandId })

          const ofB = [...b.owned]
          yield* Scope.close(b.scope, Exit.void)
          yield* eventually("a owns every partition", () => a.owned.size === partitions)
          expect(a.assigned.flat()).toEqual(expect.arrayContaining(ofB))
          expect(yield* topicNames).not.toContain(`${prefix}.replies.b`)
          const movedToA = command()
          expect(yield* a.cluster.send(ofB[0], movedToA, 10_000)).toEqual({ by: "a", commandId: movedToA.commandId })

          yield* Scope.close(a.scope, Exit.void)
        }),
      120_000
    )

    it.live(
      "moves a killed node's partitions within seconds and re-delivers the command it left unanswered",
      () =>
        Effect.gen(function* () {
          const prefix = uniqueName("t")
          const a = yield* startNode(prefix, "a")
          const killed = yield* childNode(prefix, "k")
          yield* eventually("the child node owns partitions", () => killed.owned.size > 0 && a.owned.size + killed.owned.size === partitions)
          const partition = [...killed.owned][0]

          const unanswered = command()
          const reply = yield* Effect.fork(a.cluster.send(partition, unanswered, 60_000))
          yield* eventually("the child node has the command", () => killed.received.includes(unanswered.commandId))
          const killedAt = Date.now()
          killed.child.kill("SIGKILL")

          expect(yield* reply.await.pipe(Effect.flatten)).toEqual({ by: "a", commandId: unanswered.commandId })
          expect(Date.now() - killedAt).toBeLessThan(sessionTimeoutMs + 10_000)
          expect(a.owned.size).toBe(partitions)
          expect(a.received).toContainEqual([partition, unanswered])

          // a killed node cannot delete its reply topic
          yield* withAdmin((admin) => admin.deleteTopics({ topics: [`${prefix}.replies.k`] }))
          yield* Scope.close(a.scope, Exit.void)
        }).pipe(Effect.scoped),
      120_000
    )
  }
)
