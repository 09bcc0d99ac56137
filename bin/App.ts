/**
 * The platform's layers, composed: Postgres, the log (Kafka when brokers are named, else the
 * embedded table), the cluster, the actor host and the capability registry.
 */
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { AgentActor } from "../actors/agent/actor.ts"
import { SkillActor } from "../actors/skill/actor.ts"
import { ApiKeyActor } from "../actors/apikey/actor.ts"
import { AuditActor } from "../actors/audit/actor.ts"
import { BillingActor } from "../actors/billing/actor.ts"
import { ClaimActor } from "../actors/claim/actor.ts"
import { ConversationActor } from "../actors/conversation/actor.ts"
import { DeviceActor } from "../actors/device/actor.ts"
import { FileActor } from "../actors/file/actor.ts"
import { GuardActor } from "../actors/guard/actor.ts"
import { KeyBudgetActor } from "../actors/keybudget/actor.ts"
import { kindRegistry } from "../actors/kernel.ts"
import { FleetActor } from "../actors/fleet/actor.ts"
import { WorkOrderActor } from "../actors/workorder/actor.ts"
import { MachineActor } from "../actors/machine/actor.ts"
import { ModelsActor } from "../actors/models/actor.ts"
import { NodeActor } from "../actors/node/actor.ts"
import { OrgActor } from "../actors/org/actor.ts"
import { SchemaActor } from "../actors/schema/actor.ts"
import { SessionActor } from "../actors/session/actor.ts"
import { TelemetryActor } from "../actors/telemetry/actor.ts"
import { UserActor } from "../actors/user/actor.ts"
import * as ActorHost from "../streams/ActorHost.ts"
import { Cluster, type ClusterError } from "../streams/Cluster.ts"
import { type EventLog, LogError } from "../streams/EventLog.ts"
import { type Generation, type LayoutPlace, resolveLayout } from "../streams/Layout.ts"
import * as EmbeddedLog from "../streams/EmbeddedLog.ts"
import * as KafkaCluster from "../streams/KafkaCluster.ts"
import * as KafkaLog from "../streams/KafkaLog.ts"
import * as LocalCluster from "../streams/LocalCluster.ts"
import * as LogSignals from "../streams/LogSignals.ts"
import * as NodeMetrics from "../streams/Metrics.ts"
import * as AccessCache from "../src/checkpoint/AccessCache.ts"
import * as Outbound from "../src/platform/Outbound.ts"
import * as PackRegistry from "../src/packs/Registry.ts"
import * as Entitlement from "../src/packs/Entitlement.ts"
import { Capabilities, makeRegistry } from "../src/checkpoint/Capability.ts"
import { accountCapabilities } from "../src/identity/Account.ts"
import { agentCapabilities } from "../src/assistant/Agents.ts"
import { skillCapabilities } from "../src/assistant/Skills.ts"
import { attachmentCapabilities } from "../src/assistant/Attachments.ts"
import { mediaCapabilities } from "../src/media/Media.ts"
import { auditCapabilities } from "../src/audit/Audit.ts"
import { auditExportCapabilities } from "../src/audit/AuditExport.ts"
import { erasureCapabilities } from "../src/audit/Erasure.ts"
import { runReplayCapabilities } from "../src/audit/RunReplay.ts"
import { clusterCapabilities } from "../src/cluster/Cluster.ts"
import * as Presence from "../src/cluster/Presence.ts"
import * as Throughput from "../src/cluster/Throughput.ts"
import { billingCapabilities } from "../src/billing/Billing.ts"
import { deviceCapabilities } from "../src/identity/Device.ts"
import { identityCapabilities } from "../src/identity/Identity.ts"
import { keyCapabilities } from "../src/identity/Keys.ts"
import { machineCapabilities } from "../src/identity/Machines.ts"
import { modelCapabilities } from "../src/assistant/ModelTiers.ts"
import { nodeCapabilities } from "../src/nodes/Nodes.ts"
import { organizationCapabilities, PublicUrl } from "../src/identity/Organization.ts"
import { systemCapabilities } from "../src/checkpoint/System.ts"
import type { AppConfig } from "../src/platform/Config.ts"
import * as Db from "../streams/Db.ts"
import { ProjectionRunner, spawn } from "../streams/ProjectionWorker.ts"
import { signerLayer } from "../streams/Checkpoints.ts"
import { cardSignerLayer } from "../src/a2a/CardSignature.ts"
import { secretsLayer } from "../src/platform/Secrets.ts"
import { AssistantSettings } from "../src/assistant/Settings.ts"
import * as FairShares from "../src/platform/FairShares.ts"
import * as NodeAdmission from "../src/platform/Admission.ts"
import { fileContentsLayer } from "../src/assistant/Files.ts"
import * as AuditLog from "../src/audit/AuditLog.ts"
import { Lockout } from "../src/identity/Lockout.ts"
import * as KeyRotations from "../src/identity/KeyRotations.ts"
import { chargesLayer } from "../src/billing/TurnCharges.ts"
import { chatRateLimiterLayer } from "../src/assistant/RateLimit.ts"
import { keyRateLimiterLayer } from "../src/assistant/KeyRateLimit.ts"
import * as TurnRegistry from "../src/assistant/TurnRegistry.ts"
import { assistantCapabilities } from "../src/assistant/Assistant.ts"
import { uiChatCapabilities } from "../src/assistant/UiChat.ts"
import { agUiCapabilities } from "../src/assistant/AgUiRun.ts"
import { codegraphCapabilities } from "../src/packs/Codegraph.ts"
import { a2aCapabilities } from "../src/a2a/Methods.ts"
import { A2aTaskActor } from "../actors/a2atask/actor.ts"
import { AutomationActor } from "../actors/automation/actor.ts"
import { AutomationRunActor } from "../actors/automationrun/actor.ts"
import { automationCapabilities } from "../src/automations/Automations.ts"
import { notificationCapabilities } from "../src/notifications/Notifications.ts"
import * as Automations from "../src/automations/Engine.ts"
import { RegistryActor } from "../actors/registry/actor.ts"
import { pluginCatalogCapabilities } from "../src/marketplace/PluginCatalog.ts"
import * as RegistrySchedule from "../src/marketplace/RegistrySchedule.ts"
import { RegistrySettings } from "../src/marketplace/RegistrySettings.ts"
import * as CatalogCache from "../src/marketplace/CatalogCache.ts"
import * as Envelope from "../src/marketplace/Envelope.ts"
import { ListingActor } from "../actors/listing/actor.ts"
import { pluginListingCapabilities } from "../src/marketplace/PluginListings.ts"
import { pluginWorkspaceCapabilities } from "../src/marketplace/PluginWorkspace.ts"
import { pluginCredentialCapabilities } from "../src/marketplace/PluginCredentials.ts"
import { CredentialActor } from "../actors/credential/actor.ts"
import { PluginSettings } from "../src/marketplace/PluginSettings.ts"
import * as RefreshWatcher from "../src/marketplace/RefreshWatcher.ts"
import * as Mail from "../src/platform/Mail.ts"
import { NotificationActor } from "../actors/notification/actor.ts"
import { McpAuthAlertsActor } from "../actors/authalerts/actor.ts"
import { DocumentActor } from "../actors/document/actor.ts"
import { documentCapabilities } from "../src/documents/Documents.ts"
import { documentsPackCapabilities } from "../src/documents/DocumentsPack.ts"
import { conversationCapabilities } from "../src/assistant/Conversations.ts"

export const actorKinds = kindRegistry([OrgActor, UserActor, ApiKeyActor, AuditActor, SchemaActor, NodeActor, SessionActor, ClaimActor, MachineActor, FleetActor, WorkOrderActor, TelemetryActor, DeviceActor, ModelsActor, FileActor, ConversationActor, BillingActor, A2aTaskActor, GuardActor, KeyBudgetActor, AgentActor, SkillActor, AutomationActor, AutomationRunActor, RegistryActor, NotificationActor, McpAuthAlertsActor, ListingActor, CredentialActor, DocumentActor])

export const registry = makeRegistry([...identityCapabilities, ...nodeCapabilities, ...machineCapabilities, ...keyCapabilities, ...accountCapabilities, ...auditCapabilities, ...auditExportCapabilities, ...erasureCapabilities, ...runReplayCapabilities, ...clusterCapabilities, ...systemCapabilities, ...organizationCapabilities, ...deviceCapabilities, ...modelCapabilities, ...attachmentCapabilities, ...mediaCapabilities, ...billingCapabilities, ...assistantCapabilities, ...uiChatCapabilities, ...agUiCapabilities, ...conversationCapabilities, ...codegraphCapabilities, ...a2aCapabilities, ...agentCapabilities, ...skillCapabilities, ...automationCapabilities, ...pluginCatalogCapabilities, ...pluginListingCapabilities, ...pluginWorkspaceCapabilities, ...pluginCredentialCapabilities, ...notificationCapabilities, ...documentCapabilities, ...documentsPackCapabilities])

/** The embedded log lives beside the read models, in a schema a replay never drops. */
export const logSchemaOf = (schema: string) => (schema === "public" ? "svc_log" : `${schema}_log`)

export type LogSettings = Pick<AppConfig, "dbSchema" | "kafkaBrokers" | "topicPrefix" | "partitions" | "nodeId" | "kafkaAppendLingerMs">

/** Where the log's layout (its generations, `streams/Layout.ts`) is recorded, on the pool given. */
export const layoutPlace = (config: Pick<AppConfig, "dbSchema" | "kafkaBrokers" | "topicPrefix">, sql: Db.DbService["sql"]): LayoutPlace =>
  config.kafkaBrokers.length > 0
    ? { sql, schema: logSchemaOf(config.dbSchema), log: `kafka:${config.topicPrefix}`, baseName: config.topicPrefix, mode: "kafka" }
    : { sql, schema: logSchemaOf(config.dbSchema), log: "embedded", baseName: logSchemaOf(config.dbSchema), mode: "embedded" }

/**
 * The generation of the log in use (`streams/Layout.ts`), refused when LOG_PARTITIONS is not its
 * partition count: a node never runs on a layout other than the one the log has.
 */
export const layoutInUse = (config: LogSettings) =>
  Effect.flatMap(Db.Db, (db) => resolveLayout(layoutPlace(config, db.sql), config.partitions)).pipe(
    Effect.mapError((e) => new LogError({ operation: "read the log layout", message: e.message, cause: e }))
  )

/** One generation's log (its name: the embedded log's schema, or the topic prefix). */
export const generationLogLayer = (config: LogSettings, generation: Pick<Generation, "name" | "partitions">) =>
  config.kafkaBrokers.length > 0
    ? KafkaLog.layer({
        brokers: config.kafkaBrokers,
        prefix: generation.name,
        partitions: generation.partitions,
        clientId: config.nodeId,
        lingerMs: config.kafkaAppendLingerMs
      })
    : EmbeddedLog.layer({ logSchema: generation.name, partitions: generation.partitions })

/** The log alone (the replay tool reads it without joining the cluster): the generation in use. */
export const logLayer = (config: LogSettings): Layer.Layer<EventLog, LogError, Db.Db> =>
  Layer.unwrapEffect(Effect.map(layoutInUse(config), (generation) => generationLogLayer(config, generation)))

export const clusterLayer = (config: LogSettings & Pick<AppConfig, "kafkaSessionTimeoutMs">): Layer.Layer<Cluster, ClusterError | LogError, Db.Db> =>
  Layer.unwrapEffect(Effect.map(layoutInUse(config), (generation) =>
    config.kafkaBrokers.length > 0
      ? KafkaCluster.layer({
          brokers: config.kafkaBrokers,
          prefix: generation.name,
          partitions: generation.partitions,
          nodeId: config.nodeId,
          sessionTimeoutMs: config.kafkaSessionTimeoutMs
        })
      : LocalCluster.layer(config.nodeId, generation.partitions)))

/** What the projection worker (`bin/projectionWorker.ts`) is started with. */
export interface ProjectionWorkerData extends LogSettings {
  readonly url: string
  /** The worker's pool size: the batches it folds one at a time, and its reads of the log. */
  readonly poolSize: number
}

/**
 * The projection worker (`PROJECTION_WORKER=true`, with a DATABASE_URL only: PGlite serves one
 * connection, which a second pool would break): none otherwise, and the actor host projects in
 * its own thread.
 */
const projectionWorkerLayer = (config: AppConfig, databaseUrl: string, poolSize: number): Layer.Layer<ProjectionRunner> => {
  if (!config.projectionWorker || config.databaseUrl === undefined) return Layer.empty as Layer.Layer<ProjectionRunner>
  const workerData: ProjectionWorkerData = {
    url: databaseUrl,
    poolSize,
    dbSchema: config.dbSchema,
    kafkaBrokers: config.kafkaBrokers,
    topicPrefix: config.topicPrefix,
    partitions: config.partitions,
    nodeId: config.nodeId,
    kafkaAppendLingerMs: config.kafkaAppendLingerMs
  }
  return Layer.scoped(
    ProjectionRunner,
    Effect.flatMap(EmbeddedLog.Appends, (appends) => spawn(new URL("./projectionWorker.ts", import.meta.url), workerData, appends))
  ).pipe(Layer.provide(EmbeddedLog.appendsLayer))
}

/** Everything a node runs, given the Postgres URL to use. */
export const appLayer = (config: AppConfig, databaseUrl: string, poolSize: number, projectionPoolSize: number) => {
  const db = Db.layer({ url: databaseUrl, schema: config.dbSchema, max: poolSize, projectionMax: projectionPoolSize, countStatements: config.dbStatementCounts, node: config.nodeId })
  const base = Layer.mergeAll(
    logLayer(config),
    projectionWorkerLayer(config, databaseUrl, projectionPoolSize),
    clusterLayer(config),
    Layer.succeed(ActorHost.ActorKinds, actorKinds),
    Layer.succeed(Capabilities, registry),
    PackRegistry.layer(registry),
    Layer.succeed(PublicUrl, config.baseUrl),
    Layer.succeed(AssistantSettings, config.assistant),
    FairShares.layer(config.fairShares),
    Layer.succeed(Lockout, config.lockout),
    Outbound.layer(config.outboundAllow),
    Layer.succeed(RegistrySettings, config.marketplace),
    CatalogCache.layer,
    Layer.succeed(PluginSettings, config.plugins),
    secretsLayer(config.secretKey, config.dataDir),
    Envelope.layer(config.authTokenEncryptionKey),
    Mail.layer(config.mail),
    signerLayer(config.audit, config.dataDir),
    cardSignerLayer(config.a2aCardSigningKey, config.dataDir),
    fileContentsLayer,
    AccessCache.layer,
    NodeMetrics.layer
  ).pipe(Layer.provideMerge(db))
  const sampled = Throughput.layer(config.clusterSampleMs).pipe(Layer.provideMerge(base))
  // the audit writer appends through the actor host's partition writers (the hash chain's one writer)
  const host = Layer.mergeAll(
    AuditLog.layer({ windowMs: config.auditWindowMs, timeoutMs: config.commandTimeoutMs }),
    LogSignals.layer,
    NodeAdmission.layer(config.admission)
  ).pipe(
    Layer.provideMerge(ActorHost.layer({
      commandTimeoutMs: config.commandTimeoutMs,
      cachedKeysPerPartition: config.cachedKeysPerPartition,
      maxQueuedCommands: config.admission.maxQueuedCommands,
      // a node that lost its partition to a rebalance hears it at its next heartbeat (a third of the session timeout)
      fencedWriterGraceMs: config.kafkaSessionTimeoutMs / 2
    })),
    Layer.provideMerge(sampled)
  )
  // the assistant's turns stop (and record how they ended) before the host they report to
  const charged = chargesLayer.pipe(Layer.provideMerge(host))
  const services = Layer.mergeAll(TurnRegistry.layer(Presence.goneAfterMs(config.clusterSampleMs)), chatRateLimiterLayer, keyRateLimiterLayer, KeyRotations.layer, RegistrySchedule.layer, RefreshWatcher.layer, Entitlement.layer).pipe(Layer.provideMerge(charged))
  // a node removes its report as it stops, before the services it reads
  const reported = Presence.layer(config.clusterSampleMs).pipe(Layer.provideMerge(services))
  // runs call capabilities and turns: the engine stops before what they need
  return Automations.layer.pipe(Layer.provideMerge(reported))
}

/**
 * An actor host for the command line. With Kafka it joins no group (joining would move partitions
 * between the running nodes): it owns nothing and sends each command to its key's owner, on a
 * reply topic of its own. With the embedded log there is no one to send to, so it owns every
 * partition, as a node of the embedded log does; should a node run meanwhile, a key both write is
 * kept for the first writer and the other's command fails retryably.
 */
export const operatorHost = (config: AppConfig): Layer.Layer<ActorHost.ActorHost, ClusterError | LogError, Db.Db> => {
  // its own node id: a node's reply topic is deleted when the node leaves
  const nodeId = `svc-cli-${randomUUID().slice(0, 8)}`
  const cluster = Layer.unwrapEffect(Effect.map(layoutInUse(config), (generation) =>
    config.kafkaBrokers.length > 0
      ? Layer.scoped(
          Cluster,
          Effect.map(
            KafkaCluster.make({ brokers: config.kafkaBrokers, prefix: generation.name, partitions: generation.partitions, nodeId }),
            (kafka) => ({ ...kafka, join: () => Effect.void })
          )
        )
      : LocalCluster.layer(nodeId, generation.partitions)))
  return ActorHost.layer({ commandTimeoutMs: config.commandTimeoutMs, cachedKeysPerPartition: config.cachedKeysPerPartition }).pipe(
    Layer.provide(Layer.mergeAll(logLayer({ ...config, nodeId }), cluster, Layer.succeed(ActorHost.ActorKinds, actorKinds), NodeMetrics.layer))
  )
}
