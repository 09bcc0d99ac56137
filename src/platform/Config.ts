/**
 * Configuration, read once from the environment. Every variable here is listed, with its
 * default, in the README's configuration table.
 */
import { randomUUID } from "node:crypto"
import { fileURLToPath } from "node:url"
import { GITHUB_RAW_URL, normalizeBaseUrl, OFFICIAL_REGISTRY_URL, type RegistrySettingsService } from "../marketplace/RegistrySettings.ts"
import { hostname } from "node:os"
import { parseDenylist, type PluginSettingsService } from "../marketplace/PluginSettings.ts"
import * as path from "node:path"
import { type LoggingSettings, logLevelNames } from "./Logging.ts"
import { type OutboundAllowEntry, parseOutboundAllow } from "./Outbound.ts"
import type { AuditSettings } from "../../streams/Checkpoints.ts"
import { DEFAULT_APPEND_LINGER_MS } from "../../streams/KafkaLog.ts"

export interface AppConfig {
  /** HTTP port of the gateway. */
  readonly port: number
  readonly host: string
  /** Public base URL written into bootstrap.json; derived from host and port when unset. */
  readonly baseUrl: string
  /** Data directory: embedded Postgres files and bootstrap.json. */
  readonly dataDir: string
  /** Postgres URL; unset means embedded PGlite under the data directory. */
  readonly databaseUrl: string | undefined
  /** Postgres schema of the read models. */
  readonly dbSchema: string
  /** Comma-separated Kafka brokers; unset means the embedded log. */
  readonly kafkaBrokers: ReadonlyArray<string>
  /** Topic prefix: `<prefix>.commands`, `<prefix>.events`. */
  readonly topicPrefix: string
  /** Partition count of the log. */
  readonly partitions: number
  /** This process's id in the cluster. */
  readonly nodeId: string
  /** Consumer-group session timeout: how soon a dead node's partitions move. */
  readonly kafkaSessionTimeoutMs: number
  /** How long a partition writer's Kafka transaction waits for more appends to join it (0: none). */
  readonly kafkaAppendLingerMs: number
  /** Largest JSON body accepted (413 beyond it). */
  readonly maxBodyBytes: number
  /** How long a command waits for its owner's reply before 503. */
  readonly commandTimeoutMs: number
  /**
   * How long a node told to stop (SIGTERM, SIGINT) goes on answering the requests and finishing
   * the turns it took, refusing new ones, before it stops the rest.
   */
  readonly drainTimeoutMs: number
  /** Actor states each owned partition keeps in memory; idle ones beyond reload from Postgres. */
  readonly cachedKeysPerPartition: number
  /** How long the first audit record of a batch waits for others before the append. */
  readonly auditWindowMs: number
  /** How often the node samples the log's throughput and lag for `cluster.get`. */
  readonly clusterSampleMs: number
  /**
   * Count the statements each Postgres pool sends (`svc_db_statements_total`). Off by default: the
   * driver then records a stack trace for every statement, which costs CPU (the work bench turns it on).
   */
  readonly dbStatementCounts: boolean
  /**
   * Fold the log into the read models in a worker thread with its own pool, so the request thread
   * decides and appends only (docs/decisions.md, "Issue 24: projection in a worker"). Only with a
   * DATABASE_URL: embedded PGlite serves one connection, which the worker's pool would break.
   */
  readonly projectionWorker: boolean
  /**
   * Effect spans on the request path (the checkpoint's `Capabilities.invoke`): on with
   * `TRACING=true`, or when any `OTEL_*` variable is set (a tracer to export them is being wired).
   * Off, a request makes no span: without a tracer one costs CPU and says nothing.
   */
  readonly tracing: boolean
  /** Base64 of 32 bytes sealing stored secrets (TOTP, SSO client secrets); unset: `<data dir>/secret.key`. */
  readonly secretKey: string | undefined
  /** The A2A 1.0 card's ES256 key (src/a2a/CardSignature.ts), PKCS#8 PEM or JWK; unset: `<data dir>/a2a-card-signing.pem`. */
  readonly a2aCardSigningKey: string | undefined
  /** Whether the sign-in cookie is marked Secure (off only for plain-http development). */
  readonly secureCookies: boolean
  /** Brute-force protection of passwords, TOTP codes and CLI user codes. */
  readonly lockout: LockoutConfig
  /** Origins whose pages may call MCP, A2A and the discovery documents; `*` opens the documents only. */
  readonly corsOrigins: ReadonlyArray<string>
  /** The built web app the gateway serves at `/` (`npm run build:app` writes it). */
  readonly appDir: string
  /** Where `GET /metrics` listens, apart from the API; unset: nowhere. */
  readonly metrics: { readonly host: string; readonly port: number } | undefined
  /** What the node logs, and how: JSON lines, or readable ones. */
  readonly logging: LoggingSettings
  /** Refused outbound addresses (loopback, private, ...) the operator lets webhooks and plugins reach. */
  readonly outboundAllow: ReadonlyArray<OutboundAllowEntry>
  /** The log's signed checkpoints (docs/audit.md): the Ed25519 key (unset: `<data dir>/audit-signing.key`) and how often. */
  readonly audit: AuditSettings
  readonly assistant: AssistantConfig
  /** What one key or workspace may hold of a process (src/platform/FairShares.ts). */
  readonly fairShares: FairSharesConfig
  /** What the whole node may hold at once (src/platform/Admission.ts, streams/Admission.ts). */
  readonly admission: AdmissionConfig
  /** The master key of plugin secrets (32 bytes, from base64); unset: no secret can be stored. */
  readonly authTokenEncryptionKey: Buffer | undefined
  /** Outbound email of notifications: an SMTP URL (`smtp://user:pass@host:port`, `smtps://...`); unset: no email. */
  readonly mail: { readonly smtpUrl: string | undefined; readonly from: string }
  /** Registries and the catalog (src/marketplace/RegistrySettings.ts): MCP_REGISTRY_URL, GITHUB_RAW_BASE_URL,
   * CATALOG_SYNC_INTERVAL_SECONDS (0: no scheduled sync), CATALOG_SYNC_PAGE_SIZE, CATALOG_SYNC_LEASE_SECONDS. */
  readonly marketplace: RegistrySettingsService
  /** Org listings and plugin credentials (src/marketplace/PluginSettings.ts): PLUGIN_DENYLIST,
   * OAUTH_REFRESH_LEAD_SECONDS, OAUTH_REFRESH_CHECK_SECONDS (0: no refresh watcher). */
  readonly plugins: PluginSettingsService
}

/** Brute-force protection (src/identity/Lockout.ts): failures in a row lock a guard, for longer each time. */
export interface LockoutConfig {
  /** Failures in a row of one account (or one person entering CLI user codes) that lock it. */
  readonly accountFailures: number
  /** Failures in a row from one client address that lock it (several people may share one). */
  readonly addressFailures: number
  /** The first lock; each further failure doubles it. */
  readonly lockMs: number
  /** The longest lock, however many failures. */
  readonly maxLockMs: number
}

/**
 * Fair shares of a process among keys and workspaces (docs/decisions.md, "Fair shares"): beyond the
 * stream and turn bounds 429 `rate_limited`, beyond the schedule bound 409 `schedule_limit_reached`.
 */
export interface FairSharesConfig {
  /** Streams one key (or session) may follow at once: chat turns, A2A message/stream and tasks/resubscribe. */
  readonly streamsPerKey: number
  /** Streams of one workspace, whoever follows them. */
  readonly streamsPerWorkspace: number
  /** Assistant turns (chat and A2A) of one key (or session) running at once. */
  readonly turnsPerKey: number
  /** Assistant turns of one workspace running at once. */
  readonly turnsPerWorkspace: number
  /** Enabled automations with a schedule trigger in one workspace. */
  readonly enabledSchedulesPerWorkspace: number
}

/**
 * Admission control (docs/decisions.md, "Admission control"): what one node holds at once, whoever
 * asks. Past a bound the node answers at once with 503 and `Retry-After`, before any stream opens:
 * `engine_unavailable` for turns and streams, `unavailable` for commands.
 */
export interface AdmissionConfig {
  /** Assistant turns (chat and A2A) admitted and not yet recorded as started. */
  readonly maxTurnsStarting: number
  /** Assistant turns admitted and not yet ended. */
  readonly maxTurnsRunning: number
  /** Streams callers follow: chat turns (stream and ask), A2A message/stream and tasks/resubscribe. */
  readonly maxOpenStreams: number
  /** Commands this node's partition workers hold (queued or being decided), over every partition. */
  readonly maxQueuedCommands: number
}

/** The assistant's operator settings (spec 2.2, 7.1, 8). */
export interface AssistantConfig {
  /** The operator's tiers `fast`, `balanced`, `precise`: model ids (`<family>:<model>`). */
  readonly operatorTiers: Readonly<Record<"fast" | "balanced" | "precise", string>>
  /** The tier a turn uses when neither the request nor the organization names one. */
  readonly defaultTier: "fast" | "balanced" | "precise"
  /** Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio). */
  readonly openaiBaseUrl: string
  readonly openaiApiKey: string | undefined
  readonly anthropicBaseUrl: string | undefined
  readonly anthropicApiKey: string | undefined
  /** Chat requests (stream and ask) a workspace's people may start per minute, per process. */
  readonly chatRateLimitPerMinute: number
  /** Turns (A2A sends, chat stream and ask) one API key may start per minute, across the cluster. */
  readonly keyRateLimitPerMinute: number
  /** The most of a key's minute one node takes at a time from the key's budget actor. */
  readonly keyRateLimitSlice: number
  /** The operator stopped the assistant: every turn is refused with 403 `kill_switch`. */
  readonly killSwitch: boolean
  /** How long a parked tool call waits for its person's decision. */
  readonly approvalTtlMs: number
  /** How long the approval resolve waits for the approved call before it answers `queued` or
   * `dispatched` (docs/decisions.md, "What the approval resolve answers"); 0: it never waits. */
  readonly approvalAnswerWaitMs: number
  /** Largest attachment accepted by the upload route. */
  readonly maxAttachmentBytes: number
  /** The code graph service the `codegraph.search` tool asks; unset: not set up. */
  readonly codegraphUrl: string | undefined
  /** `IMAGE_MODEL`: the images model `image.generate`/`image.create` ask on the OpenAI-compatible
   * endpoint; unset: the offline renderer. */
  readonly imageModel?: string | undefined
  /** `VISION_MODEL`: a vision-capable chat model on the OpenAI-compatible endpoint that
   * `image.analyze` asks to describe an image; unset: the analysis reads the file alone. */
  readonly visionModel?: string | undefined
  /** `VIDEO_MODEL`: the video model `video.generate` asks on the OpenAI-compatible endpoint's
   * Videos API; unset: `video.generate` is 409 `video_provider_unavailable`. */
  readonly videoModel?: string | undefined
}

const int = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined || value === "") return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`${name} must be a positive integer, got '${value}'`)
  return parsed
}

/**
 * An API key's turns a minute across the cluster (docs/decisions.md, "Issue 24"): 6,000 by default,
 * taken by each node a second's worth at a time unless `KEY_RATE_LIMIT_SLICE` says otherwise.
 */
const keyRateLimit = (env: NodeJS.ProcessEnv) => {
  const perMinute = int(env.KEY_RATE_LIMIT_PER_MINUTE, 6000, "KEY_RATE_LIMIT_PER_MINUTE")
  return { keyRateLimitPerMinute: perMinute, keyRateLimitSlice: int(env.KEY_RATE_LIMIT_SLICE, Math.ceil(perMinute / 60), "KEY_RATE_LIMIT_SLICE") }
}

/** A port to listen on: 0 lets the system choose one. */
const portNumber = (value: string, name: string): number => {
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535) throw new Error(`${name} must be a port number (0 to 65535), got '${value}'`)
  return parsed
}

const tierName = (value: string | undefined): "fast" | "balanced" | "precise" => {
  if (value === undefined || value === "") return "balanced"
  if (value === "fast" || value === "balanced" || value === "precise") return value
  throw new Error(`MODEL_DEFAULT_TIER must be fast, balanced or precise, got '${value}'`)
}

const logLevel = (value: string | undefined): LoggingSettings["level"] => {
  if (value === undefined || value === "") return "info"
  const level = logLevelNames.find((name) => name === value.toLowerCase())
  if (level === undefined) throw new Error(`LOG_LEVEL must be one of ${logLevelNames.join(", ")}, got '${value}'`)
  return level
}

const logFormat = (value: string | undefined): LoggingSettings["format"] => {
  if (value === undefined || value === "" || value === "json") return "json"
  if (value === "pretty") return value
  throw new Error(`LOG_FORMAT must be json or pretty, got '${value}'`)
}

/** `*`, or an origin as a browser sends it: scheme, host and port, nothing else. */
const corsOrigin = (entry: string): string => {
  if (entry === "*") return entry
  const url = URL.canParse(entry) ? new URL(entry) : undefined
  if (url === undefined || url.origin === "null" || url.pathname !== "/" || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw new Error(`CORS_ORIGINS entries must be origins such as https://app.example or *, got '${entry}'`)
  }
  return url.origin
}

/** Base64 (or base64url) of exactly 32 bytes: an AES-256 key. */
const aes256Key = (value: string | undefined, name: string): Buffer | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const trimmed = value.trim()
  const key = Buffer.from(trimmed, "base64")
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) || key.length !== 32) {
    throw new Error(`${name} must be the base64 of 32 bytes (a 256-bit key, e.g. \`openssl rand -base64 32\`), got ${key.length} bytes`)
  }
  return key
}

const smtpUrl = (value: string | undefined): string | undefined => {
  if (value === undefined || value === "") return undefined
  const url = URL.canParse(value) ? new URL(value) : undefined
  if (url === undefined || (url.protocol !== "smtp:" && url.protocol !== "smtps:")) throw new Error("SMTP_URL must be an smtp:// or smtps:// URL")
  return value
}

const registryUrl = (value: string | undefined): string => {
  if (value === undefined || value === "") return OFFICIAL_REGISTRY_URL
  const url = normalizeBaseUrl(value)
  if (url === undefined) throw new Error(`MCP_REGISTRY_URL must be an http(s) URL without credentials, query or fragment, got '${value}'`)
  return url
}

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): AppConfig => {
  const port = int(env.PORT, 8080, "PORT")
  const host = env.HOST ?? "0.0.0.0"
  return {
    port,
    host,
    baseUrl: env.BASE_URL ?? `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`,
    dataDir: path.resolve(env.SVC_DATA_DIR ?? "./.svc"),
    databaseUrl: env.DATABASE_URL || undefined,
    dbSchema: env.DB_SCHEMA ?? "public",
    kafkaBrokers: (env.KAFKA_BROKERS ?? "").split(",").map((b) => b.trim()).filter((b) => b !== ""),
    topicPrefix: env.KAFKA_TOPIC_PREFIX ?? "svc",
    partitions: int(env.LOG_PARTITIONS, 12, "LOG_PARTITIONS"),
    nodeId: env.NODE_ID ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    kafkaSessionTimeoutMs: int(env.KAFKA_SESSION_TIMEOUT_MS, 10_000, "KAFKA_SESSION_TIMEOUT_MS"),
    kafkaAppendLingerMs: env.KAFKA_APPEND_LINGER_MS === "0" ? 0 : int(env.KAFKA_APPEND_LINGER_MS, DEFAULT_APPEND_LINGER_MS, "KAFKA_APPEND_LINGER_MS"),
    maxBodyBytes: int(env.MAX_BODY_BYTES, 1_048_576, "MAX_BODY_BYTES"),
    commandTimeoutMs: int(env.COMMAND_TIMEOUT_MS, 15_000, "COMMAND_TIMEOUT_MS"),
    drainTimeoutMs: int(env.DRAIN_TIMEOUT_MS, 30_000, "DRAIN_TIMEOUT_MS"),
    cachedKeysPerPartition: int(env.CACHED_KEYS_PER_PARTITION, 10_000, "CACHED_KEYS_PER_PARTITION"),
    auditWindowMs: int(env.AUDIT_WINDOW_MS, 1, "AUDIT_WINDOW_MS"),
    clusterSampleMs: int(env.CLUSTER_SAMPLE_MS, 5_000, "CLUSTER_SAMPLE_MS"),
    dbStatementCounts: env.DB_STATEMENT_COUNTS === "true",
    projectionWorker: env.PROJECTION_WORKER === "true",
    tracing: env.TRACING === "true" || Object.keys(env).some((name) => name.startsWith("OTEL_")),
    secretKey: env.SECRET_KEY || undefined,
    a2aCardSigningKey: env.A2A_CARD_SIGNING_KEY || undefined,
    secureCookies: env.SECURE_COOKIES !== "false",
    lockout: {
      accountFailures: int(env.LOCKOUT_ACCOUNT_FAILURES, 5, "LOCKOUT_ACCOUNT_FAILURES"),
      addressFailures: int(env.LOCKOUT_ADDRESS_FAILURES, 20, "LOCKOUT_ADDRESS_FAILURES"),
      lockMs: int(env.LOCKOUT_SECONDS, 60, "LOCKOUT_SECONDS") * 1000,
      maxLockMs: int(env.LOCKOUT_MAX_SECONDS, 900, "LOCKOUT_MAX_SECONDS") * 1000
    },
    appDir: env.APP_DIR || fileURLToPath(new URL("../../app/dist", import.meta.url)),
    corsOrigins: (env.CORS_ORIGINS ?? "").split(",").map((o) => o.trim()).filter((o) => o !== "").map(corsOrigin),
    metrics: env.METRICS_PORT ? { host: env.METRICS_HOST || "127.0.0.1", port: portNumber(env.METRICS_PORT, "METRICS_PORT") } : undefined,
    logging: { level: logLevel(env.LOG_LEVEL), format: logFormat(env.LOG_FORMAT) },
    outboundAllow: parseOutboundAllow(env.OUTBOUND_ALLOW),
    audit: {
      signingKey: env.AUDIT_SIGNING_KEY || undefined,
      checkpointEvents: int(env.AUDIT_CHECKPOINT_EVENTS, 1000, "AUDIT_CHECKPOINT_EVENTS"),
      checkpointSeconds: int(env.AUDIT_CHECKPOINT_SECONDS, 60, "AUDIT_CHECKPOINT_SECONDS")
    },
    assistant: {
      operatorTiers: {
        fast: env.MODEL_TIER_FAST ?? "offline:fast",
        balanced: env.MODEL_TIER_BALANCED ?? "offline:balanced",
        precise: env.MODEL_TIER_PRECISE ?? "offline:precise"
      },
      defaultTier: tierName(env.MODEL_DEFAULT_TIER),
      openaiBaseUrl: env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
      openaiApiKey: env.OPENAI_API_KEY || undefined,
      anthropicBaseUrl: env.ANTHROPIC_BASE_URL || undefined,
      anthropicApiKey: env.ANTHROPIC_API_KEY || undefined,
      chatRateLimitPerMinute: int(env.CHAT_RATE_LIMIT_PER_MINUTE, 120, "CHAT_RATE_LIMIT_PER_MINUTE"),
      ...keyRateLimit(env),
      killSwitch: env.ASSISTANT_KILL_SWITCH === "true",
      approvalTtlMs: int(env.APPROVAL_TTL_MS, 24 * 60 * 60 * 1000, "APPROVAL_TTL_MS"),
      approvalAnswerWaitMs: env.APPROVAL_ANSWER_WAIT_MS === "0" ? 0 : int(env.APPROVAL_ANSWER_WAIT_MS, 5_000, "APPROVAL_ANSWER_WAIT_MS"),
      maxAttachmentBytes: int(env.ATTACHMENT_MAX_BYTES, 10 * 1024 * 1024, "ATTACHMENT_MAX_BYTES"),
      codegraphUrl: env.CODEGRAPH_URL || undefined,
      imageModel: env.IMAGE_MODEL || undefined,
      visionModel: env.VISION_MODEL || undefined,
      videoModel: env.VIDEO_MODEL || undefined
    },
    fairShares: {
      streamsPerKey: int(env.STREAMS_PER_KEY, 32, "STREAMS_PER_KEY"),
      streamsPerWorkspace: int(env.STREAMS_PER_WORKSPACE, 128, "STREAMS_PER_WORKSPACE"),
      turnsPerKey: int(env.TURNS_PER_KEY, 32, "TURNS_PER_KEY"),
      turnsPerWorkspace: int(env.TURNS_PER_WORKSPACE, 128, "TURNS_PER_WORKSPACE"),
      enabledSchedulesPerWorkspace: int(env.ENABLED_SCHEDULES_PER_WORKSPACE, 100, "ENABLED_SCHEDULES_PER_WORKSPACE")
    },
    admission: {
      maxTurnsStarting: int(env.ADMISSION_MAX_TURNS_STARTING, 200, "ADMISSION_MAX_TURNS_STARTING"),
      maxTurnsRunning: int(env.ADMISSION_MAX_TURNS_RUNNING, 2_000, "ADMISSION_MAX_TURNS_RUNNING"),
      maxOpenStreams: int(env.ADMISSION_MAX_OPEN_STREAMS, 3_000, "ADMISSION_MAX_OPEN_STREAMS"),
      maxQueuedCommands: int(env.ADMISSION_MAX_QUEUED_COMMANDS, 8_192, "ADMISSION_MAX_QUEUED_COMMANDS")
    },
    authTokenEncryptionKey: aes256Key(env.AUTH_TOKEN_ENCRYPTION_KEY, "AUTH_TOKEN_ENCRYPTION_KEY"),
    mail: { smtpUrl: smtpUrl(env.SMTP_URL), from: env.MAIL_FROM || "svc <notifications@localhost>" },
    marketplace: {
      defaultRegistryUrl: registryUrl(env.MCP_REGISTRY_URL),
      githubRawBaseUrl: env.GITHUB_RAW_BASE_URL || GITHUB_RAW_URL,
      syncIntervalSeconds: env.CATALOG_SYNC_INTERVAL_SECONDS === "0" ? 0 : int(env.CATALOG_SYNC_INTERVAL_SECONDS, 3600, "CATALOG_SYNC_INTERVAL_SECONDS"),
      pageSize: int(env.CATALOG_SYNC_PAGE_SIZE, 100, "CATALOG_SYNC_PAGE_SIZE"),
      leaseMs: int(env.CATALOG_SYNC_LEASE_SECONDS, 120, "CATALOG_SYNC_LEASE_SECONDS") * 1000
    },
    plugins: {
      denylist: parseDenylist(env.PLUGIN_DENYLIST),
      refreshLeadSeconds: int(env.OAUTH_REFRESH_LEAD_SECONDS, 300, "OAUTH_REFRESH_LEAD_SECONDS"),
      refreshCheckSeconds: env.OAUTH_REFRESH_CHECK_SECONDS === "0" ? 0 : int(env.OAUTH_REFRESH_CHECK_SECONDS, 30, "OAUTH_REFRESH_CHECK_SECONDS")
    }
  }
}
