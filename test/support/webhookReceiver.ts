/**
 * A real local webhook receiver (node:http on 127.0.0.1) for tests of signed webhooks: it records
 * every delivery as it arrived (headers, raw body) and answers by path, `200 {"received":true}`
 * unless a test gives that path an answer of its own.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface Delivery {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The body exactly as received: what a signature covers. */
  readonly body: string
}

/** How a path answers; it may leave `response` open (a receiver that never answers). */
export type Answer = (delivery: Delivery, response: ServerResponse) => void

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly port: number
  readonly deliveries: ReadonlyArray<Delivery>
  /** Deliveries whose connection the sender closed before the answer was whole. */
  readonly abandoned: ReadonlyArray<Delivery>
  readonly close: () => Promise<void>
}

export const startWebhookReceiver = async (answers: Readonly<Record<string, Answer>> = {}): Promise<WebhookReceiver> => {
  const deliveries: Array<Delivery> = []
  const abandoned: Array<Delivery> = []
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const delivery = { method: request.method ?? "", path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") }
      deliveries.push(delivery)
      response.on("close", () => {
        if (!response.writableFinished) abandoned.push(delivery)
      })
      const answer = answers[delivery.path]
      if (answer !== undefined) return answer(delivery, response)
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ received: true }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    deliveries,
    abandoned,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
