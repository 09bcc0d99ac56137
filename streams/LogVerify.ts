/**
 * `svc audit verify`: reads the log (either adapter, no read model) and recomputes every
 * partition's hash chain (`Chain.ts`), reporting the first break of each partition with its
 * offset. What it can tell (docs/audit.md): an event changed, removed (a gap on the embedded log,
 * whose offsets are dense; elsewhere its successor's `prev` no longer matches), inserted by a
 * writer that is not the platform (no hash, or one its successor does not chain onto), or the log
 * ending before its recorded end.
 */
import { Effect, Stream } from "effect"
import type { KeyObject } from "node:crypto"
import { GENESIS, hashOf } from "./Chain.ts"
import { type ChainHead, checkpointPayload, genesisPayload, isCheckpoint, isGenesis, verifyClaim, verifyGenesis } from "./Checkpoints.ts"
import { allPartitions, EventLog, type LogChunk, type LoggedEvent } from "./EventLog.ts"

export type BreakReason =
  /** The embedded log's offsets are dense: an offset with no event was removed. */
  | "missing"
  /** An event without a hash after the chain began (or anywhere when reading from an offset). */
  | "unchained"
  /** The event's `prev` is not the hash of the partition's event before it. */
  | "prev_mismatch"
  /** The event's hash is not the hash of its content: it was changed after it was written. */
  | "hash_mismatch"
  /** The log says it holds events up to an offset the reader never reached. */
  | "truncated"
  /** A checkpoint whose signature is not the operator's key's over its claim (or that is malformed). */
  | "checkpoint_signature"
  /** A checkpoint naming an offset and hash the chain before it does not hold. */
  | "checkpoint_mismatch"
  /** A genesis record not signed by the operator's key (or malformed). */
  | "genesis_signature"
  /** A repartitioned log's partition not starting with a genesis record that names the old log's final heads. */
  | "genesis_mismatch"

export interface ChainBreak {
  readonly partition: number
  readonly offset: number
  readonly reason: BreakReason
  readonly message: string
}

export interface PartitionReport {
  readonly partition: number
  /** Events read and checked. */
  readonly events: number
  /** Events at the partition's start written before the log was chained (no hash, none expected). */
  readonly unchained: number
  /** The hash of the last event read (null: none chained). */
  readonly head: string | null
  /** The offset of the event `head` is the hash of (-1: none). */
  readonly headOffset: number
  /** Where reading ended: the log's end offset when verification began. */
  readonly end: number
  /** Signed checkpoints found and checked (their signatures only when a public key was given). */
  readonly checkpoints: number
  readonly break: ChainBreak | undefined
}

export interface VerifyOptions {
  /** Partitions to verify (default all). */
  readonly partitions?: ReadonlyArray<number>
  /**
   * The first offset to verify (default 0). The first event read is trusted for its `prev`, so a
   * verification from an offset checks the chain from there on, not what lies before it.
   */
  readonly from?: number
  /** How long reading may go without an event before the unread rest counts as missing (default 10 s; Kafka 30 s). */
  readonly idleMs?: number
  /** The operator's public key: checkpoints' signatures are checked with it (without, only what they claim). */
  readonly publicKey?: KeyObject
  /**
   * A repartitioned log (generation 2 on): what every partition's genesis record must name, the
   * log it was rewritten from and that log's final heads as verified.
   */
  readonly genesis?: GenesisExpected
}

export interface GenesisExpected {
  readonly generation: number
  readonly partitions: number
  readonly previousGeneration: number
  readonly heads: ReadonlyArray<ChainHead>
}

/** A partition's final head as a genesis record names it. */
export const finalHead = (report: PartitionReport): ChainHead => ({ partition: report.partition, offset: report.headOffset, hash: report.head ?? GENESIS })

/**
 * How long reading may go without a chunk before the rest counts as missing: a Kafka reader first
 * joins a consumer group of its own, which a loaded broker can take seconds over.
 */
const EMBEDDED_IDLE_MS = 10_000
const KAFKA_IDLE_MS = 30_000

/** Partition groups read side by side. */
const LANES = 4

/** Hashes kept for checkpoints to name, beyond the last checkpoint checked (a partition without checkpoints keeps no more). */
const MAX_UNCHECKPOINTED = 1_000_000

/** One partition's walk along its chain. */
class Walk {
  events = 0
  unchained = 0
  head: string | null = null
  /** The offset of the event `head` is the hash of. */
  headOffset = -1
  expectedOffset: number
  broken: ChainBreak | undefined
  checkpoints = 0
  /** Whether the partition's genesis record was read. */
  genesisSeen = false
  /** Hashes by offset since the last checkpoint checked, for the next one to name. */
  readonly recent = new Map<number, string>()

  constructor(
    readonly partition: number,
    readonly from: number,
    readonly end: number,
    readonly denseOffsets: boolean,
    readonly publicKey: KeyObject | undefined,
    readonly genesis: GenesisExpected | undefined
  ) {
    this.expectedOffset = from
  }

  private fail(offset: number, reason: BreakReason, message: string) {
    this.broken = { partition: this.partition, offset, reason, message: `partition ${this.partition} offset ${offset}: ${message}` }
  }

  check(event: LoggedEvent) {
    if (this.broken !== undefined || event.offset >= this.end) return
    if (this.denseOffsets && event.offset !== this.expectedOffset) {
      return this.fail(this.expectedOffset, "missing", `no event at this offset (the next is at ${event.offset}): removed from the log`)
    }
    this.expectedOffset = event.offset + 1
    this.events++
    if (event.hash === null || event.prev === null) {
      // a log written before the chain existed starts unchained; from an offset nothing is known
      if (this.head === null && this.from === 0) {
        this.unchained++
        return
      }
      return this.fail(event.offset, "unchained", "the event carries no hash: the platform did not write it")
    }
    const expectedPrev = this.head ?? (this.from === 0 ? GENESIS : event.prev)
    if (event.prev !== expectedPrev) {
      return this.fail(
        event.offset,
        "prev_mismatch",
        this.head === null
          ? "the partition's first chained event does not start from the genesis hash: events before it were removed or altered"
          : `the event does not chain onto the event at offset ${this.headOffset}: an event between them was removed, or one was inserted`
      )
    }
    if (hashOf(event.prev, event) !== event.hash) {
      return this.fail(event.offset, "hash_mismatch", "the event's content does not match its hash: it was changed after it was written")
    }
    if (this.genesis !== undefined && this.head === null && this.from === 0 && !isGenesis(event)) {
      return this.fail(event.offset, "genesis_mismatch", "the partition of a repartitioned log does not start with its genesis record")
    }
    if (isCheckpoint(event)) this.checkCheckpoint(event)
    if (isGenesis(event)) this.checkGenesis(event)
    if (this.broken !== undefined) return
    this.head = event.hash
    this.headOffset = event.offset
    this.recent.set(event.offset, event.hash)
    if (this.recent.size > MAX_UNCHECKPOINTED) this.recent.delete(this.recent.keys().next().value!)
  }

  private checkCheckpoint(event: LoggedEvent) {
    const claim = checkpointPayload(event.payload)
    if (claim === undefined || claim.partition !== this.partition) {
      return this.fail(event.offset, "checkpoint_signature", "a checkpoint that does not name this partition's offset, head and signature")
    }
    if (this.publicKey !== undefined && !verifyClaim(this.publicKey, claim)) {
      return this.fail(event.offset, "checkpoint_signature", `the checkpoint's signature (key ${claim.keyId}) is not the operator's key's`)
    }
    const held = this.recent.get(claim.offset)
    // a checkpoint naming an offset before where this verification began cannot be compared
    if (held === undefined && claim.offset < this.from) return
    if (held !== claim.head) {
      return this.fail(
        event.offset,
        "checkpoint_mismatch",
        `the checkpoint names offset ${claim.offset} with hash ${claim.head}, which the chain before it does not hold there`
      )
    }
    this.checkpoints++
    for (const offset of this.recent.keys()) {
      if (offset > claim.offset) break
      this.recent.delete(offset)
    }
  }

  private checkGenesis(event: LoggedEvent) {
    const claim = genesisPayload(event.payload)
    if (claim === undefined || claim.partition !== this.partition) {
      return this.fail(event.offset, "genesis_signature", "a genesis record that does not name this partition, the old log's heads and a signature")
    }
    if (this.publicKey !== undefined && !verifyGenesis(this.publicKey, claim)) {
      return this.fail(event.offset, "genesis_signature", `the genesis record's signature (key ${claim.keyId}) is not the operator's key's`)
    }
    if (this.head !== null || (this.from === 0 && event.prev !== GENESIS)) {
      return this.fail(event.offset, "genesis_mismatch", "a genesis record that is not the partition's first")
    }
    this.genesisSeen = true
    const expected = this.genesis
    if (expected === undefined) return
    const named = (heads: ReadonlyArray<ChainHead>) => heads.map((h) => `${h.partition}:${h.offset}:${h.hash}`).join(",")
    if (claim.generation !== expected.generation || claim.partitions !== expected.partitions || claim.previousGeneration !== expected.previousGeneration) {
      return this.fail(event.offset, "genesis_mismatch", `the genesis record names generation ${claim.generation} of ${claim.partitions} partitions from generation ${claim.previousGeneration}, not generation ${expected.generation} of ${expected.partitions} from ${expected.previousGeneration}`)
    }
    if (named(claim.heads) !== named(expected.heads)) {
      const differing = expected.heads.filter((h, i) => named([h]) !== named(claim.heads.slice(i, i + 1))).map((h) => h.partition)
      return this.fail(event.offset, "genesis_mismatch", `the genesis record's heads of the old log are not its final heads as verified (old partitions ${differing.join(", ") || "beyond its count"}): the old log was altered or extended after the repartition`)
    }
  }

  /** Reading stopped at `reached` (the reader's `next`). */
  finish(reached: number) {
    if (this.broken === undefined && reached < this.end) {
      this.fail(reached, "truncated", `the log records events up to offset ${this.end - 1}, but none could be read from here on`)
    }
    if (this.broken === undefined && this.genesis !== undefined && this.from === 0 && !this.genesisSeen) {
      this.fail(0, "genesis_mismatch", "the partition of a repartitioned log holds no genesis record")
    }
  }

  report(): PartitionReport {
    return {
      partition: this.partition,
      events: this.events,
      unchained: this.unchained,
      head: this.head,
      headOffset: this.headOffset,
      end: this.end,
      checkpoints: this.checkpoints,
      break: this.broken
    }
  }
}

/** Verifies the chains of the log as it stands when called; one report per partition, in order. */
export const verifyLog = (options: VerifyOptions = {}) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const from = options.from ?? 0
    const partitions = options.partitions ?? allPartitions(log.partitions)
    const ends = yield* log.endOffsets(partitions)
    const walks = new Map(partitions.map((p) => [p, new Walk(p, from, ends.get(p) ?? 0, log.mode === "embedded", options.publicKey, options.genesis)]))
    const reached = new Map(partitions.map((p) => [p, from]))
    const pending = partitions.filter((p) => from < (ends.get(p) ?? 0))
    // partitions read side by side in lanes: the log's reads and the hashing overlap
    const lanes = Array.from({ length: LANES }, (_, lane) => pending.filter((_, i) => i % LANES === lane)).filter((l) => l.length > 0)
    yield* Effect.forEach(lanes, (lane) => {
      const unfinished = new Set(lane)
      return log.subscribe(new Map(lane.map((p) => [p, from]))).pipe(
        // a log missing its last events never reaches its recorded end: stop waiting for them
        Stream.timeout(options.idleMs ?? (log.mode === "kafka" ? KAFKA_IDLE_MS : EMBEDDED_IDLE_MS)),
        Stream.tap((chunk: LogChunk) =>
          Effect.sync(() => {
            const walk = walks.get(chunk.partition)
            if (walk === undefined) return
            for (const event of chunk.events) walk.check(event)
            reached.set(chunk.partition, Math.max(reached.get(chunk.partition)!, chunk.next))
            if (chunk.next >= walk.end || walk.broken !== undefined) unfinished.delete(chunk.partition)
          })
        ),
        Stream.takeUntil(() => unfinished.size === 0),
        Stream.runDrain
      )
    }, { concurrency: "unbounded", discard: true })
    for (const walk of walks.values()) walk.finish(reached.get(walk.partition)!)
    return [...walks.values()].map((walk) => walk.report())
  }).pipe(Effect.withSpan("LogVerify.verifyLog"))
