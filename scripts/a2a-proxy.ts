/**
 * A loopback proxy for A2A clients that cannot send credentials (the A2A TCK has no option for
 * them): forwards every request to the platform, adding `Authorization: Bearer <key>` when the
 * request carries no Authorization of its own. A request with its own (say, an invalid one) keeps
 * it, so the platform's answers to bad credentials still reach the client. Responses, SSE
 * included, are streamed back as they come.
 *
 *   A2A_PROXY_TARGET=http://127.0.0.1:8080 A2A_PROXY_KEY=svc_... A2A_PROXY_PORT=9999 tsx scripts/a2a-proxy.ts
 *
 * Start the platform with BASE_URL set to the proxy's URL, so its Agent Card names the proxy.
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

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, host: target.host }
  if (headers.authorization === undefined) headers.authorization = `Bearer ${key}`
  const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers)
    answer.pipe(res)
  })
  upstream.on("error", (error) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" })
    res.end(`a2a-proxy: ${error.message}`)
  })
  req.pipe(upstream)
})

server.listen(port, "127.0.0.1", () => console.log(`a2a-proxy: 127.0.0.1:${port} -> ${target.origin}`))
