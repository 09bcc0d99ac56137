/**
 * Kafka's default partitioner (murmur2 of the key bytes, sign bit cleared, modulo the partition
 * count), so that the embedded log, the Kafka topics and the actor host agree on where a key lives.
 */

const SEED = 0x9747b28c
const M = 0x5bd1e995

export const murmur2 = (data: Uint8Array): number => {
  const length = data.length
  let h = SEED ^ length
  const blocks = length >>> 2
  for (let i = 0; i < blocks; i++) {
    const i4 = i * 4
    let k = (data[i4] & 0xff) | ((data[i4 + 1] & 0xff) << 8) | ((data[i4 + 2] & 0xff) << 16) | ((data[i4 + 3] & 0xff) << 24)
    k = Math.imul(k, M)
    k ^= k >>> 24
    k = Math.imul(k, M)
    h = Math.imul(h, M)
    h ^= k
  }
  const tail = blocks * 4
  const rest = length & 3
  if (rest === 3) h ^= (data[tail + 2] & 0xff) << 16
  if (rest >= 2) h ^= (data[tail + 1] & 0xff) << 8
  if (rest >= 1) {
    h ^= data[tail] & 0xff
    h = Math.imul(h, M)
  }
  h ^= h >>> 13
  h = Math.imul(h, M)
  h ^= h >>> 15
  return h | 0
}

const encoder = new TextEncoder()

export const partitionFor = (key: string, partitions: number): number =>
  (murmur2(encoder.encode(key)) & 0x7fffffff) % partitions
