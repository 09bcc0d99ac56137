/**
 * The Kafka adapter of the cluster port. Every node is a member of the consumer group
 * `<prefix>.hosts` on `<prefix>.commands`; the partitions assigned to it are the ones it owns.
 *
 * A command for another node's partition is produced to that partition of the commands topic
 * with the headers `reply-to` (the sender's topic `<prefix>.replies.<nodeId>`, one partition) and
 * `correlation-id`. The owner handles it and produces to `reply-to` the JSON envelope
 * `{"ok":true,"reply":...}` or `{"ok":false,"reason":"not_owner"|"transport","message":...}`.
 * The owner commits a command's offset only after replying, so the commands a crashed owner left
 * unanswered reach the next owner (the host dedupes them by command id).
 */
import { Deferred, Effect, Either, Exit, Layer, Runtime, Schedule, Schema, type Scope, Stream } from "effect"
import kafkajs from "kafkajs"
import type { Admin, EachBatchPayload, EachMessagePayload, Kafka, KafkaMessage, Producer } from "kafkajs"
import { randomUUID } from "node:crypto"
import {
  Cluster,
  ClusterError,
  type ClusterHandlers,
  type ClusterMember,
  type ClusterService,
  type RemoteCommand,
  type RemoteReply
} from "./Cluster.ts"
import { commandsTopicSpec, ensureTopics, makeClient, tail, topicsOf } from "./KafkaLog.ts"
import { dependencyRetry } from "./Backoff.ts"
import { stickyAssigner } from "./StickyAssigner.ts"

const { AssignerProtocol, PartitionAssigners, Partitioners } = kafkajs

export interface KafkaClusterConfig {
  readonly brokers: ReadonlyArray<string>
  readonly prefix: string
  readonly partitions: number
  /** Unique among the live nodes; names this node's reply topic. */
  readonly nodeId: string
  /** How long the group waits for a silent node before moving its partitions (default 10 s). */
  readonly sessionTimeoutMs?: number
}

const REPLY_TO = "reply-to"
const CORRELATION_ID = "correlation-id"
const REPLY_RETENTION_MS = "3600000"
const REPLY_PRODUCER_IDLE_MS = 5 * 60_000

const RemoteCommandJson = Schema.parseJson(
  Schema.Struct({
    key: Schema.String,
    commandId: Schema.String,
    body: Schema.Unknown,
    at: Schema.String,
    actor: Schema.String
  })
)
const decodeCommand = Schema.decodeUnknownEither(RemoteCommandJson)

const Envelope = Schema.Union(
  Schema.Struct({ ok: Schema.Literal(true), reply: Schema.Unknown }),
  Schema.Struct({ ok: Schema.Literal(false), reason: Schema.Literal("not_owner", "transport"), message: Schema.String })
)
type Envelope = typeof Envelope.Type
const decodeEnvelope = Schema.decodeUnknownEither(Schema.parseJson(Envelope))

const transport = (operation: string) => (cause: unknown) =>
  new ClusterError({
    reason: "transport",
    message: `${operation} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })

const tryKafka = <A>(operation: string, run: () => Promise<A>): Effect.Effect<A, ClusterError> =>
  Effect.tryPromise({ try: run, catch: transport(operation) })

const header = (message: KafkaMessage, name: string): string | undefined => {
  const value = message.headers?.[name]
  const first = Array.isArray(value) ? value[0] : value
  return first?.toString()
}

const replyExit = (message: KafkaMessage): Exit.Exit<RemoteReply, ClusterError> =>
  Either.match(decodeEnvelope(message.value?.toString("utf8")), {
    onLeft: (error) => Exit.fail(new ClusterError({ reason: "transport", message: "undecodable reply", cause: error })),
    onRight: (envelope) =>
      envelope.ok
        ? Exit.succeed(envelope.reply)
        : Exit.fail(new ClusterError({ reason: envelope.reason, message: envelope.message }))
  })

const encodeEnvelope = (envelope: Envelope): string => {
  try {
    return JSON.stringify(envelope.ok ? { ok: true, reply: envelope.reply ?? null } : envelope)
  } catch (cause) {
    return JSON.stringify({ ok: false, reason: "transport", message: transport("encode reply")(cause).message })
  }
}

/** How soon a node that lost its membership asks to join again. */
const REJOIN_DELAY_MS = 500

/** What the parts of a cluster node share. */
interface Node {
  readonly kafka: Kafka
  readonly runtime: Runtime.Runtime<never>
  readonly prefix: string
  readonly partitions: number
  readonly nodeId: string
  readonly commands: string
  readonly replyTopic: string
  readonly sessionTimeout: number
  readonly heartbeatInterval: number
}

type Reply = (topic: string, correlationId: string, envelope: Envelope) => Effect.Effect<void>

/** A command consumed from the commands topic. */
type Consumed = Pick<EachMessagePayload, "partition" | "message" | "heartbeat">

/** The commands topic and this node's reply topic (deleted when the node closes); where its replies start. */
const openTopics = (node: Node): Effect.Effect<{ readonly admin: Admin; readonly replyStart: number }, ClusterError, Scope.Scope> =>
  Effect.gen(function* () {
    const { kafka, prefix, partitions, replyTopic } = node
    const admin = kafka.admin()
    yield* Effect.acquireRelease(tryKafka("connect admin", () => admin.connect()), () =>
      Effect.promise(() => admin.disconnect())
    )
    yield* tryKafka("create topics", () => ensureTopics(admin, [commandsTopicSpec(prefix, partitions)]))
    yield* Effect.acquireRelease(
      tryKafka("create reply topic", () =>
        ensureTopics(admin, [{ topic: replyTopic, partitions: 1, config: { "retention.ms": REPLY_RETENTION_MS } }])
      ),
      () =>
        tryKafka("delete reply topic", () => admin.deleteTopics({ topics: [replyTopic] })).pipe(
          Effect.catchAll((error) => Effect.logWarning(error.message))
        )
    )
    // replies are read from here on, so none produced after this point can be missed
    const [replyStart] = yield* tryKafka("read reply topic", () => admin.fetchTopicOffsets(replyTopic))
    return { admin, replyStart: Number(replyStart.high) }
  })

/** The replies this node waits for, by correlation id; `down` while the reply channel is failing. */
interface ReplyChannel {
  readonly pending: Map<string, Deferred.Deferred<RemoteReply, ClusterError>>
  readonly down: () => ClusterError | undefined
}

/** Reads this node's reply topic from `replyStart`, completing the sends waiting for each reply. */
const openReplyChannel = (node: Node, replyStart: number): Effect.Effect<ReplyChannel, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { kafka, replyTopic } = node
    const pending = new Map<string, Deferred.Deferred<RemoteReply, ClusterError>>()
    let replyChannelDown: ClusterError | undefined
    const failPending = (error: ClusterError) => {
      for (const waiting of pending.values()) Deferred.unsafeDone(waiting, Exit.fail(error))
      pending.clear()
    }
    let repliesFrom = replyStart
    // a reply channel that fails (the broker restarting) is opened again where it got to; meanwhile sends fail at once
    yield* Effect.suspend(() => {
      replyChannelDown = undefined
      return tail(kafka, replyTopic, new Map([[0, repliesFrom]]), `${replyTopic}.${randomUUID()}`).pipe(Stream.runForEach(({ messages, next }) =>
        Effect.sync(() => {
          repliesFrom = next
          for (const message of messages) {
            const correlationId = header(message, CORRELATION_ID)
            // no one waits for a reply that came after its send timed out
            const waiting = correlationId === undefined ? undefined : pending.get(correlationId)
            if (waiting) Deferred.unsafeDone(waiting, replyExit(message))
          }
        })
      ))
    }).pipe(
      Effect.tapError((error) =>
        Effect.sync(() => {
          replyChannelDown = transport("reply channel")(error)
          failPending(replyChannelDown)
        }).pipe(Effect.zipRight(Effect.logError(`reply channel ${replyTopic} failed; opening it again`, error)))
      ),
      Effect.retry(dependencyRetry),
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => failPending(new ClusterError({ reason: "transport", message: "the cluster node is closing" })))
    )
    return { pending, down: () => replyChannelDown }
  })

/** Answers the commands this node handled, each on its sender's reply topic. */
const makeReplier = (kafka: Kafka, admin: Admin): Effect.Effect<Reply, never, Scope.Scope> =>
  Effect.gen(function* () {
    // One producer per reply topic: a kafkajs producer keeps every topic it wrote to in its
    // metadata requests, so once a departed node's reply topic is deleted, it fails every send.
    // Departed nodes get no more replies, so producers idle for a while are closed.
    const replyProducers = new Map<string, { readonly producer: Promise<Producer | undefined>; lastUsed: number }>()
    const dropReplyProducer = (topic: string) => {
      const dropped = replyProducers.get(topic)
      replyProducers.delete(topic)
      return dropped?.producer.then((producer) => producer?.disconnect()).catch(() => undefined)
    }
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([...replyProducers.keys()].map(dropReplyProducer))))
    yield* Effect.sync(() => {
      const idleSince = Date.now() - REPLY_PRODUCER_IDLE_MS
      for (const [topic, { lastUsed }] of replyProducers) if (lastUsed < idleSince) void dropReplyProducer(topic)
    }).pipe(Effect.repeat(Schedule.spaced(REPLY_PRODUCER_IDLE_MS)), Effect.forkScoped)
    const replyProducer = (topic: string): Promise<Producer | undefined> => {
      let entry = replyProducers.get(topic)
      if (!entry) {
        const producer = admin.listTopics().then(async (topics) => {
          if (!topics.includes(topic)) return undefined
          const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
          await producer.connect()
          return producer
        })
        entry = { producer, lastUsed: 0 }
        replyProducers.set(topic, entry)
      }
      entry.lastUsed = Date.now()
      return entry.producer
    }

    const reply: Reply = (topic, correlationId, envelope) =>
      Effect.gen(function* () {
        const to = yield* tryKafka("reply", () => replyProducer(topic))
        if (!to) {
          void dropReplyProducer(topic)
          return yield* Effect.logWarning(`not replying to ${topic}: the topic is gone (its node left)`)
        }
        yield* tryKafka("reply", () =>
          to.send({
            topic,
            acks: -1,
            messages: [{ partition: 0, value: encodeEnvelope(envelope), headers: { [CORRELATION_ID]: correlationId } }]
          })
        )
      }).pipe(
        Effect.catchAll((error) => {
          void dropReplyProducer(topic)
          return Effect.logWarning(`no reply sent to ${topic}`, error)
        })
      )
    return reply
  })

/**
 * Joins the group `<prefix>.hosts` and stays a member until the scope closes, telling the
 * handlers which partitions this node gains and loses; each command consumed goes to `handle`
 * with whether this node owns the command's partition at that moment.
 */
const joinGroup = (
  node: Node,
  handlers: ClusterHandlers,
  handle: (payload: Consumed, owns: (partition: number) => boolean) => Effect.Effect<void>
): Effect.Effect<void, ClusterError, Scope.Scope> =>
  Effect.gen(function* () {
    const { kafka, prefix, nodeId, commands, sessionTimeout, heartbeatInterval } = node
    const runPromise = Runtime.runPromise(node.runtime)
    let owned = new Set<number>()
    const revokeAll = () => {
      const lost = [...owned]
      owned = new Set()
      if (lost.length > 0) handlers.onRevoked(lost)
    }
    const joined = yield* Deferred.make<void, ClusterError>()
    const consumer = kafka.consumer({
      groupId: `${prefix}.hosts`,
      sessionTimeout,
      heartbeatInterval,
      // kafkajs heartbeats between fetches: an idle fetch must not outlast the interval
      maxWaitTimeInMs: heartbeatInterval,
      // a node keeps what it owns through a rebalance; round-robin only while a node of an older
      // build, which knows no other, is in the group
      partitionAssigners: [stickyAssigner(() => ({ [commands]: [...owned] })), PartitionAssigners.roundRobin]
    })
    // No revoking at REBALANCING: the host is told only what moves, once the group has decided
    // (`GROUP_JOIN`). A partition's old owner may decide there until it hears, while the new one
    // opens its writer: the writer's fence refuses the old owner's appends from then on.
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      const next = new Set(payload.memberAssignment[commands] ?? [])
      const lost = [...owned].filter((p) => !next.has(p))
      const gained = [...next].filter((p) => !owned.has(p))
      owned = next
      if (lost.length > 0) handlers.onRevoked(lost)
      if (gained.length > 0) handlers.onAssigned(gained)
      member = true
      Deferred.unsafeDone(joined, Exit.void)
    })
    let member = false
    let leaving = false
    /**
     * kafkajs restarts a consumer only after a retriable failure; one that gave up (no group
     * coordinator while the broker restarts) has left the group for good. A node that was a
     * member joins again, until it is stopped: it must own partitions once the broker is back.
     */
    const rejoin = () =>
      setTimeout(() => {
        if (leaving) return
        consumer.connect().then(() => consumer.run(runOptions)).catch((error: unknown) => {
          void runPromise(Effect.logWarning(`node ${nodeId} could not join the cluster again; retrying`, transport("cluster membership")(error)))
          rejoin()
        })
      }, REJOIN_DELAY_MS)
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      // a crashed kafkajs consumer has left the group (it rejoins itself when it restarts)
      revokeAll()
      if (payload.restart) return
      const error = transport("cluster membership")(payload.error)
      if (!member) {
        Deferred.unsafeDone(joined, Exit.fail(error))
        return void runPromise(Effect.logError(`node ${nodeId} could not join the cluster`, error))
      }
      void runPromise(Effect.logError(`node ${nodeId} lost its cluster membership; joining again`, error))
      rejoin()
    })
    yield* Effect.acquireRelease(tryKafka("join", () => consumer.connect()), () =>
      Effect.sync(() => {
        leaving = true
        revokeAll()
      }).pipe(Effect.zipRight(Effect.promise(() => consumer.disconnect().catch(() => undefined))))
    )

    const owns = (partition: number) => owned.has(partition)
    const runOptions = {
      partitionsConsumedConcurrently: node.partitions,
      // A fetched batch's commands are decided together, as the partition's worker batches local
      // ones: one at a time, each waited a whole append, so commands forwarded during a
      // rebalance queued up behind one another for seconds. The batch is committed once every
      // command in it is answered (a crash re-delivers the answered ones; their ids are known).
      autoCommitThreshold: 1,
      eachBatch: async ({ batch, heartbeat }: EachBatchPayload) => {
        await Promise.all(batch.messages.map((message) => runPromise(handle({ partition: batch.partition, message, heartbeat }, owns))))
      }
    }
    yield* tryKafka("join", async () => {
      await consumer.subscribe({ topics: [commands], fromBeginning: true })
      await consumer.run(runOptions)
    })
    yield* Deferred.await(joined)
  })

/** Decides a command consumed from the commands topic and replies to its sender. */
const handleCommand = (
  node: Node,
  handlers: ClusterHandlers,
  reply: Reply,
  { partition, message, heartbeat }: Consumed,
  owns: (partition: number) => boolean
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const replyTo = header(message, REPLY_TO)
    const correlationId = header(message, CORRELATION_ID)
    const command = decodeCommand(message.value?.toString("utf8"))
    if (replyTo === undefined || correlationId === undefined || Either.isLeft(command)) {
      return yield* Effect.logWarning(`skipping a malformed command at ${node.commands}/${partition}@${message.offset}`)
    }
    const envelope: Envelope = owns(partition)
      ? yield* decide(node.heartbeatInterval, handlers, partition, command.right, heartbeat)
      : { ok: false, reason: "not_owner", message: `node ${node.nodeId} no longer owns partition ${partition}` }
    yield* reply(replyTo, correlationId, envelope)
  })

const decide = (
  heartbeatInterval: number,
  handlers: ClusterHandlers,
  partition: number,
  command: RemoteCommand,
  heartbeat: () => Promise<void>
): Effect.Effect<Envelope> =>
  Effect.tryPromise(async () => {
    // kafkajs heartbeats only between messages; a long decision (catching up a partition)
    // must not cost this node its membership
    const keepAlive = setInterval(() => heartbeat().catch(() => undefined), heartbeatInterval)
    try {
      return await handlers.onCommand(partition, command)
    } finally {
      clearInterval(keepAlive)
    }
  }).pipe(
    Effect.match({
      onSuccess: (reply): Envelope => ({ ok: true, reply }),
      onFailure: (error): Envelope => ({ ok: false, reason: "transport", message: transport("command")(error.error).message })
    })
  )

/** Sends a command to its partition's owner and waits for the reply on this node's reply channel. */
const makeSend = (node: Node, producer: Producer, replies: ReplyChannel): ClusterService["send"] =>
  (partition, command, timeoutMs) => {
    const { partitions, commands, replyTopic } = node
    if (!Number.isInteger(partition) || partition < 0 || partition >= partitions) {
      return Effect.fail(new ClusterError({ reason: "transport", message: `no partition ${partition} (of ${partitions})` }))
    }
    const correlationId = randomUUID()
    return Effect.gen(function* () {
      const down = replies.down()
      if (down) return yield* Effect.fail(down)
      const replied = yield* Deferred.make<RemoteReply, ClusterError>()
      replies.pending.set(correlationId, replied)
      yield* tryKafka("send command", () =>
        producer.send({
          topic: commands,
          acks: -1,
          messages: [
            {
              partition,
              key: command.key,
              value: JSON.stringify(command),
              headers: { [REPLY_TO]: replyTopic, [CORRELATION_ID]: correlationId }
            }
          ]
        })
      )
      return yield* Deferred.await(replied)
    }).pipe(
      Effect.timeoutFail({
        duration: timeoutMs,
        onTimeout: () =>
          new ClusterError({ reason: "timeout", message: `no reply for partition ${partition} within ${timeoutMs} ms` })
      }),
      Effect.ensuring(Effect.sync(() => replies.pending.delete(correlationId))),
      Effect.withSpan("Cluster.send", { attributes: { partition } })
    )
  }

/**
 * The members of `<prefix>.hosts` as the group coordinator describes them: a node is named by its
 * client id (`<prefix>.<nodeId>`), its partitions by its assignment of the commands topic.
 */
const describeMembers = (node: Node, admin: Admin): Effect.Effect<ReadonlyArray<ClusterMember>, ClusterError> =>
  tryKafka("describe group", () => admin.describeGroups([`${node.prefix}.hosts`])).pipe(
    Effect.map(({ groups }) =>
      (groups[0]?.members ?? []).map((member) => {
        const assigned = member.memberAssignment.length === 0 ? null : AssignerProtocol.MemberAssignment.decode(member.memberAssignment)
        return {
          nodeId: member.clientId.startsWith(`${node.prefix}.`) ? member.clientId.slice(node.prefix.length + 1) : member.clientId,
          partitions: [...(assigned?.assignment[node.commands] ?? [])].sort((a, b) => a - b)
        }
      })
    ),
    Effect.withSpan("Cluster.members")
  )

export const make = (config: KafkaClusterConfig): Effect.Effect<ClusterService, ClusterError, Scope.Scope> =>
  Effect.gen(function* () {
    const { prefix, partitions, nodeId } = config
    const sessionTimeout = config.sessionTimeoutMs ?? 10_000
    const node: Node = {
      kafka: yield* makeClient(config.brokers, `${prefix}.${nodeId}`),
      runtime: yield* Effect.runtime<never>(),
      prefix,
      partitions,
      nodeId,
      commands: topicsOf(prefix).commands,
      replyTopic: `${prefix}.replies.${nodeId}`,
      sessionTimeout,
      heartbeatInterval: Math.floor(sessionTimeout / 3)
    }
    const { admin, replyStart } = yield* openTopics(node)

    // commands need no idempotent producer: the host decides a command id only once anyway
    const producer = node.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
    yield* Effect.acquireRelease(tryKafka("connect producer", () => producer.connect()), () =>
      Effect.promise(() => producer.disconnect())
    )

    const replies = yield* openReplyChannel(node, replyStart)
    const reply = yield* makeReplier(node.kafka, admin)

    const join: ClusterService["join"] = (handlers) =>
      joinGroup(node, handlers, (payload, owns) => handleCommand(node, handlers, reply, payload, owns))

    return { nodeId, join, send: makeSend(node, producer, replies), members: () => describeMembers(node, admin) } satisfies ClusterService
  })

export const layer = (config: KafkaClusterConfig): Layer.Layer<Cluster, ClusterError> =>
  Layer.scoped(Cluster, make(config))
