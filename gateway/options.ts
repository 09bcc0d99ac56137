/**
 * What the gateway is started with: the node's runtime, registry, metrics and log, and its
 * listener's settings. Its own module, so the route files read it without importing server.ts.
 */
import type { Effect, Exit } from "effect"
import type { Registry } from "../src/checkpoint/Capability.ts"
import type { NodeLog } from "../src/platform/Logging.ts"
import type { MetricsPort } from "../src/platform/Metrics.ts"
import type { Readiness } from "./readiness.ts"

export interface Health {
  readonly status: "ok"
  readonly nodeId: string
  readonly log: { readonly mode: string; readonly partitions: number }
  readonly partitions: { readonly owned: ReadonlyArray<number>; readonly ready: ReadonlyArray<number>; readonly cachedKeys: number }
}

export interface GatewayOptions {
  readonly host: string
  readonly port: number
  readonly maxBodyBytes: number
  /** The public base URL: the MCP endpoint `<baseUrl>/mcp` names itself by it. */
  readonly baseUrl: string
  /** Runs an effect against the application's services. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<Exit.Exit<A, E>>
  readonly health: () => Health
  /** Whether the node takes new requests (false once it drains), and those it is answering. */
  readonly readiness: Readiness
  readonly registry: Registry
  /** Largest attachment the upload route accepts (its body limit is ten of them). */
  readonly maxAttachmentBytes: number
  /** Whether the sign-in cookie is marked Secure. */
  readonly secureCookies: boolean
  /** Origins whose pages may call the CORS routes; `*` opens the public ones only. */
  readonly corsOrigins: ReadonlyArray<string>
  /** The node's metrics: the gateway counts its requests and streams there. */
  readonly metrics: MetricsPort
  /** The node's log: a line per request. */
  readonly log: NodeLog
  /** The built web app (app/dist), served at `/`; undefined serves none. */
  readonly appDir?: string | undefined
}
