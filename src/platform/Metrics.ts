/**
 * The node's metrics as the gateway reads them: the latency buckets every duration histogram
 * shares, and what a scrape answers. Both are owned by `streams/Metrics.ts`; the gateway reaches
 * them through here, never below src/.
 */
export { exposition, LATENCY_BUCKETS } from "../../streams/Metrics.ts"
