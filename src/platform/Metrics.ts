/**
 * The node's metrics as the gateway sees them: a port. The composition (bin/) fills it from the
 * node's registry (`streams/Metrics.ts`), so the gateway counts its requests and answers scrapes
 * without reaching below src/.
 */
import type { Registry } from "prom-client"

export interface MetricsPort {
  /** Where the gateway registers its own series (requests, open streams). */
  readonly registry: Registry
  /** The bucket bounds every duration histogram of the node shares, in seconds. */
  readonly latencyBuckets: ReadonlyArray<number>
  /** What a scrape of `/metrics` answers: the node's series and the process's. */
  readonly scrape: () => Promise<{ readonly contentType: string; readonly text: string }>
}
