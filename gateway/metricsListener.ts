/**
 * The `/metrics` listener Prometheus scrapes: a port of its own, apart from the API, answering the
 * node's registry with no credential (it is for the operator's network; docs/decisions.md).
 */
import uWS from "uWebSockets.js"
import type { MetricsPort } from "../src/platform/Metrics.ts"
import { route } from "./http.ts"

export interface MetricsListener {
  readonly port: number
  readonly close: () => void
}

/** Serves `GET /metrics` (the node's registry, and the process's) on a listener of its own. */
export const serveMetrics = (options: { readonly host: string; readonly port: number; readonly metrics: MetricsPort }): Promise<MetricsListener> => {
  const app = uWS.App()
  route(app, "get", "/metrics", async () => {
    const { contentType, text } = await options.metrics.scrape()
    return { status: 200, headers: { "content-type": contentType }, text }
  })
  route(app, "any", "/*", async () => ({ status: 404, text: "not found: metrics are at /metrics\n" }))
  return new Promise((resolve, reject) => {
    app.listen(options.host, options.port, (socket) => {
      if (!socket) return reject(new Error(`cannot listen for metrics on ${options.host}:${options.port}`))
      resolve({ port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) })
    })
  })
}
