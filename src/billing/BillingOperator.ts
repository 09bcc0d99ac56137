/**
 * The operator's side of billing (`svc billing grant|suspend|resume <orgSlug>`): grant credits
 * (the first grant turns metering on) and suspend or resume an organization. No capability does
 * this: an organization never sets its own balance.
 *
 * Unlike `svc issue-key`, which writes keys nobody else has written, these commands go to an
 * organization's billing actor that the running nodes also write (caps, budgets, metering), so
 * they are decided by that key's owner, through an actor host (`operatorHost`).
 */
import { Clock, Effect, Layer, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { BillingActor } from "../../actors/billing/actor.ts"
import { GrantCredits, SetBillingSuspended } from "../../actors/billing/protocol.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import * as ActorHost from "../../streams/ActorHost.ts"
import { Cluster, type ClusterError } from "../../streams/Cluster.ts"
import type { LogError } from "../../streams/EventLog.ts"
import * as KafkaCluster from "../../streams/KafkaCluster.ts"
import * as LocalCluster from "../../streams/LocalCluster.ts"
import * as NodeMetrics from "../../streams/Metrics.ts"
import { actorKinds, logLayer } from "../../bin/App.ts"
import type { AppConfig } from "../platform/Config.ts"
import type { Db } from "../../streams/Db.ts"
import { organizationIdBySlug } from "./Queries.ts"

/** The operator's request cannot be carried out; `reason` says why. */
export class BillingOperatorRefused extends Schema.TaggedError<BillingOperatorRefused>()("BillingOperatorRefused", {
  reason: Schema.Literal("organization_not_found", "invalid_amount"),
  message: Schema.String
}) {}

export interface OperatorBilling {
  readonly orgId: string
  /** Null: unmetered. */
  readonly credits: number | null
  readonly suspended: boolean
}

const organizationOf = (orgSlug: string) =>
  Effect.gen(function* () {
    const orgId = yield* organizationIdBySlug(orgSlug)
    if (orgId === undefined) return yield* new BillingOperatorRefused({ reason: "organization_not_found", message: `no organization ${orgSlug}` })
    return orgId
  })

const operatorMeta = Effect.map(Clock.currentTimeMillis, (now): CommandMeta => ({
  commandId: randomUUID(),
  at: new Date(now).toISOString(),
  actor: "system"
}))

/** The operator's change shows in every read once the command returns (the projection runs behind answers). */
const untilReadable = (host: ActorHost.ActorHostService) =>
  Effect.promise(() => host.awaitProjected(host.unprojected(), OPERATOR_READ_TIMEOUT_MS))

const OPERATOR_READ_TIMEOUT_MS = 30_000

/** Adds `credits` to the organization's balance; an unmetered organization starts from 0. A
 * balance past `MAX_BALANCE` is refused by the actor (`CreditsLimitExceeded`). */
export const grantCredits = Effect.fn("BillingOperator.grantCredits")(function* (orgSlug: string, credits: number) {
  if (!Number.isSafeInteger(credits) || credits <= 0) {
    return yield* new BillingOperatorRefused({ reason: "invalid_amount", message: "credits must be a whole number above 0" })
  }
  const orgId = yield* organizationOf(orgSlug)
  const host = yield* ActorHost.ActorHost
  const { state } = yield* host.send(BillingActor, orgId, new GrantCredits({ orgId, amount: credits }), yield* operatorMeta)
  yield* untilReadable(host)
  return { orgId, credits: state.credits, suspended: state.suspended } satisfies OperatorBilling
})

/** Suspends (every turn is refused with `billing_suspended`) or resumes the organization. */
export const setBillingSuspended = Effect.fn("BillingOperator.setBillingSuspended")(function* (orgSlug: string, suspended: boolean) {
  const orgId = yield* organizationOf(orgSlug)
  const host = yield* ActorHost.ActorHost
  const { state } = yield* host.send(BillingActor, orgId, new SetBillingSuspended({ orgId, suspended }), yield* operatorMeta)
  yield* untilReadable(host)
  return { orgId, credits: state.credits, suspended: state.suspended } satisfies OperatorBilling
})

/**
 * An actor host for the command line. With Kafka it joins no group (joining would move partitions
 * between the running nodes): it owns nothing and sends each command to its key's owner, on a
 * reply topic of its own. With the embedded log there is no one to send to, so it owns every
 * partition, as a node of the embedded log does; should a node run meanwhile, a key both write is
 * kept for the first writer and the other's command fails retryably.
 */
export const operatorHost = (config: AppConfig): Layer.Layer<ActorHost.ActorHost, ClusterError | LogError, Db> => {
  // its own node id: a node's reply topic is deleted when the node leaves
  const nodeId = `svc-cli-${randomUUID().slice(0, 8)}`
  const cluster = config.kafkaBrokers.length > 0
    ? Layer.scoped(
        Cluster,
        Effect.map(
          KafkaCluster.make({ brokers: config.kafkaBrokers, prefix: config.topicPrefix, partitions: config.partitions, nodeId }),
          (kafka) => ({ ...kafka, join: () => Effect.void })
        )
      )
    : LocalCluster.layer(nodeId, config.partitions)
  return ActorHost.layer({ commandTimeoutMs: config.commandTimeoutMs, cachedKeysPerPartition: config.cachedKeysPerPartition }).pipe(
    Layer.provide(Layer.mergeAll(logLayer({ ...config, nodeId }), cluster, Layer.succeed(ActorHost.ActorKinds, actorKinds), NodeMetrics.layer))
  )
}
