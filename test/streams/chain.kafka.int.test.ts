/**
 * The Kafka log's hash chain: records produced into the events topic by a client that is not the
 * platform are found by `svc audit verify`, at their partition and offset.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import kafkajs from "kafkajs"
import { randomUUID } from "node:crypto"
import { generateKeyPairSync } from "node:crypto"
import { hashOf } from "../../streams/Chain.ts"
import { makeSigner } from "../../streams/Checkpoints.ts"
import { EventLog, type EventRecord } from "../../streams/EventLog.ts"
import * as KafkaLog from "../../streams/KafkaLog.ts"
import { verifyLog } from "../../streams/LogVerify.ts"
import { kafkaBrokers, uniqueName } from "../support/env.ts"
import { readToEnd } from "../support/log.ts"

const record = (key: string, seq: number): EventRecord => ({
  key,
  seq,
  firstSeq: seq,
  type: "test.happened",
  payload: { seq, note: "ok" },
  at: "2026-11-24T10:00:00.000Z",
  commandId: randomUUID(),
  actor: "system"
})

/** Produces one record the way any Kafka client can: no transaction, no platform. */
const forge = (topic: string, partition: number, event: EventRecord, headers?: Record<string, string>) =>
  Effect.promise(async () => {
    const producer = new kafkajs.Kafka({ brokers: kafkaBrokers, logLevel: kafkajs.logLevel.NOTHING }).producer()
    await producer.connect()
    try {
      const value = JSON.stringify([event.seq, event.firstSeq, event.type, event.at, event.commandId, event.actor, event.payload])
      const [written] = await producer.send({ topic, acks: -1, messages: [{ key: event.key, value, partition, headers }] })
      return Number(written.baseOffset)
    } finally {
      await producer.disconnect()
    }
  })

if (kafkaBrokers.length === 0) {
  describe.skip("Kafka log hash chain: KAFKA_BROKERS is unset (scripts/kafka.sh start prints it)", () => {
    it("needs a broker", () => undefined)
  })
} else {
  const prefix = uniqueName("t")
  const { events: topic } = KafkaLog.topicsOf(prefix)
  const config = { brokers: kafkaBrokers, prefix, partitions: 3, clientId: "chain-kafka-test" }

  layer(KafkaLog.layer(config), { timeout: "120 seconds", excludeTestServices: true })("Kafka log hash chain", (it) => {
    it.effect("verifies a log written by successive owners, then finds a forged record without hashes at its offset", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const key = `chain:${randomUUID()}`
        for (let round = 0; round < 3; round++) {
          yield* Effect.scoped(Effect.flatMap(log.openWriter(0), (writer) => writer.append([record(key, 2 * round + 1), record(key, 2 * round + 2)])))
        }
        const [intact] = yield* verifyLog({ partitions: [0] })
        expect(intact).toMatchObject({ partition: 0, events: 6, unchained: 0, break: undefined })

        const forged = yield* forge(topic, 0, record(key, 7))
        const [report] = yield* verifyLog({ partitions: [0] })
        expect(report.break).toMatchObject({ partition: 0, offset: forged, reason: "unchained" })
      }))

    it.effect("finds a forged record that chains onto the head: the platform's next record does not chain onto it", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const key = `chain:${randomUUID()}`
        const writer = yield* log.openWriter(1)
        const [offset] = yield* writer.append([record(key, 1)])
        const [head] = (yield* readToEnd(1, offset, offset)).filter((e) => e.offset === offset)
        const fake = record(key, 2)
        const fakeHash = hashOf(head.hash!, fake)
        const forged = yield* forge(topic, 1, fake, { [KafkaLog.PREV_HEADER]: head.hash!, [KafkaLog.HASH_HEADER]: fakeHash })
        const [next] = yield* writer.append([record(key, 3)])
        yield* readToEnd(1, next, next)
        const [report] = yield* verifyLog({ partitions: [1] })
        expect(forged).toBeGreaterThan(offset)
        expect(report.break).toMatchObject({ partition: 1, offset: next, reason: "prev_mismatch" })
      }).pipe(Effect.scoped))

    it.effect("checks signed checkpoints: the operator's verify, one signed with another key is found at its offset", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const operator = makeSigner(generateKeyPairSync("ed25519").privateKey, { events: 1, seconds: 1 })
        const forger = makeSigner(generateKeyPairSync("ed25519").privateKey, { events: 1, seconds: 1 })
        const key = `chain:${randomUUID()}`
        const writer = yield* log.openWriter(2)
        const at = "2026-11-24T10:00:00.000Z"
        yield* writer.append([record(key, 1), record(key, 2)])
        const signed = writer.head()!
        yield* writer.append([operator.record({ partition: 2, offset: signed.offset, head: signed.hash, at })])
        const [good] = yield* verifyLog({ partitions: [2], publicKey: operator.publicKey })
        expect(good).toMatchObject({ checkpoints: 1, break: undefined })

        const [forged] = yield* writer.append([forger.record({ partition: 2, offset: signed.offset, head: signed.hash, at })])
        const [report] = yield* verifyLog({ partitions: [2], publicKey: operator.publicKey })
        expect(report.break).toMatchObject({ partition: 2, offset: forged, reason: "checkpoint_signature" })
      }).pipe(Effect.scoped))
  })
}
