import { Partitioners } from "kafkajs"
import { describe, expect, it } from "vitest"
import { murmur2, partitionFor } from "../../streams/partitioner.ts"

describe("partitionFor", () => {
  it("matches Kafka's Java murmur2 test vectors", () => {
    // org.apache.kafka.common.utils.UtilsTest#testMurmur2
    const vectors: Array<[string, number]> = [
      ["21", -973932308],
      ["foobar", -790332482],
      ["a-little-bit-long-string", -985981536],
      ["a-little-bit-longer-string", -1486304829],
      ["lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971],
      ["abc", 479470107]
    ]
    for (const [input, hash] of vectors) expect(murmur2(new TextEncoder().encode(input))).toBe(hash)
  })

  it("places every key where kafkajs's default partitioner would", () => {
    const kafkajs = Partitioners.DefaultPartitioner()
    for (let i = 0; i < 2000; i++) {
      const key = `node:${i}:${"é".repeat(i % 5)}${i * 7919}`
      const partitions = 1 + (i % 31)
      const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }))
      expect(partitionFor(key, partitions)).toBe(kafkajs({ topic: "t", partitionMetadata, message: { key, value: "" } }))
    }
  })
})
