/**
 * A loopback proxy for A2A clients that cannot send credentials (the A2A TCK has no option for
 * them): forwards every request to the platform, adding `Authorization: Bearer <key>` when the
 * request carries no Authorization of its own. A request with its own (say, an invalid one) keeps
 * it, so the platform's answers to bad credentials still reach the client. The public Agent Card
 * is served with the proxy's origin in its `url`, so a client that follows the card stays on the
 * proxy; every other response, SSE included, is streamed back as it comes.
 *
 *   A2A_PROXY_TARGET=http://127.0.0.1:8080 A2A_PROXY_KEY=svc_... A2A_PROXY_PORT=9999 tsx scripts/a2a-proxy.ts
 */
import http from "node:http"

const required = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`a2a-proxy: set ${name}`)
  return value
}

const target = new URL(required("A2A_PROXY_TARGET"))
const key = required("A2A_PROXY_KEY")
const port = Number(required("A2A_PROXY_PORT"))
const origin = `http://127.0.0.1:${port}`

const CARD_PATH = "/.well-known/agent-card.json"

/** `address` on the proxy's origin. */
const proxied = (address: string) => {
  const url = new URL(address)
  return `${origin}${url.pathname}${url.search}`
}

/**
 * The card with the proxy's origin in its `url` (0.3) and in each of its `supportedInterfaces`
 * (1.0's card has those only; the 1.0 TCK follows them); anything that is not a card, as it came.
 * Its signatures no longer match: no TCK client checks them.
 */
const proxiedCard = (body: Buffer): Buffer => {
  try {
    const card = JSON.parse(body.toString("utf8"))
    const hasUrl = typeof card?.url === "string"
    const hasInterfaces = Array.isArray(card?.supportedInterfaces)
    if (!hasUrl && !hasInterfaces) return body
    return Buffer.from(JSON.stringify({
      ...card,
      ...(hasUrl ? { url: proxied(card.url) } : {}),
      ...(hasInterfaces ? { supportedInterfaces: card.supportedInterfaces.map((entry: { url: string }) => ({ ...entry, url: proxied(entry.url) })) } : {})
    }))
  } catch {
    return body
  }
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, host: target.host }
  if (headers.authorization === undefined) headers.authorization = `Bearer ${key}`
  const isCard = req.method === "GET" && new URL(req.url ?? "/", origin).pathname === CARD_PATH
  const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
    if (!isCard) {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
      return
    }
    const chunks: Array<Buffer> = []
    answer.on("data", (chunk: Buffer) => chunks.push(chunk))
    answer.on("end", () => {
      const body = proxiedCard(Buffer.concat(chunks))
      const { "transfer-encoding": _chunked, ...rest } = answer.headers
      res.writeHead(answer.statusCode ?? 502, { ...rest, "content-length": String(body.length) })
      res.end(body)
    })
  })
  upstream.on("error", (error) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" })
    res.end(`a2a-proxy: ${error.message}`)
  })
  req.pipe(upstream)
})

server.listen(port, "127.0.0.1", () => console.log(`a2a-proxy: ${origin} -> ${target.origin}`))
