/**
 * The actor host's bound on queued commands (streams/Admission.ts, `maxQueuedCommands`): a burst
 * of commands past the bound is refused at once, retryably (`HostUnavailable` `overloaded`, not
 * retried until the command timeout), the admitted ones are decided, every place is given back as
 * its command is answered, and each refusal is counted.
 */
import { Duration, Effect, Either, Exit, Layer, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { kindRegistry } from "../../actors/kernel.ts"
import * as ActorHost from "../../streams/ActorHost.ts"
import * as Db from "../../streams/Db.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import * as LocalCluster from "../../streams/LocalCluster.ts"
import * as NodeMetrics from "../../streams/Metrics.ts"
import { Add, CounterActor, countersTable } from "../support/counter.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"

const PARTITIONS = 4
const BOUND = 8
/** Long, so that a refusal held until the timeout (or retried until it) could not pass for an immediate one. */
const COMMAND_TIMEOUT_MS = 20_000

const schema = uniqueName("t")
const scope = Effect.runSync(Scope.make())
let host: ActorHost.ActorHostService
let metrics: NodeMetrics.NodeMetricsService

beforeAll(async () => {
  const deps = Layer.mergeAll(
    EmbeddedLog.layer({ logSchema: `${schema}_log`, partitions: PARTITIONS }),
    LocalCluster.layer("node-a", PARTITIONS),
    Layer.succeed(ActorHost.ActorKinds, kindRegistry([CounterActor])),
    NodeMetrics.layer
  ).pipe(Layer.provideMerge(Db.layer({ url: databaseUrl, schema, max: 4 })))
  const layer = ActorHost.layer({ commandTimeoutMs: COMMAND_TIMEOUT_MS, cachedKeysPerPartition: 16, maxQueuedCommands: BOUND }).pipe(Layer.provideMerge(deps))
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const db = context.unsafeMap.get(Db.Db.key) as Db.DbService
  await db.sql.unsafe(countersTable(schema))
  host = context.unsafeMap.get(ActorHost.ActorHost.key) as ActorHost.ActorHostService
  metrics = context.unsafeMap.get(NodeMetrics.NodeMetrics.key) as NodeMetrics.NodeMetricsService
  await host.caughtUp()
}, 60_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const add = (key: string) =>
  host.send(CounterActor, key, new Add({ amount: 1 }), { commandId: randomUUID(), at: "2026-11-27T12:00:00.000Z", actor: "system" }).pipe(
    Effect.either,
    Effect.timed,
    Effect.map(([took, outcome]) => ({ took: Duration.toMillis(took), outcome }))
  )

const refusals = async () => (await metrics.registry.getSingleMetric("svc_admission_refusals_total")!.get()).values.find((v) => v.labels.bound === "queued_commands")?.value ?? 0

describe("queued commands", () => {
  it(`past ${BOUND} held at once, a command is refused at once and retryably; the rest are decided`, { timeout: 60_000 }, async () => {
    const before = await refusals()
    const answers = await Effect.runPromise(Effect.all(Array.from({ length: 200 }, (_, i) => add(`c${i}`)), { concurrency: "unbounded" }))
    const refused = answers.filter(({ outcome }) => Either.isLeft(outcome))
    const decided = answers.filter(({ outcome }) => Either.isRight(outcome))
    expect(decided.length).toBeGreaterThanOrEqual(BOUND)
    expect(refused.length).toBeGreaterThan(0)
    for (const { outcome, took } of refused) {
      expect(Either.isLeft(outcome) && outcome.left).toMatchObject({ _tag: "HostUnavailable", reason: "overloaded" })
      // refused, not held until the command timeout nor retried until it
      expect(took).toBeLessThan(COMMAND_TIMEOUT_MS / 4)
    }
    expect((await refusals()) - before).toBe(refused.length)

    // every place is back: as many as the bound are taken together again
    const again = await Effect.runPromise(Effect.all(Array.from({ length: BOUND }, (_, i) => add(`d${i}`)), { concurrency: "unbounded" }))
    expect(again.every(({ outcome }) => Either.isRight(outcome))).toBe(true)
    const held = (await metrics.registry.getSingleMetric("svc_commands_held")!.get()).values[0].value
    expect(held).toBe(0)
  })
})
