/**
 * The log-tail signals over the embedded log (real Postgres): a waiter registered before an event
 * is appended is completed by it, with the event decoded by its actor kind; an event appended
 * between registration and the state check is heard, and one appended before registration is in
 * the state read up to `from`: together they miss nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Option, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { keyOf, kindRegistry } from "../../actors/kernel.ts"
import * as Db from "../../streams/Db.ts"
import { ActorKinds } from "../../streams/ActorHost.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import { EventLog, readUpTo } from "../../streams/EventLog.ts"
import * as LogSignals from "../../streams/LogSignals.ts"
import { Added, CounterActor } from "../support/counter.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"

const PARTITIONS = 3
const schema = uniqueName("t")

const signalsLayer = LogSignals.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      EmbeddedLog.layer({ logSchema: `${schema}_log`, partitions: PARTITIONS }),
      Layer.succeed(ActorKinds, kindRegistry([CounterActor]))
    ).pipe(Layer.provide(Db.layer({ url: databaseUrl, schema })))
  )
)

/** Appends a counter's next event straight to the log, as its actor would. */
const add = (id: string, seq: number, amount: number, total: number) =>
  Effect.flatMap(EventLog, (log) => {
    const event = { type: "counter.added", payload: { amount, total } }
    return log.append(keyOf(CounterActor, id), [{ key: keyOf(CounterActor, id), seq, firstSeq: seq, ...event, at: new Date().toISOString(), commandId: randomUUID(), actor: "system" }])
  })

/** The counter's total and seq as the log holds them up to and including `offset`: a state check fenced at a position. */
const stateUpTo = (id: string, partition: number, offset: number) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const chunks = yield* Stream.runCollect(readUpTo(log, new Map([[partition, 0]]), new Map([[partition, offset + 1]])))
    const events = Chunk.toArray(chunks).flatMap((chunk) => chunk.events).filter((e) => e.key === keyOf(CounterActor, id))
    const last = events.at(-1)
    return { total: (last?.payload as { total: number } | undefined)?.total ?? 0, seq: last?.seq ?? 0 }
  })

describe("LogSignals on the embedded log", () => {
  it.scopedLive("an event appended after a waiter registered completes it, decoded; other keys and types are not heard", () =>
    Effect.gen(function* () {
      const signals = yield* LogSignals.LogSignals
      const id = randomUUID()
      const watch = yield* signals.watch(CounterActor, id, ["counter.added"])
      const other = yield* signals.watch(CounterActor, randomUUID())
      const waiting = yield* Effect.fork(watch.take)
      yield* add(id, 1, 5, 5)
      const heard = yield* Fiber.join(waiting).pipe(Effect.timeout("5 seconds"))
      expect(heard.event).toBeInstanceOf(Added)
      expect(heard.event).toMatchObject({ amount: 5, total: 5 })
      expect(heard.seq).toBe(1)
      expect(heard.position.offset).toBeGreaterThan(watch.from.offset)
      expect(Option.isNone(yield* other.take.pipe(Effect.timeoutOption("200 millis")))).toBe(true)
    }).pipe(Effect.provide(signalsLayer))
  )

  it.scopedLive("an event appended between registration and the state check is not missed, nor one appended before", () =>
    Effect.gen(function* () {
      const signals = yield* LogSignals.LogSignals
      const id = randomUUID()
      yield* add(id, 1, 1, 1)
      yield* add(id, 2, 2, 3)
      // register, then (the state is checked later) an event lands, then the check, then the wait
      const watch = yield* signals.watch(CounterActor, id)
      yield* add(id, 3, 4, 7)
      const checked = yield* stateUpTo(id, watch.from.partition, watch.from.offset)
      let total = checked.total
      let seq = checked.seq
      while (seq < 3) {
        const heard = yield* watch.take.pipe(Effect.timeout("5 seconds"))
        // what the check already held may be heard again: the seq tells
        if (heard.seq <= seq) continue
        expect(heard.seq).toBe(seq + 1)
        seq = heard.seq
        total = heard.event.total
      }
      expect(total).toBe(7)
    }).pipe(Effect.provide(signalsLayer))
  )

  it.scopedLive("a listener stopped hears nothing more", () =>
    Effect.gen(function* () {
      const signals = yield* LogSignals.LogSignals
      const id = randomUUID()
      const heard: Array<number> = []
      const listening = signals.listen(CounterActor, id, (signal) => void heard.push(signal.seq))
      yield* add(id, 1, 1, 1)
      const watch = yield* signals.watch(CounterActor, id)
      yield* add(id, 2, 1, 2)
      expect((yield* watch.take.pipe(Effect.timeout("5 seconds"))).seq).toBeGreaterThanOrEqual(1)
      listening.stop()
      yield* add(id, 3, 1, 3)
      while ((yield* watch.take.pipe(Effect.timeout("5 seconds"))).seq < 3) continue
      expect(heard).not.toContain(3)
      expect(heard).toContain(1)
    }).pipe(Effect.provide(signalsLayer))
  )
})
